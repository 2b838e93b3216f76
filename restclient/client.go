package restclient

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
)

// Client sends requests to Connect workers. The zero value works: system
// roots for https, 5 s per attempt of a read, no retries of a read, the
// system clock; writes (Write) are repeated within their deadline.
type Client struct {
	// TLS is the client configuration for https (Connect's REST client
	// settings: listeners.https.ssl.* or ssl.*); nil means the system
	// roots. An empty ServerName is set per request to the target's host
	// (unless verification is off); a set one is kept, for a local address
	// whose certificate names the advertised host.
	TLS *tls.Config
	// Timeout bounds one attempt: connect, TLS handshake and the response
	// headers (0: 5s).
	Timeout time.Duration
	// Retries is how many times a failed attempt is repeated: connection
	// errors, 429 and 5xx answers other than 501, never certificate
	// errors, which do not heal.
	Retries int
	// Clock paces the pause between attempts (Get: 200 ms, doubling up to
	// 1 s; Write: see Write); nil means the system clock.
	Clock clock.Clock
	// WriteTimeout bounds one attempt of a Write, from the request to the
	// answer's headers (0: DefaultWriteTimeout, above the 90 s a Connect
	// worker waits for the leader it forwards a write to).
	WriteTimeout time.Duration
	// Unreachable is how long Write keeps repeating a write to a worker
	// that does not accept connections at all (0: DefaultUnreachable).
	Unreachable time.Duration
	// Random is the source of the writes' backoff jitter, in [0, 1); nil
	// means math/rand/v2. Tests make it fixed.
	Random func() float64
	// Log receives one debug line per failed attempt; nil discards.
	Log *slog.Logger
	// Auth is sent with every request (settings CONNECT_INIT_REST_*); the
	// zero value sends no credentials.
	Auth Auth
}

// Response is a worker's answer.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// StatusText is the status line's text ("503 Service Unavailable").
	StatusText string
	// Body is the first 64 KiB of the body.
	Body []byte
}

const (
	defaultTimeout = 5 * time.Second
	maxBody        = 64 << 10
)

func (c *Client) timeout() time.Duration {
	if c.Timeout <= 0 {
		return defaultTimeout
	}
	return c.Timeout
}

// Get requests path (relative, e.g. "health"; "" for /) from t. When dial
// is non-nil that address is connected to instead of resolving t.Host, so
// that the resolved address is the one tested; the Host header and the TLS
// server name stay t.Host. No proxy is used: a proxy would test the proxy.
// The last attempt's answer is returned; an answer of any status is not an
// error.
func (c *Client) Get(ctx context.Context, t Target, path string, dial net.IP) (Response, error) {
	hc, done := c.httpClient(t, dial, c.timeout())
	defer done()
	return c.send(ctx, hc, http.MethodGet, t.Base()+strings.TrimPrefix(path, "/"), nil, maxBody, c.getPolicy())
}

// httpClient is the HTTP client for one request to t (dialing dial when
// non-nil): no proxy, no keep-alive, the client's TLS settings with t.Host
// as the server name; connect and handshake within Timeout, the answer
// within answer. done releases its connections.
func (c *Client) httpClient(t Target, dial net.IP, answer time.Duration) (hc *http.Client, done func()) {
	timeout := c.timeout()
	dialer := &net.Dialer{Timeout: timeout}
	tr := &http.Transport{
		Proxy:                 nil,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: answer,
		DisableKeepAlives:     true,
	}
	if dial != nil {
		addr := net.JoinHostPort(dial.String(), t.Port)
		tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		}
	} else {
		tr.DialContext = dialer.DialContext
	}
	if t.Scheme == "https" {
		cfg := &tls.Config{}
		if c.TLS != nil {
			cfg = c.TLS.Clone()
		}
		if !cfg.InsecureSkipVerify && cfg.ServerName == "" {
			cfg.ServerName = t.Host
		}
		tr.TLSClientConfig = cfg
	}
	return &http.Client{Transport: tr, Timeout: answer}, tr.CloseIdleConnections
}

// once sends one request, never repeated; a body longer than limit is an
// error, never silently cut.
func (c *Client) once(ctx context.Context, hc *http.Client, method, u string, body []byte, limit int64) (Response, error) {
	never := policy{check: func(context.Context, *http.Response, error) (bool, error) { return false, nil }, pause: func(int) time.Duration { return 0 }}
	return c.send(ctx, hc, method, u, body, limit, never)
}

func (c *Client) logger() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

// Connect opens a TCP connection to t's host:port and closes it, bounded
// by the client's Timeout. It speaks no HTTP: for doctor, a worker that
// accepts connections but does not answer is busy, not misaddressed. The
// error is the dialler's, for the caller to explain.
func (c *Client) Connect(ctx context.Context, t Target) error {
	d := net.Dialer{Timeout: c.timeout()}
	conn, err := d.DialContext(ctx, "tcp", t.HostPort())
	if err != nil {
		return err
	}
	return conn.Close()
}

// Resolver is the part of *net.Resolver that name lookups need.
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}

// Resolve looks host up once with r (nil: the system resolver), bounded by
// timeout; an IP literal resolves to itself. The error is the resolver's,
// for the caller to explain.
func Resolve(ctx context.Context, r Resolver, host string, timeout time.Duration) ([]string, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []string{ip.String()}, nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return r.LookupHost(rctx, host)
}

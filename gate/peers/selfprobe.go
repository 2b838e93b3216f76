package peers

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
)

// Statuses of the self-probe (in addition to StatusSelf, StatusUnresolved,
// StatusUnreachable and StatusInvalid).
const (
	// StatusOtherHost: a request to our advertised URL was answered by a
	// server that does not hold our token: another task behind a virtual
	// IP or a round-robin name, a stale record, another container.
	StatusOtherHost Status = "other-host"
	// StatusRefused: a request to our advertised URL was refused: the name
	// leads to a host where nothing listens on the advertised port (or
	// only some requests reached us).
	StatusRefused Status = "refused"
	// StatusPortTaken: the port the worker will bind is already taken in
	// this container, so the worker could not start its REST server.
	StatusPortTaken Status = "port-taken"
)

// TokenHeader carries the self-probe's token in its answers.
const TokenHeader = "Connect-Init-Self-Probe"

// selfProbeBody is what the self-probe serves on every path, with 503
// Service Unavailable: the port answers, but no worker is behind it yet.
// Connect's own /health answers 503 while the worker starts, so whatever
// polls the port in that moment (a lock waiter judging this holder, a
// Docker or Kubernetes health check, a test) reads "not ready". An answer
// of 200 let a lock waiter take this holder for ready before its worker
// had started.
const selfProbeBody = `{"status":"starting","message":"connect-init is checking this worker's advertised URL; the Connect worker has not started yet","connect_init":"self-probe"}`

// isSelfProbeAnswer reports whether body is another connect-init's
// self-probe: its host is reachable at that URL, and its worker is about
// to start there.
func isSelfProbeAnswer(body []byte) bool {
	return strings.Contains(string(body), `"connect_init":"self-probe"`)
}

// SelfProbe configures the own-URL check: connect-init binds the worker's
// own REST listener for a moment, serves a random token on it, and requests
// the advertised URL several times, each on a new connection, resolving the
// name each time the way other workers will. Only when every answer carries
// the token do other workers reach this container at that URL. Its zero
// value binds every interface at the advertised port over plain http.
type SelfProbe struct {
	// Listen is the address the worker will bind for its advertised
	// listener (workerconfig.RESTListener.Address); "" is every interface
	// at the advertised URL's port.
	Listen string
	// Listeners is the worker's listeners setting, quoted in errors.
	Listeners string
	// ServerTLS serves an https listener (ServerTLSConfig: the worker's
	// listeners.https.* key store). Required when the listener is https.
	ServerTLS *tls.Config
	// HTTPS says that the listener is https (the advertised scheme).
	HTTPS bool
	// Requests is how many requests one round sends (0: 8). Eight new
	// connections through a virtual IP balancing over two tasks all reach
	// the same task with probability 1/128 under random balancing, never
	// under round robin.
	Requests int
	// Token returns the random token; nil: 16 bytes of crypto/rand.
	Token func() (string, error)
	// Clock paces the rounds; nil is the system clock.
	Clock clock.Clock
	// Settle is how long the self-probe keeps passing, round after round,
	// before its pass counts, when the advertised name is a Swarm service's
	// (tasks.<name> resolves): 0 is DefaultSettle, negative none. Swarm
	// starts a service's replicas together, but their DNS records appear
	// one by one as their containers start; a task checked before its
	// siblings' records exist sees the name lead to it alone, and passed
	// (issue 41). Its siblings, starting within this window, make a later
	// round fail.
	Settle time.Duration
	// Dial connects one self-request to one address; nil is a net.Dialer
	// bounded by the probe timeout. Tests give the failures no loopback
	// address can (a timeout, no route to host).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

const defaultSelfRequests = 8

// DefaultSettle is SelfProbe.Settle's default: the spread of the starts of
// one service's replicas seen on a loaded 2-core machine (docs/containers.md
// says what it covers and what it does not), with a margin.
const DefaultSettle = 5 * time.Second

func (s SelfProbe) settle() time.Duration {
	switch {
	case s.Settle < 0:
		return 0
	case s.Settle == 0:
		return DefaultSettle
	}
	return s.Settle
}

func (s SelfProbe) requests() int {
	if s.Requests <= 0 {
		return defaultSelfRequests
	}
	return s.Requests
}

func (s SelfProbe) clock() clock.Clock { return clock.Or(s.Clock) }

func (s SelfProbe) token() (string, error) {
	if s.Token != nil {
		return s.Token()
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random token for the self-probe: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// selfServer is the token server on the worker's listener.
type selfServer struct {
	srv  *http.Server
	addr string
	done chan struct{}
}

// listenSelf binds addr and serves token there. A taken port is a
// StatusPortTaken result naming the port and, when /proc tells, its holder.
func (s SelfProbe) listenSelf(addr, token string) (*selfServer, *PeerResult) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		r := &PeerResult{Status: StatusInvalid}
		_, port, _ := net.SplitHostPort(addr)
		if errors.Is(err, syscall.EADDRINUSE) {
			r.Status = StatusPortTaken
			holder := ""
			if n, perr := strconv.Atoi(port); perr == nil {
				if h := portHolder(n); h != "" {
					holder = "; it is held by " + h
				}
			}
			r.Error = fmt.Sprintf("port %s, which the worker will bind for its REST listener (%s), is already taken in this container%s: %v", port, s.listenersText(addr), holder, err)
			r.Fix = "stop what listens on port " + port + " in this container, or give the worker another port in listeners (CONNECT_LISTENERS) and rest.advertised.port"
		} else {
			r.Error = fmt.Sprintf("cannot listen on %s, the worker's REST listener (%s): %v", addr, s.listenersText(addr), err)
			r.Fix = "listeners (CONNECT_LISTENERS) must name an address of this container, or no host to bind every interface"
		}
		return nil, r
	}
	if s.HTTPS {
		if s.ServerTLS == nil {
			l.Close()
			return nil, &PeerResult{Status: StatusInvalid, Error: "the advertised listener is https but no key store was given to serve it",
				Fix: "set listeners.https.ssl.keystore.* (CONNECT_LISTENERS_HTTPS_SSL_KEYSTORE_*) or ssl.keystore.*"}
		}
		l = tls.NewListener(l, s.ServerTLS)
	}
	ss := &selfServer{addr: l.Addr().String(), done: make(chan struct{})}
	ss.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set(TokenHeader, token)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, selfProbeBody)
		}),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // TLS handshakes of peers that distrust us are reported by them
	}
	go func() {
		defer close(ss.done)
		ss.srv.Serve(l)
	}()
	return ss, nil
}

// close stops the server and waits until its listener is closed, so the
// worker can bind the port right after.
func (ss *selfServer) close() {
	ss.srv.Close()
	<-ss.done
}

func (s SelfProbe) listenersText(addr string) string {
	if s.Listeners != "" {
		return "listeners=" + s.Listeners
	}
	return "binding " + addr
}

// answer is the outcome of one request of a round.
type answer struct {
	kind string // "ours", "other", "refused", "failed", "unresolved"
	at   string // the address dialled, when a connection was attempted
	err  string
}

// selfRound requests own n times, each on a new connection after a fresh
// lookup; addresses are tried in the order the resolver gave them, as a
// Java client does. ours (this container's addresses) only tells which
// refusals on the way are another host's (selfRequest).
func (g Gate) selfRound(ctx context.Context, own target, token string, n int, ours []*net.IPNet) ([]answer, []net.IP) {
	var lastIPs []net.IP
	out := make([]answer, 0, n)
	timeout := g.ProbeTimeout
	if timeout <= 0 {
		timeout = defaultProbeTimeout
	}
	for range n {
		if ctx.Err() != nil {
			break
		}
		ips, err := g.resolve(ctx, own.host)
		if err != nil {
			out = append(out, answer{kind: "unresolved", err: err.Error()})
			continue
		}
		lastIPs = ips
		out = append(out, g.selfRequest(ctx, own, ips, token, timeout, ours))
	}
	return out, lastIPs
}

// A connection refused at an address that is not this container's,
// before our listener answers at a later address, makes the answer
// "refused": the client fell through to us only because that host does not
// listen yet, and once it does (a DNS round robin over tasks that start
// one after the other) requests reach it instead of this worker. Any other
// failure there (no route to the host yet, a timeout) is no proof either:
// the answer is "failed", naming that address.
func (g Gate) selfRequest(ctx context.Context, own target, ips []net.IP, token string, timeout time.Duration, ours []*net.IPNet) answer {
	d := &selfDial{}
	dial := g.Self.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: timeout}).DialContext
	}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.dial(ctx, dial, network, ips, own.port, ours)
		},
		DisableKeepAlives:     true,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	defer tr.CloseIdleConnections()
	if own.scheme == "https" {
		tr.TLSClientConfig = g.selfTLSConfig(own.host)
	}
	c := &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	u := own.scheme + "://" + net.JoinHostPort(own.host, own.port) + "/"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return answer{kind: "failed", err: err.Error()}
	}
	resp, err := c.Do(req)
	return selfAnswer(resp, err, d, token)
}

// selfDial is what the dials of one self-request saw. The dial runs in the
// transport's goroutine, which may outlive a cancelled request: what it saw
// is shared under mu.
type selfDial struct {
	mu      sync.Mutex
	at      string // the last address dialled
	refused bool   // the last dial was refused
	passed  string // the first failing address that is not this container's
	passErr error  // why it failed
}

// seen returns the last address dialled, whether it refused, and the first
// failing address that is not ours with its error.
func (d *selfDial) seen() (string, bool, string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.at, d.refused, d.passed, d.passErr
}

// dial tries ips in the resolver's order at port, as a Java client does,
// noting each attempt, until one connects.
func (d *selfDial) dial(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), network string, ips []net.IP, port string, ours []*net.IPNet) (net.Conn, error) {
	var errs []error
	for _, ip := range ips {
		addr := net.JoinHostPort(ip.String(), port)
		c, err := dial(ctx, network, addr)
		d.mu.Lock()
		d.at, d.refused = addr, err != nil && errors.Is(err, syscall.ECONNREFUSED)
		if err != nil && d.passed == "" && !isOurs(ip, ours) {
			d.passed, d.passErr = addr, err
		}
		d.mu.Unlock()
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// selfTLSConfig is the client TLS of a self-request over https: the gate's
// (or the default), verifying the advertised host unless told not to.
func (g Gate) selfTLSConfig(host string) *tls.Config {
	cfg := &tls.Config{}
	if g.TLS != nil {
		cfg = g.TLS.Clone()
	}
	if !cfg.InsecureSkipVerify {
		cfg.ServerName = host
	}
	return cfg
}

// selfAnswer turns a self-request's response (or error) and what its dials
// saw into the answer: ours when it carries token.
func selfAnswer(resp *http.Response, err error, d *selfDial, token string) answer {
	dialled, wasRefused, fellThrough, why := d.seen()
	if err == nil && fellThrough != "" {
		resp.Body.Close()
		if errors.Is(why, syscall.ECONNREFUSED) {
			return answer{kind: "refused", at: fellThrough, err: "connection refused by " + fellThrough + ", another host's address, before this container answered at " + dialled}
		}
		return answer{kind: "failed", at: fellThrough, err: "connecting to " + fellThrough + ", another host's address, failed (" + why.Error() + ") before this container answered at " + dialled}
	}
	if err != nil {
		if wasRefused {
			return answer{kind: "refused", at: dialled, err: "connection refused"}
		}
		return answer{kind: "failed", at: dialled, err: err.Error()}
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.Header.Get(TokenHeader) == token {
		return answer{kind: "ours", at: dialled}
	}
	return answer{kind: "other", at: dialled, err: "answered " + resp.Status + " without our token"}
}

// tally counts a round's answers by kind.
type tally struct {
	n, ours, other, refused, failed, unresolved int
	at                                          []string // distinct addresses dialled
	firstErr                                    map[string]string
}

func count(as []answer) tally {
	t := tally{n: len(as), firstErr: map[string]string{}}
	seen := map[string]bool{}
	for _, a := range as {
		switch a.kind {
		case "ours":
			t.ours++
		case "other":
			t.other++
		case "refused":
			t.refused++
		case "failed":
			t.failed++
		case "unresolved":
			t.unresolved++
		}
		if a.err != "" && t.firstErr[a.kind] == "" {
			t.firstErr[a.kind] = a.err
		}
		if a.at != "" && !seen[a.at] {
			seen[a.at] = true
			t.at = append(t.at, a.at)
		}
	}
	return t
}

// verdict turns a round into a status and the sentence saying what was
// seen; StatusSelf when every answer carried our token.
func verdict(own target, t tally, ips []net.IP) (Status, string) {
	url := own.raw
	at := strings.Join(t.at, ", ")
	switch {
	case t.n == 0:
		return StatusUnreachable, fmt.Sprintf("the deadline passed before any request to our advertised URL %s was sent", url)
	case t.ours == t.n:
		return StatusSelf, ""
	case t.unresolved == t.n:
		return StatusUnresolved, t.firstErr["unresolved"]
	case t.other > 0:
		return StatusOtherHost, fmt.Sprintf("our advertised URL %s was answered by another host: %d of %d requests, each on a new connection (to %s), reached this container, %d reached a server without our token (%s)%s",
			url, t.ours, t.n, at, t.other, t.firstErr["other"], layout(ips, t))
	case t.refused > 0:
		return StatusRefused, fmt.Sprintf("requests to our advertised URL %s were refused: %d of %d requests, each on a new connection (to %s), reached this container, %d were refused%s",
			url, t.ours, t.n, at, t.refused, layout(ips, t))
	case t.failed > 0:
		hint := ""
		if strings.Contains(t.firstErr["failed"], "no route to host") {
			hint = " (nothing routes to that address from here: a Swarm service's virtual IP does so only where the kernel has IPVS)"
		}
		return StatusUnreachable, fmt.Sprintf("requests to our advertised URL %s failed: %d of %d requests (to %s) reached this container, %d failed: %s%s",
			url, t.ours, t.n, at, t.failed, t.firstErr["failed"], hint)
	}
	return StatusUnresolved, fmt.Sprintf("%d of %d lookups of %s failed: %s", t.unresolved, t.n, own.host, t.firstErr["unresolved"])
}

// layout names the deployment the answers point at.
func layout(ips []net.IP, t tally) string {
	switch {
	case len(ips) > 1:
		return fmt.Sprintf("; the name resolves to %d addresses, a DNS round robin over several tasks (a Swarm service with endpoint_mode: dnsrr, tasks.<service>, a headless service)", len(ips))
	case t.ours > 0:
		return "; the name leads to one address that balances over several hosts (a Swarm service's virtual IP with more than one replica, a load balancer)"
	}
	return "; the name leads to another host only (a stale record, another container with this name, the wrong port)"
}

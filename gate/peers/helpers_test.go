package peers

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
)

// fakeResolver answers from a table; failFirst[host] lookups of host fail
// with "no such host" before the table is used (DNS lag).
type fakeResolver struct {
	mu        sync.Mutex
	hosts     map[string][]string
	failFirst map[string]int
	calls     map[string]int
}

func newResolver(hosts map[string][]string) *fakeResolver {
	return &fakeResolver{hosts: hosts, failFirst: map[string]int{}, calls: map[string]int{}}
}

func (f *fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[host]++
	if f.calls[host] <= f.failFirst[host] {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	ips, ok := f.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

func (f *fakeResolver) LookupHost(ctx context.Context, host string) ([]string, error) {
	addrs, err := f.LookupIPAddr(ctx, host)
	var out []string
	for _, a := range addrs {
		out = append(out, a.IP.String())
	}
	return out, err
}

func (f *fakeResolver) count(host string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[host]
}

// addrs returns an interface-address lister with the given CIDRs.
func addrs(cidrs ...string) func() ([]net.Addr, error) {
	return func() ([]net.Addr, error) {
		var out []net.Addr
		for _, c := range cidrs {
			ip, n, err := net.ParseCIDR(c)
			if err != nil {
				return nil, err
			}
			n.IP = ip
			out = append(out, n)
		}
		return out, nil
	}
}

// testLog sends the gate's log to t.Log.
func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// gate returns a Gate with fast timings on a stepping clock: retries and
// deadlines pass in fake time, so failing cases do not wait out real ones.
func gate(t *testing.T, policy string, r Resolver, a func() ([]net.Addr, error)) Gate {
	return Gate{
		Policy:        policy,
		Clock:         clock.NewStepping(time.Unix(0, 0)),
		Resolver:      r,
		Addrs:         a,
		Log:           testLog(t),
		WarnWait:      400 * time.Millisecond,
		ProbeTimeout:  time.Second,
		ProbeRetries:  1,
		RetryInterval: 50 * time.Millisecond,
	}
}

// ctxFor is a short overall deadline, as run's gate timeout.
func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// counting is a REST server that answers status and counts requests.
type counting struct {
	*httptest.Server
	hits atomic.Int64
}

func serve(t *testing.T, status int) *counting {
	c := &counting{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		w.WriteHeader(status)
		w.Write([]byte(`{"version":"4.1.0","commit":"x","kafka_cluster_id":"y"}`))
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *counting) port() string {
	_, p, _ := net.SplitHostPort(c.Listener.Addr().String())
	return p
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return p
}

// find returns the result for url.
func find(t *testing.T, rep *Report, url string) PeerResult {
	t.Helper()
	for _, r := range rep.Peers {
		if r.URL == url {
			return r
		}
	}
	t.Fatalf("no result for %s in %+v", url, rep.Peers)
	return PeerResult{}
}

func asGateError(t *testing.T, err error) *GateError {
	t.Helper()
	var ge *GateError
	if !errors.As(err, &ge) {
		t.Fatalf("error = %v (%T), want *GateError", err, err)
	}
	if !strings.HasPrefix(ge.Error(), "peers gate: ") {
		t.Fatalf("error %q does not name the peers gate", ge.Error())
	}
	return ge
}

// hookClock is a stepping clock that runs fn once, on the n-th wait: an
// event (a record appearing, a server starting) that happens after the
// check has retried for a while, without real sleeps.
type hookClock struct {
	*clock.Stepping
	mu    sync.Mutex
	waits int
	n     int
	fn    func()
}

func newHookClock(n int, fn func()) *hookClock {
	return &hookClock{Stepping: clock.NewStepping(time.Unix(0, 0)), n: n, fn: fn}
}

func (c *hookClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.waits++
	if c.waits == c.n {
		c.fn()
	}
	c.mu.Unlock()
	return c.Stepping.After(d)
}

func itoa(n int) string { return strconv.Itoa(n) }

func pemOf(c *x509.Certificate) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
}

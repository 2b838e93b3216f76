package peers

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// peerWorld: we are own.test (10.0.0.5 by our interface list; the name
// resolves to 127.0.0.1, where the self-probe binds a free port); peers are
// names that resolve to 127.0.0.1, each served by an httptest server on its
// own port.
type peerWorld struct {
	own     string // our advertised URL
	ownPort string
	r       *fakeResolver
	good    *counting // answers 200
	err     *counting // answers 500
	down    string    // port nothing listens on
}

func newPeerWorld(t *testing.T) *peerWorld {
	w := &peerWorld{
		r: newResolver(map[string][]string{
			"own.test":   {"127.0.0.1"},
			"good.test":  {"127.0.0.1"},
			"err.test":   {"127.0.0.1"},
			"down.test":  {"127.0.0.1"},
			"alias.test": {"10.0.0.5"}, // another name for us
		}),
		good: serve(t, 200),
		err:  serve(t, 500),
		down: closedPort(t),
	}
	w.ownPort = freePort(t)
	w.own = "http://own.test:" + w.ownPort + "/"
	return w
}

func (w *peerWorld) url(name string) string {
	switch name {
	case "good":
		return "http://good.test:" + w.good.port() + "/"
	case "err":
		return "http://err.test:" + w.err.port() + "/"
	case "down":
		return "http://down.test:" + w.down + "/"
	case "missing":
		return "http://missing.test:8083/"
	}
	panic(name)
}

// ownURL is an advertised URL for tests that stop before any check.
const ownURL = "http://own.test:8083/"

var peerAddrs = addrs("10.0.0.5/24")

func TestPeerStatuses(t *testing.T) {
	w := newPeerWorld(t)
	rep, err := gate(t, "warn", w.r, peerAddrs).Check(ctxFor(t, 10*time.Second), w.own, w.url("good"),
		[]string{w.url("good"), w.url("err"), w.url("down"), w.url("missing")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := find(t, rep, w.url("good")); got.Status != StatusOK || got.HTTPStatus != 200 || got.Source != SourceLeader || got.Severity != SeverityOK {
		t.Errorf("good = %+v", got)
	}
	if got := find(t, rep, w.url("err")); got.Status != StatusBadResponse || got.HTTPStatus != 500 || !strings.Contains(got.Error, "500") {
		t.Errorf("err = %+v", got)
	}
	if got := find(t, rep, w.url("down")); got.Status != StatusUnreachable || !strings.Contains(got.Error, "refused") || got.Fix == "" {
		t.Errorf("down = %+v", got)
	}
	if got := find(t, rep, w.url("missing")); got.Status != StatusUnresolved || !strings.Contains(got.Error, "missing.test") ||
		!strings.Contains(got.Fix, "CONNECT_REST_ADVERTISED_HOST_NAME") {
		t.Errorf("missing = %+v", got)
	}
	// Own first, leader once (not again as a member).
	if len(rep.Peers) != 5 || rep.Peers[0].Source != SourceOwn || rep.Peers[1].URL != w.url("good") {
		t.Errorf("peers = %+v", rep.Peers)
	}
	if rep.Warned != 3 || rep.Failed != 0 {
		t.Errorf("warned=%d failed=%d", rep.Warned, rep.Failed)
	}
	// Bounded retries per round: a 500 is retried ProbeRetries (1) times a
	// round, over a bounded number of rounds.
	if n := w.err.hits.Load(); n < 2 {
		t.Errorf("500 server hit %d times, want at least 2 (one retry)", n)
	}
}

// TestPolicyTable checks every row of the package doc's policy table for
// every source.
func TestPolicyTable(t *testing.T) {
	type row struct {
		policy string
		source Source
		sev    Severity
	}
	var rows []row
	for _, s := range []Source{SourceLeader, SourceMember, SourceLockQueue, SourceConfigured} {
		def := SeverityWarn
		if s == SourceLeader {
			def = SeverityFail
		}
		rows = append(rows, row{"", s, def}, row{"fail", s, SeverityFail}, row{"warn", s, SeverityWarn})
	}
	for _, tc := range rows {
		t.Run(tc.policy+"/"+string(tc.source), func(t *testing.T) {
			t.Parallel()
			w := newPeerWorld(t)
			g := gate(t, tc.policy, w.r, peerAddrs)
			var leader string
			var members, lock []string
			bad := w.url("missing")
			switch tc.source {
			case SourceLeader:
				leader = bad
			case SourceMember:
				members = []string{bad}
			case SourceLockQueue:
				lock = []string{bad}
			case SourceConfigured:
				g.Peers = []string{"missing.test"}
				bad = "http://missing.test:" + w.ownPort + "/" // our port
			}
			// Plus one good peer of each kind, which must stay ok.
			members = append(members, w.url("good"))
			start := time.Now()
			rep, err := g.Check(ctxFor(t, 1500*time.Millisecond), w.own, leader, members, lock)
			got := find(t, rep, bad)
			if got.Source != tc.source || got.Status != StatusUnresolved || got.Severity != tc.sev {
				t.Fatalf("result = %+v", got)
			}
			if good := find(t, rep, w.url("good")); good.Severity != SeverityOK {
				t.Fatalf("good = %+v", good)
			}
			switch tc.sev {
			case SeverityFail:
				ge := asGateError(t, err)
				if !strings.Contains(ge.Error(), "missing.test") {
					t.Errorf("gate error = %v", ge)
				}
			case SeverityWarn:
				if err != nil {
					t.Fatalf("warning became an error: %v", err)
				}
				// Warnings are retried for WarnWait only, not the whole timeout.
				if d := time.Since(start); d > time.Second {
					t.Errorf("warn check took %s", d)
				}
			}
		})
	}
}

func TestOwnIsNeverProbed(t *testing.T) {
	w := newPeerWorld(t)
	// Our own URL also shows up as a (stale) member and in the lock queue,
	// and another of our names on our port is a member too: all self.
	rep, err := gate(t, "fail", w.r, peerAddrs).Check(ctxFor(t, 5*time.Second), w.own, "",
		[]string{w.own, "http://OWN.test:" + w.ownPort + "/", "http://alias.test:" + w.ownPort + "/"}, []string{w.own})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Peers) != 2 {
		t.Fatalf("peers = %+v", rep.Peers)
	}
	if rep.Peers[0].Source != SourceOwn || rep.Peers[1].Status != StatusSelf || rep.Peers[1].Severity != SeverityOK {
		t.Fatalf("peers = %+v", rep.Peers)
	}
}

func TestPeerDNSLag(t *testing.T) {
	w := newPeerWorld(t)
	w.r.failFirst["good.test"] = 3
	rep, err := gate(t, "fail", w.r, peerAddrs).Check(ctxFor(t, 5*time.Second), w.own, w.url("good"), nil, nil)
	if err != nil || find(t, rep, w.url("good")).Status != StatusOK {
		t.Fatalf("err=%v rep=%+v", err, rep.Peers)
	}
}

func TestPeerStartsAnswering(t *testing.T) {
	// The leader's REST server comes up after the check started.
	w := newPeerWorld(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	start := func() {
		l, err := net.Listen("tcp", "127.0.0.1:"+itoa(port))
		if err != nil {
			t.Errorf("listen again on %d: %v", port, err)
			return
		}
		s := httptest.NewUnstartedServer(http.NotFoundHandler())
		s.Listener = l
		s.Start()
		t.Cleanup(s.Close)
	}
	u := "http://good.test:" + itoa(port) + "/"
	g := gate(t, "", w.r, peerAddrs)
	clk := newHookClock(3, start) // up after a few failed rounds
	g.Clock = clk
	rep, err := g.Check(ctxFor(t, 10*time.Second), w.own, u, nil, nil)
	if err != nil || find(t, rep, u).Status != StatusOK || find(t, rep, u).HTTPStatus != 404 {
		t.Fatalf("err=%v rep=%+v", err, rep.Peers)
	}
	if clk.waits < 3 {
		t.Fatalf("passed after %d waits: the leader answered before it was started", clk.waits)
	}
}

func TestConfiguredPeersExpand(t *testing.T) {
	// tasks.connect resolves to two tasks listening on the same port; a
	// third address (ours, on our port) is skipped.
	a := serve(t, 200)
	port := a.port()
	l, err := net.Listen("tcp", "127.0.0.2:"+port)
	if err != nil {
		t.Fatalf("cannot listen on 127.0.0.2:%s (the whole 127.0.0.0/8 is loopback on Linux): %v", port, err)
	}
	b := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) }))
	b.Listener = l
	b.Start()
	t.Cleanup(b.Close)

	// Our self-probe binds 127.0.0.3 on the tasks' port (the port is
	// ours); 10.0.0.5, ours by the interface list, is the skipped address.
	own := "http://own.test:" + port + "/"
	r := newResolver(map[string][]string{"own.test": {"127.0.0.3"}, "tasks.connect": {"127.0.0.1", "127.0.0.2", "10.0.0.5"}})
	g := gate(t, "fail", r, peerAddrs)
	g.Self.Listen = "127.0.0.3:" + port
	g.Peers = []string{"tasks.connect"}
	rep, err := g.Check(ctxFor(t, 5*time.Second), own, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://127.0.0.1:" + port + "/", "http://127.0.0.2:" + port + "/"} {
		if got := find(t, rep, u); got.Status != StatusOK || got.Host != "tasks.connect" || got.Source != SourceConfigured {
			t.Errorf("%s = %+v", u, got)
		}
	}
	if got := find(t, rep, "http://10.0.0.5:"+port+"/"); got.Status != StatusSelf {
		t.Errorf("self = %+v", got)
	}

	// One task down: that address fails, the other still passes.
	b.Close()
	g.Peers = []string{"tasks.connect:" + port}
	rep, err = g.Check(ctxFor(t, 600*time.Millisecond), own, "", nil, nil)
	asGateError(t, err)
	if got := find(t, rep, "http://127.0.0.2:"+port+"/"); got.Status != StatusUnreachable {
		t.Errorf("down task = %+v", got)
	}
	if got := find(t, rep, "http://127.0.0.1:"+port+"/"); got.Status != StatusOK {
		t.Errorf("up task = %+v", got)
	}
}

func TestConfiguredPeerSyntax(t *testing.T) {
	for in, want := range map[string]string{
		"connect-1":               "http://connect-1:8083/",
		"connect-1:9000":          "http://connect-1:9000/",
		"10.0.0.9":                "http://10.0.0.9:8083/",
		"fd00::9":                 "http://[fd00::9]:8083/",
		"[fd00::9]:9000":          "http://[fd00::9]:9000/",
		"https://connect-1:9443/": "https://connect-1:9443/",
	} {
		got, err := parseConfiguredPeer(in, "http", "8083")
		if err != nil || got.url != want {
			t.Errorf("%q: %q, %v; want %q", in, got.url, err, want)
		}
	}
	for _, in := range []string{"", "a b", "host:1:2", "ftp://x/", "http://"} {
		_, err := parseConfiguredPeer(in, "http", "8083")
		if err == nil || !strings.Contains(err.Error(), "CONNECT_INIT_PEERS") {
			t.Errorf("%q: %v, want an error naming CONNECT_INIT_PEERS", in, err)
		}
	}
	// A bad entry stops Check before any lookup.
	r := newResolver(nil)
	g := gate(t, "", r, peerAddrs)
	g.Peers = []string{"a b"}
	if _, err := g.Check(ctxFor(t, time.Second), ownURL, "", nil, nil); err == nil || !strings.Contains(err.Error(), "CONNECT_INIT_PEERS") || len(r.calls) != 0 {
		t.Fatalf("err=%v calls=%v", err, r.calls)
	}
}

func TestHTTPSPeer(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	// httptest's certificate names example.com (and 127.0.0.1).
	r := newResolver(map[string][]string{"example.com": {"127.0.0.1"}, "other.test": {"127.0.0.1"}})
	g := gate(t, "fail", r, peerAddrs)
	g.TLS = &tls.Config{RootCAs: pool}
	// Our self-probe serves httptest's certificate, which names 127.0.0.1.
	ownPort := freePort(t)
	ownHTTPS := "https://127.0.0.1:" + ownPort + "/"
	g.Self = SelfProbe{Listen: "127.0.0.1:" + ownPort, ServerTLS: srv.TLS}

	good := "https://example.com:" + port + "/"
	rep, err := g.Check(ctxFor(t, 5*time.Second), ownHTTPS, good, nil, nil)
	if err != nil || find(t, rep, good).Status != StatusOK {
		t.Fatalf("err=%v rep=%+v", err, rep.Peers)
	}
	// The certificate does not name other.test: the host name is verified
	// even though the address was dialled directly.
	bad := "https://other.test:" + port + "/"
	rep, err = g.Check(ctxFor(t, 2*time.Second), ownHTTPS, bad, nil, nil)
	asGateError(t, err)
	if got := find(t, rep, bad); got.Status != StatusUnreachable || !strings.Contains(got.Error, "certificate") {
		t.Fatalf("bad = %+v", got)
	}
	// Without the CA, the chain is not trusted (an empty pool: loading the
	// system roots can outlast the probe timeout under -race).
	g.TLS = &tls.Config{RootCAs: x509.NewCertPool()}
	rep, _ = g.Check(ctxFor(t, 2*time.Second), ownHTTPS, good, nil, nil)
	if got := find(t, rep, good); got.Status != StatusUnreachable || !strings.Contains(got.Error, "certificate") {
		t.Fatalf("untrusted = %+v", got)
	}
}

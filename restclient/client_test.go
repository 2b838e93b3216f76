package restclient

import (
	"context"
	"crypto/x509"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
)

func TestParse(t *testing.T) {
	for raw, want := range map[string]Target{
		"http://worker-1:8083/":  {Scheme: "http", Host: "worker-1", Port: "8083"},
		"HTTPS://w/":             {Scheme: "https", Host: "w", Port: "443"},
		"http://w":               {Scheme: "http", Host: "w", Port: "80"},
		"http://[::1]:8083/":     {Scheme: "http", Host: "::1", Port: "8083"},
		"http://%3A%3A1:8083/":   {Scheme: "http", Host: "::1", Port: "8083"},
		"http://fd00%3A%3A9:1/x": {Scheme: "http", Host: "fd00::9", Port: "1", Path: "/x"},
		// Connect behind a reverse proxy: the path prefix is kept.
		"https://gw:8443/kafka-connect/": {Scheme: "https", Host: "gw", Port: "8443", Path: "/kafka-connect"},
		"http://gw/a/b":                  {Scheme: "http", Host: "gw", Port: "80", Path: "/a/b"},
		"http://gw/a%20b/":               {Scheme: "http", Host: "gw", Port: "80", Path: "/a%20b"},
	} {
		got, err := Parse(raw)
		want.Raw = raw
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
	for _, raw := range []string{"ftp://w/", "http://", "::nonsense", "http://%3A%3A1/", "http://w/?x=1", "http://w/#f"} {
		if _, err := Parse(raw); err == nil {
			t.Errorf("Parse(%q): no error", raw)
		}
	}
	if got := (Target{Scheme: "http", Host: "::1", Port: "8083"}).Base(); got != "http://[::1]:8083/" {
		t.Errorf("Base = %q", got)
	}
}

// TestPathPrefixIsKept: every kind of request to a URL with a path prefix
// (Connect behind a reverse proxy) goes under that prefix, and nothing
// reaches the root.
func TestPathPrefixIsKept(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.Method+" "+r.URL.RequestURI())
		if r.URL.Path == "/kafka-connect/health" {
			io.WriteString(w, `{"status":"healthy","message":"ok"}`)
			return
		}
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	tg, err := Parse(srv.URL + "/kafka-connect/")
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{}
	ctx := context.Background()
	if _, err := c.Get(ctx, tg, "", nil); err != nil {
		t.Fatal(err)
	}
	if r := c.Health(ctx, tg, nil); !r.Ready {
		t.Errorf("Health = %+v", r)
	}
	if _, err := c.GetLarge(ctx, tg, "connectors?expand=info"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(ctx, tg, Write{Method: http.MethodPut, Path: "connectors/a/config", Body: []byte(`{}`), Until: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	want := []string{"GET /kafka-connect/", "GET /kafka-connect/health", "GET /kafka-connect/connectors?expand=info", "PUT /kafka-connect/connectors/a/config"}
	if strings.Join(paths, "|") != strings.Join(want, "|") {
		t.Errorf("requests = %q, want %q", paths, want)
	}
}

func target(t *testing.T, srv *httptest.Server) Target {
	t.Helper()
	tg, err := Parse(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// Retries wait on the injected clock: 200 ms, then 400 ms, no real sleep.
func TestGetRetriesOnTheClock(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hits.Add(1) < 3 {
			w.WriteHeader(503)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	clk := clock.NewStepping(time.Unix(0, 0))
	c := &Client{Retries: 2, Clock: clk}
	resp, err := c.Get(context.Background(), target(t, srv), "", nil)
	if err != nil || resp.Status != 200 || string(resp.Body) != "ok" || hits.Load() != 3 {
		t.Fatalf("Get = %+v, %v after %d hits", resp, err, hits.Load())
	}
	if clk.Waited() != 600*time.Millisecond {
		t.Fatalf("waited %v on the clock, want 200ms + 400ms", clk.Waited())
	}
	// Out of retries: the last answer, no error.
	hits.Store(-10)
	resp, err = c.Get(context.Background(), target(t, srv), "", nil)
	if err != nil || resp.Status != 503 || hits.Load() != -7 {
		t.Fatalf("exhausted: %+v, %v, hits %d", resp, err, hits.Load())
	}
}

func TestGetDoesNotRetryFinalAnswers(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(501)
	}))
	t.Cleanup(srv.Close)
	c := &Client{Retries: 3, Clock: clock.NewStepping(time.Unix(0, 0))}
	if resp, _ := c.Get(context.Background(), target(t, srv), "", nil); resp.Status != 501 || hits.Load() != 1 {
		t.Fatalf("501 retried: %d hits", hits.Load())
	}
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	clk := clock.NewStepping(time.Unix(0, 0))
	c = &Client{Retries: 3, Clock: clk} // system roots: the test CA is not trusted
	_, err := c.Get(context.Background(), target(t, tlsSrv), "", nil)
	if err == nil || !strings.Contains(err.Error(), "certificate") || clk.Waited() != 0 {
		t.Fatalf("untrusted certificate: %v, waited %v (want no retry)", err, clk.Waited())
	}
}

// dial decides the address; the host name stays the TLS server name.
func TestGetDialsTheGivenAddress(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(r.Host)) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c := &Client{TLS: srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()}
	c.TLS.RootCAs = pool
	// httptest's certificate names example.com, which does not resolve here.
	resp, err := c.Get(context.Background(), Target{Scheme: "https", Host: "example.com", Port: port}, "health", net.ParseIP("127.0.0.1"))
	if err != nil || string(resp.Body) != "example.com:"+port {
		t.Fatalf("Get = %+v, %v", resp, err)
	}
}

func TestConnectAndResolve(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	c := &Client{Timeout: time.Second}
	if err := c.Connect(context.Background(), Target{Host: "127.0.0.1", Port: port}); err != nil {
		t.Fatalf("Connect to a listener: %v", err)
	}
	l.Close()
	if err := c.Connect(context.Background(), Target{Host: "127.0.0.1", Port: port}); err == nil {
		t.Fatal("Connect to a closed port: no error")
	}
	if addrs, err := Resolve(context.Background(), nil, "::1", time.Second); err != nil || len(addrs) != 1 || addrs[0] != "::1" {
		t.Fatalf("an IP literal resolves to itself: %v, %v", addrs, err)
	}
}

func TestHealthOldWorkerRule(t *testing.T) {
	var name atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/health":
			w.WriteHeader(404) // before Kafka 3.9: Jersey's 404 through ConnectExceptionMapper
			w.Write([]byte(`{"error_code":404,"message":"HTTP 404 Not Found"}`))
		case strings.HasPrefix(r.URL.Path, "/connectors/"):
			n := strings.TrimPrefix(r.URL.Path, "/connectors/")
			name.Store(n)
			w.WriteHeader(404)
			w.Write([]byte(`{"error_code":404,"message":"Connector ` + n + ` not found"}`))
		}
	}))
	t.Cleanup(srv.Close)
	r := (&Client{}).Health(context.Background(), target(t, srv), nil)
	if !r.Ready || !strings.Contains(r.Reason, "the herder answered") || !strings.HasPrefix(name.Load().(string), ProbeConnectorPrefix) {
		t.Fatalf("old worker: %+v", r)
	}
}

// TestHealthGenericNotFoundIsStarting: Jetty's own 404 on /health (the
// resources not registered yet, any version) is "starting", and the
// herder is not asked: asking would race the registration and could take
// a new worker for an old, ready one.
func TestHealthGenericNotFoundIsStarting(t *testing.T) {
	var probed atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/connectors/") {
			probed.Store(true)
			n := strings.TrimPrefix(r.URL.Path, "/connectors/")
			w.WriteHeader(404)
			w.Write([]byte(`{"error_code":404,"message":"Connector ` + n + ` not found"}`))
			return
		}
		w.WriteHeader(404)
		w.Write([]byte("<html><body><h2>HTTP ERROR 404 Not Found</h2></body></html>"))
	}))
	t.Cleanup(srv.Close)
	r := (&Client{}).Health(context.Background(), target(t, srv), nil)
	if r.Ready || !strings.Contains(r.Reason, "generic 404") || probed.Load() {
		t.Fatalf("generic 404: %+v, probed %v", r, probed.Load())
	}
}

func TestParseRefusesCredentialsWithoutPrintingThem(t *testing.T) {
	for _, raw := range []string{
		"https://admin:s3cret@connect.example:8083/kafka-connect",
		"http://admin:s3cret@connect:8083",
		"http://admin:s3cret@connect:notaport/", // another error: still no password
	} {
		_, err := Parse(raw)
		if err == nil {
			t.Fatalf("%s: accepted", raw)
		}
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "admin:") {
			t.Errorf("%s: the error prints the credentials: %v", raw, err)
		}
	}
	if _, err := Parse("https://admin:s3cret@connect.example:8083/"); err == nil || !strings.Contains(err.Error(), "CONNECT_INIT_REST_USERNAME") {
		t.Errorf("the error does not say where credentials go: %v", err)
	}
}

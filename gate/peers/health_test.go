package peers

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connect-init/connect-init/restclient"
	"github.com/connect-init/connect-init/security"
	"github.com/connect-init/connect-init/workerconfig"
)

// fakeWorker imitates Connect's REST API: health answers /health (nil: 404
// as on workers before 3.9), connector answers GET /connectors/<name>.
type fakeWorker struct {
	health    func(w http.ResponseWriter, r *http.Request)
	connector func(w http.ResponseWriter, r *http.Request, name string)
	probed    atomic.Value // last connector name asked for
}

func (f *fakeWorker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/health" && f.health != nil:
		f.health(w, r)
	case strings.HasPrefix(r.URL.Path, "/connectors/") && f.connector != nil:
		name := strings.TrimPrefix(r.URL.Path, "/connectors/")
		f.probed.Store(name)
		f.connector(w, r, name)
	case r.URL.Path == "/" || r.URL.Path == "/connectors":
		w.Write([]byte(`{}`)) // always answers, even while looping
	default:
		w.WriteHeader(404)
		w.Write([]byte(`{"error_code":404,"message":"HTTP 404 Not Found"}`))
	}
}

func reply(code int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
		w.Write([]byte(body))
	}
}

func healthFor(t *testing.T, h http.Handler, timeout time.Duration) *Health {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	hc, err := LocalHealth(workerconfig.Properties{"listeners": "http://0.0.0.0:" + srv.URL[strings.LastIndex(srv.URL, ":")+1:]}, "", nil, restclient.Auth{}, timeout)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hc.URL, "http://127.0.0.1:") {
		t.Fatalf("local URL = %s", hc.URL)
	}
	return hc
}

func TestHealth(t *testing.T) {
	hang := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	for _, tc := range []struct {
		name      string
		worker    *fakeWorker
		ready     bool
		request   string
		reasonHas string
	}{
		{"healthy", &fakeWorker{health: reply(200, `{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`)},
			true, "GET /health", "200"},
		{"bare 200 is not Connect's", &fakeWorker{health: reply(200, `OK`)},
			false, "GET /health", "without Connect's {\"status\": \"healthy\"}"},
		{"starting", &fakeWorker{health: reply(503, `{"status":"starting","message":"Worker is still starting up."}`)},
			false, "GET /health", "503: starting: Worker is still starting up."},
		{"unhealthy", &fakeWorker{health: reply(500, `{"status":"unhealthy","message":"Worker was unable to handle this request and may be unable to handle other requests."}`)},
			false, "GET /health", "500: unhealthy"},
		{"herder stuck", &fakeWorker{health: hang},
			false, "GET /health", "no answer within the timeout"},
		{"old worker ready", &fakeWorker{connector: func(w http.ResponseWriter, _ *http.Request, name string) {
			w.WriteHeader(404)
			w.Write([]byte(`{"error_code":404,"message":"Connector ` + name + ` not found"}`))
		}}, true, "GET /connectors/" + restclient.ProbeConnectorPrefix, "404"},
		{"resources not registered yet", &fakeWorker{connector: func(w http.ResponseWriter, r *http.Request, _ string) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(404)
			// Jetty's page echoes the URI, and so the probed name.
			w.Write([]byte("<html><body><h2>HTTP ERROR 404 Not Found</h2><table><tr><th>URI:</th><td>" + r.URL.String() + "</td></tr></table></body></html>"))
		}}, false, "GET /connectors/" + restclient.ProbeConnectorPrefix, "generic 404"},
		{"old worker, generic JSON 404", &fakeWorker{connector: func(w http.ResponseWriter, _ *http.Request, _ string) {
			w.WriteHeader(404)
			w.Write([]byte(`{"error_code":404,"message":"HTTP 404 Not Found"}`))
		}}, false, "GET /connectors/" + restclient.ProbeConnectorPrefix, "generic 404"},
		{"old worker rebalancing", &fakeWorker{connector: func(w http.ResponseWriter, _ *http.Request, _ string) {
			w.WriteHeader(409)
			w.Write([]byte(`{"error_code":409,"message":"Cannot complete request because of a conflicting operation (e.g. worker rebalance)"}`))
		}}, false, "GET /connectors/" + restclient.ProbeConnectorPrefix, "409: Cannot complete request"},
		{"old worker stuck", &fakeWorker{connector: func(w http.ResponseWriter, r *http.Request, _ string) { <-r.Context().Done() }},
			false, "GET /connectors/" + restclient.ProbeConnectorPrefix, "no answer within the timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := healthFor(t, tc.worker, 500*time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			start := time.Now()
			r := h.Check(ctx)
			if r.Ready != tc.ready || !strings.HasPrefix(r.Request, tc.request) || !strings.Contains(r.Reason, tc.reasonHas) {
				t.Fatalf("readiness = %+v", r)
			}
			if strings.Contains(r.Reason, "\n") {
				t.Fatalf("reason is not one line: %q", r.Reason)
			}
			if d := time.Since(start); d > 1500*time.Millisecond {
				t.Fatalf("took %s", d)
			}
			if name, _ := tc.worker.probed.Load().(string); name != "" && len(name) <= len(restclient.ProbeConnectorPrefix) {
				t.Fatalf("probe connector name %q has no random suffix", name)
			}
		})
	}
}

func TestHealthProbeNamesDiffer(t *testing.T) {
	fw := &fakeWorker{connector: func(w http.ResponseWriter, _ *http.Request, name string) {
		w.WriteHeader(404)
		w.Write([]byte(`{"error_code":404,"message":"Connector ` + name + ` not found"}`))
	}}
	h := healthFor(t, fw, time.Second)
	h.Check(context.Background())
	first := fw.probed.Load().(string)
	h.Check(context.Background())
	if second := fw.probed.Load().(string); first == second || !strings.HasPrefix(first, restclient.ProbeConnectorPrefix) {
		t.Fatalf("probe names %q, %q", first, second)
	}
}

func TestHealthNotListening(t *testing.T) {
	port := closedPort(t)
	h, err := LocalHealth(workerconfig.Properties{"listeners": "http://:" + port}, "", nil, restclient.Auth{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r := h.Check(context.Background())
	if r.Ready || !strings.Contains(r.Reason, "connection refused") || !strings.Contains(r.Reason, "127.0.0.1:"+port) {
		t.Fatalf("readiness = %+v", r)
	}
}

func TestLocalHealthBadConfig(t *testing.T) {
	for _, p := range []workerconfig.Properties{
		{"listeners": "http://:0"},
		{"listeners": "nonsense"},
	} {
		if _, err := LocalHealth(p, "", nil, restclient.Auth{}, time.Second); err == nil {
			t.Errorf("%v: no error", p)
		}
	}
}

func TestHealthHTTPS(t *testing.T) {
	srv := httptest.NewUnstartedServer(&fakeWorker{health: reply(200, `{"status":"healthy"}`)})
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	props := workerconfig.Properties{"listeners": "https://0.0.0.0:" + port}
	restTLS, err := security.TLSConfig(workerconfig.Properties{"ssl.truststore.type": "PEM", "ssl.truststore.certificates": pemOf(srv.Certificate())})
	if err != nil {
		t.Fatal(err)
	}
	// httptest's certificate names example.com, not 127.0.0.1's name.
	h, err := LocalHealth(props, "https://example.com:"+port+"/", restTLS, restclient.Auth{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r := h.Check(context.Background()); !r.Ready {
		t.Fatalf("readiness = %+v", r)
	}
	// The certificate is checked against the advertised name.
	h, err = LocalHealth(props, "https://connect-1.test:"+port+"/", restTLS, restclient.Auth{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r := h.Check(context.Background()); r.Ready || !strings.Contains(r.Reason, "certificate") || !strings.Contains(r.Reason, "truststore") {
		t.Fatalf("readiness = %+v", r)
	}
}

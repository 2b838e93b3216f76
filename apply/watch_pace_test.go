package apply

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/clocktest"
	"github.com/connect-init/connect-init/restclient"
)

// Waiting costs nothing (issue 48): `apply --watch` against a worker
// whose REST API answers 503 for two hours of injected time (a worker
// restarting for ever) looks once every interval (30 s by default), one
// GET /connectors a look (a read is not retried), and writes one warning
// a look, not one a request.
func TestWatchWorkerDownPace(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, `{"error_code":503,"message":"starting"}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	tg, err := restclient.Parse(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	const horizon = 2 * time.Hour
	looks := int(horizon/DefaultWatchInterval) + 1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktest.NewHorizon(horizon, 100*looks, cancel)
	logs := &clocktest.Logs{}
	rest := &restclient.Client{Clock: clk, Random: func() float64 { return 0.5 }}
	Watch(ctx, &API{REST: rest, Target: tg, Clock: clk}, []Connector{conn("a", "", "connector.class", "C")},
		WatchOptions{Options: Options{Log: logs.Logger(), Clock: clk}})
	clk.AssertReached(t)
	clk.AssertPace(t, DefaultWatchInterval, int(time.Minute/DefaultWatchInterval)+1)
	// Each look may pause for the REST client's own retries; the
	// watcher's pauses are its interval.
	if n := int(requests.Load()); n > 2*looks {
		t.Errorf("%d requests in %v, want at most %d (a look every %v)", n, horizon, 2*looks, DefaultWatchInterval)
	}
	const line = "watch: cannot read the connectors"
	if n := logs.Count(line); n == 0 || n > looks {
		t.Errorf("%d %q lines in %v, want between 1 and %d (one a look)", n, line, horizon, looks)
	}
	if n := logs.Total(); n > looks+5 {
		t.Errorf("%d log lines in all in %v, want at most %d", n, horizon, looks+5)
	}
	t.Logf("%d requests, %d pauses, %d warnings, %d lines in all in %v of injected time", requests.Load(), clk.Pauses(), logs.Count(line), logs.Total(), clk.Elapsed())
}

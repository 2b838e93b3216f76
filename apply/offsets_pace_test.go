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

// Waiting costs nothing (issue 48): the offsets commands' two polls, for
// a connector that never reaches STOPPED and an offsets change Connect
// refuses for ever ("not stopped yet"), each driven through an hour of
// injected time (the deadline given): one request every offsetsPoll
// (250 ms) at most, and no pause shorter. An hour, not two as the other
// pace tests: every look here is a real HTTP request to a test server,
// 14,400 of them, some 7 s under -race.

// offsetsBed is a worker answering every request with status and body,
// and an API on a Horizon clock.
func offsetsBed(t *testing.T, status int, body string) (*API, *clocktest.Horizon, *atomic.Int64, context.Context) {
	t.Helper()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	tg, err := restclient.Parse(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	clk := clocktest.NewHorizon(offsetsHorizon+time.Minute, 4*offsetsMost, cancel)
	return &API{REST: &restclient.Client{Clock: clk, Random: func() float64 { return 0.5 }}, Target: tg, Clock: clk}, clk, &requests, ctx
}

const offsetsHorizon = time.Hour

// offsetsMost is the most polls the horizon allows.
const offsetsMost = int(offsetsHorizon/offsetsPoll) + 2

func TestWaitStatePace(t *testing.T) {
	api, clk, requests, ctx := offsetsBed(t, http.StatusOK, `{"name":"a","connector":{"state":"RUNNING","worker_id":"w"},"tasks":[]}`)
	err := api.waitState(ctx, "a", "STOPPED", clk.Now().Add(offsetsHorizon))
	if err == nil {
		t.Fatal("waitState: a connector that never stops reached STOPPED")
	}
	if e := clk.Elapsed(); e < offsetsHorizon {
		t.Fatalf("gave up after %v of injected time, want %v (the deadline)", e, offsetsHorizon)
	}
	clk.AssertPace(t, offsetsPoll, int(time.Minute/offsetsPoll)+1)
	if n := int(requests.Load()); n > offsetsMost {
		t.Errorf("%d status reads in %v, want at most %d (one every %v)", n, offsetsHorizon, offsetsMost, offsetsPoll)
	}
	t.Logf("%d status reads in %v: %v", requests.Load(), clk.Elapsed(), err)
}

func TestAlterOffsetsPace(t *testing.T) {
	api, clk, requests, ctx := offsetsBed(t, http.StatusBadRequest,
		`{"error_code":400,"message":"Connectors must be in the STOPPED state before their offsets can be modified"}`)
	err := api.alterOffsets(ctx, "a", nil, clk.Now().Add(offsetsHorizon))
	if err == nil {
		t.Fatal("alterOffsets: no error while Connect refuses")
	}
	if e := clk.Elapsed(); e < offsetsHorizon {
		t.Fatalf("gave up after %v of injected time, want %v (the deadline)", e, offsetsHorizon)
	}
	clk.AssertPace(t, offsetsPoll, int(time.Minute/offsetsPoll)+1)
	if n := int(requests.Load()); n > offsetsMost {
		t.Errorf("%d DELETE requests in %v, want at most %d (one every %v)", n, offsetsHorizon, offsetsMost, offsetsPoll)
	}
	t.Logf("%d DELETE requests in %v: %v", requests.Load(), clk.Elapsed(), err)
}

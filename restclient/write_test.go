package restclient

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
)

// half is a fixed jitter source: every pause is three quarters of its step.
func half() float64 { return 0.5 }

// A write Connect refuses with 409 (a rebalance) is repeated with backoff
// on the injected clock until it is answered; the jitter comes from Random.
func TestWriteRetriesConflictsOnTheClock(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, _ := io.ReadAll(r.Body); string(b) != `{"a":"1"}` {
			t.Errorf("attempt %d sent body %q", hits.Load()+1, b)
		}
		if hits.Add(1) <= 2 {
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"error_code":409,"message":"Cannot complete request because of a conflicting operation (e.g. worker rebalance)"}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	clk := clock.NewStepping(time.Unix(0, 0))
	c := &Client{Clock: clk, Random: half}
	res, err := c.Write(context.Background(), target(t, srv), Write{Method: http.MethodPut, Path: "connectors/a/config", Body: []byte(`{"a":"1"}`)})
	if err != nil || res.Response.Status != http.StatusCreated || res.Attempts != 3 || res.Landed {
		t.Fatalf("Write = %+v, %v", res, err)
	}
	// 250 ms and 500 ms steps, each paused at three quarters.
	if want := 3 * (250 + 500) * time.Millisecond / 4; clk.Waited() != want {
		t.Errorf("waited %v on the clock, want %v", clk.Waited(), want)
	}
}

// The pauses grow to 5 s and never below half their step, and differ with
// the random source: applies started together do not repeat in step.
func TestWritePauseJitter(t *testing.T) {
	lo, hi := &Client{Random: func() float64 { return 0 }}, &Client{Random: func() float64 { return 0.999999 }}
	for n, step := range []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
		if got := lo.writePause(n); got != step/2 {
			t.Errorf("pause %d with random 0 = %v, want %v", n, got, step/2)
		}
		if got := hi.writePause(n); got < step-step/1000 || got > step {
			t.Errorf("pause %d with random ~1 = %v, want ~%v", n, got, step)
		}
	}
	if p := (&Client{}).writePause(100); p < writePauseMax/2 || p > writePauseMax {
		t.Errorf("pause 100 = %v", p)
	}
}

// No answer within the timeout is ambiguous: the worker may have carried
// the write out. Landed reads the cluster back, and when it holds what was
// written the write is done, not sent again.
func TestWriteTimeoutReadsBackAndDoesNotRepeat(t *testing.T) {
	var puts atomic.Int32
	var holds atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // so that the server notices the client hang up
		puts.Add(1)
		holds.Store(true) // carried out...
		<-r.Context().Done()
		// ...but answered only after the client gave up.
	}))
	t.Cleanup(srv.Close)
	var asked atomic.Int32
	c := &Client{WriteTimeout: 100 * time.Millisecond, Clock: clock.NewStepping(time.Unix(0, 0)), Random: half}
	res, err := c.Write(context.Background(), target(t, srv), Write{Method: http.MethodPut, Path: "connectors/a/config", Body: []byte(`{}`),
		Landed: func(context.Context) (bool, error) { asked.Add(1); return holds.Load(), nil }})
	if err != nil || !res.Landed || res.Attempts != 1 || puts.Load() != 1 || asked.Load() != 1 {
		t.Fatalf("Write = %+v, %v; %d PUTs, %d read-backs", res, err, puts.Load(), asked.Load())
	}
}

// Connect's forwarding timeout (500 "Request timed out") is read back and,
// when the write is not there, sent again; other 500s are final answers.
func TestWriteForwardingTimeoutIsRetried(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch hits.Add(1) {
		case 1:
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error_code":500,"message":"Request timed out. The worker is currently ensuring membership in the cluster"}`)
		case 2:
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error_code":500,"message":"Error trying to forward REST request: Connection refused"}`)
		default:
			w.WriteHeader(http.StatusOK)
		}
	}))
	t.Cleanup(srv.Close)
	var asked atomic.Int32
	c := &Client{Clock: clock.NewStepping(time.Unix(0, 0)), Random: half}
	res, err := c.Write(context.Background(), target(t, srv), Write{Method: http.MethodPut, Path: "x",
		Landed: func(context.Context) (bool, error) { asked.Add(1); return false, errors.New("read-back failed") }})
	if err != nil || res.Response.Status != http.StatusOK || res.Attempts != 3 || asked.Load() != 2 {
		t.Fatalf("Write = %+v, %v, %d read-backs", res, err, asked.Load())
	}

	hits.Store(0)
	final := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error_code":500,"message":"Failed to find any class that implements Connector"}`)
	}))
	t.Cleanup(final.Close)
	res, err = c.Write(context.Background(), target(t, final), Write{Method: http.MethodPut, Path: "x"})
	if err != nil || res.Response.Status != 500 || hits.Load() != 1 || !strings.Contains(string(res.Response.Body), "Failed to find") {
		t.Fatalf("a final 500: %+v, %v, %d attempts", res, err, hits.Load())
	}
}

// A worker that accepts no connection is given up after Unreachable (on
// the clock), with an *UnreachableError naming it.
func TestWriteUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	tg, _ := Parse("http://" + addr + "/")
	clk := clock.NewStepping(time.Unix(0, 0))
	c := &Client{Clock: clk, Random: half, Unreachable: 10 * time.Second}
	res, err := c.Write(context.Background(), tg, Write{Method: http.MethodPut, Path: "x", Until: clk.Now().Add(time.Hour)})
	var ue *UnreachableError
	if !errors.As(err, &ue) || ue.URL != tg.Raw || !strings.Contains(err.Error(), "connection refused") || res.Attempts < 3 {
		t.Fatalf("Write = %+v, %v", res, err)
	}
	if clk.Waited() < 10*time.Second || clk.Waited() > 16*time.Second {
		t.Errorf("waited %v on the clock for a 10s Unreachable", clk.Waited())
	}
}

// The repeats end at Until on the clock, with the last answer named.
func TestWriteGivesUpAtUntil(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusConflict)
		io.WriteString(w, `{"error_code":409,"message":"rebalance"}`)
	}))
	t.Cleanup(srv.Close)
	clk := clock.NewStepping(time.Unix(0, 0))
	c := &Client{Clock: clk, Random: half}
	res, err := c.Write(context.Background(), target(t, srv), Write{Method: http.MethodDelete, Path: "connectors/a", Until: clk.Now().Add(20 * time.Second)})
	if err == nil || !strings.Contains(err.Error(), "409 Conflict") || res.Response.Status != http.StatusConflict {
		t.Fatalf("Write = %+v, %v", res, err)
	}
	if clk.Waited() < 20*time.Second || clk.Waited() > 26*time.Second {
		t.Errorf("waited %v on the clock until a 20s deadline", clk.Waited())
	}
	// A cancelled context ends it at once, naming the last answer.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Write(ctx, target(t, srv), Write{Method: http.MethodPut, Path: "x"}); err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// Every repeated attempt is one debug line (retryablehttp's
// RequestLogHook) naming the previous outcome.
func TestRetriesAreLogged(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hits.Add(1) == 1 {
			w.WriteHeader(http.StatusConflict)
		}
	}))
	t.Cleanup(srv.Close)
	var logs strings.Builder
	c := &Client{Clock: clock.NewStepping(time.Unix(0, 0)), Random: half,
		Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if _, err := c.Write(context.Background(), target(t, srv), Write{Method: http.MethodPut, Path: "x"}); err != nil {
		t.Fatal(err)
	}
	if got := logs.String(); strings.Count(got, "REST request failed; retrying") != 1 || !strings.Contains(got, "previous=\"409 Conflict\"") || !strings.Contains(got, "attempt=2") {
		t.Errorf("log:\n%s", got)
	}
}

package startup

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
)

// TestProfileTimesEveryStep: the pipeline records each step's duration on
// the injected clock, and the line lists them in the pipeline's order with
// the total.
func TestProfileTimesEveryStep(t *testing.T) {
	clk := clock.NewStepping(time.Unix(1000, 0))
	took := map[string]time.Duration{
		step.Settings: 2 * time.Millisecond, step.Brokers: 30 * time.Millisecond, step.Topics: 7 * time.Millisecond,
		step.Coordinator: 4 * time.Millisecond, step.Group: 120 * time.Millisecond, step.Plugins: 55 * time.Millisecond,
		step.Lock: 3 * time.Second, step.Peers: 9 * time.Millisecond, step.Exec: 0,
	}
	f := &fakeGates{deadlines: map[string]time.Time{}, fail: map[string]error{}, clk: clk, took: took}
	st := &state{settings: settings.Settings{Timeout: time.Hour, Lock: true}, withExec: true, profile: NewProfile(clk)}
	if code := runSteps(context.Background(), startupSteps(f), st, slog.New(slog.DiscardHandler)); code != exitcode.OK {
		t.Fatalf("exit %d", code)
	}
	for _, name := range []string{step.Settings, step.Brokers, step.Topics, step.Coordinator, step.Group, step.Plugins, step.Lock, step.Peers} {
		if d, ok := st.profile.Get(name); !ok || d != took[name] {
			t.Errorf("%s: recorded %v (%v), want %v", name, d, ok, took[name])
		}
	}
	var buf bytes.Buffer
	st.profile.Set(ProfileGroupWindow, 100*time.Millisecond)
	st.profile.Set(ProfileLockWait, 2500*time.Millisecond)
	st.profile.Set(ProfileLockHandoff, 500*time.Millisecond)
	st.profile.Log(context.Background(), slog.New(slog.NewTextHandler(&buf, nil)), WhereExec)
	line := buf.String()
	want := `msg="start-up profile" where=exec settings_ms=2 brokers_ms=30 topics_ms=7 coordinator_ms=4 group_ms=120 group_window_ms=100 plugins_ms=55 lock_ms=3000 lock_wait_ms=2500 lock_handoff_ms=500 peers_ms=9 total_ms=3227`
	if !strings.Contains(line, want) {
		t.Errorf("profile line\n%s\nwant it to contain\n%s", line, want)
	}
}

// TestProfileLeavesOutSkippedSteps: prepare's line has no key for the
// steps it does not run.
func TestProfileLeavesOutSkippedSteps(t *testing.T) {
	clk := clock.NewStepping(time.Unix(1000, 0))
	f := &fakeGates{deadlines: map[string]time.Time{}, fail: map[string]error{}, clk: clk, took: map[string]time.Duration{step.Brokers: 1500 * time.Microsecond}}
	st := &state{settings: settings.Settings{Timeout: time.Hour, Lock: true}, profile: NewProfile(clk)}
	runSteps(context.Background(), startupSteps(f), st, slog.New(slog.DiscardHandler))
	attrs := st.profile.Attrs(WhereExec)
	var keys []string
	for i := 0; i < len(attrs); i += 2 {
		keys = append(keys, attrs[i].(string))
	}
	if got, want := strings.Join(keys, " "), "where settings_ms brokers_ms topics_ms coordinator_ms group_ms total_ms"; got != want {
		t.Errorf("keys %q, want %q", got, want)
	}
	if attrs[5] != 1.5 {
		t.Errorf("brokers_ms = %v, want 1.5", attrs[5])
	}
}

// TestLockSplit: the handoff is from the last holder seen ready to the
// claim; without one (alone in the queue) the step is all wait.
func TestLockSplit(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, c := range []struct {
		name          string
		ready         time.Time
		wait, handoff time.Duration
	}{
		{"holder seen ready", t0.Add(4 * time.Second), 4 * time.Second, time.Second},
		{"alone in the queue", time.Time{}, 5 * time.Second, 0},
		{"ready before this start", t0.Add(-time.Second), 5 * time.Second, 0},
	} {
		p := NewProfile(clock.NewStepping(t0))
		lockSplit(p, t0, c.ready, t0.Add(5*time.Second))
		w, _ := p.Get(ProfileLockWait)
		h, ok := p.Get(ProfileLockHandoff)
		if w != c.wait || h != c.handoff || !ok {
			t.Errorf("%s: wait %v handoff %v (%v), want %v and %v", c.name, w, h, ok, c.wait, c.handoff)
		}
	}
}

// TestNilProfile: code shared with callers that do not profile needs no
// checks.
func TestNilProfile(t *testing.T) {
	var p *Profile
	p.Since(step.Brokers, p.Now())
	p.Set(step.Lock, time.Second)
	if err := p.Time(step.Peers, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Get(step.Lock); ok || p.Attrs(WhereExec) != nil {
		t.Error("a nil profile recorded something")
	}
	p.Log(context.Background(), slog.New(slog.DiscardHandler), WhereExec)
}

package lock

import (
	"runtime"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/clocktest"
)

// Waiting costs nothing (issue 48): a waiter behind a holder that never
// gets ready (no readiness check, a hold lease longer than the wait),
// through two hours of broker time, heartbeats once every Lease/3,
// re-reads the queue once every PollInterval, and writes its "waiting for
// startup lock" line once every LogInterval.
//
// The session waits on two timers at once (heartbeat and poll) beside the
// topic's records, which a clock that steps at each After cannot model
// (each After would advance the time by its own pause, so time would pass
// at the sum of both); the package's fakeClock, whose timers fire as the
// test advances it and which is also the topic's (broker's) clock, drives
// it instead, in steps of a tenth of the poll interval, each step once the session
// has armed both its timers again (so it never lags the clock). The lines are
// counted by clocktest.Logs, the pace tests' one counter.
func TestSessionWaitPace(t *testing.T) {
	h := newMemHarness(t)
	holder := h.config("a")
	holder.HoldLease = 3 * time.Hour
	a := h.start(h.lock(holder))
	h.eventually("a holds", 0, func() bool { return a.acquired(t) })

	cfg := h.config("b")
	cfg.Ready = nil
	cfg.HoldLease = 3 * time.Hour
	logs := &clocktest.Logs{}
	cfg.Logger = logs.Logger()
	b := h.start(h.lock(cfg))
	h.eventually("b's request", 0, func() bool { return h.recordsOf("b") > 0 })

	const horizon = 2 * time.Hour
	step := cfg.PollInterval / 10
	for range int(horizon / step) {
		h.clock.Advance(step)
		// The session took what fired: both its timers are armed again.
		for wait := time.Now().Add(5 * time.Second); h.clock.pending() < 2; runtime.Gosched() {
			if time.Now().After(wait) {
				t.Fatalf("the session did not re-arm its heartbeat and poll timers at %v", h.clock.Now())
			}
		}
		if _, done := b.result(); done {
			t.Fatalf("b's Acquire returned (%v) while a held: %s", b.err, h.logs.String())
		}
	}
	writes := h.recordsOf("b")
	if most := int(horizon/(cfg.Lease/3)) + 3; writes > most {
		t.Errorf("b wrote %d records in %v, want at most %d (a heartbeat every %v)", writes, horizon, most, cfg.Lease/3)
	}
	if least := int(horizon/(cfg.Lease/3)) / 2; writes < least {
		t.Errorf("b wrote %d records in %v, want at least %d: its heartbeats stopped, so it would be skipped as dead", writes, horizon, least)
	}
	const line = "waiting for startup lock"
	if n, most := logs.Count(line), int(horizon/DefaultLogInterval)+3; n == 0 || n > most {
		t.Errorf("%d %q lines in %v, want between 1 and %d (one every %v)", n, line, horizon, most, DefaultLogInterval)
	}
	if n := logs.Total(); n > logs.Count(line)+5 {
		t.Errorf("%d log lines in all, %d of them wait lines: the session logs more than its wait line", n, logs.Count(line))
	}
	t.Logf("b: %d records, %d wait lines, %d lines in all in %v of broker time", writes, logs.Count(line), logs.Total(), horizon)
}

// pending is how many timers wait on the clock.
func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// recordsOf is how many records identity wrote to the topic.
func (h *memHarness) recordsOf(identity string) int {
	n := 0
	for _, r := range h.topic.records() {
		if k, err := decodeKey(r.Key); err == nil && k.Identity == identity {
			n++
		}
	}
	return n
}

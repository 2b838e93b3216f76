// Package clocktest holds the test helpers of the pace tests (issue 48):
// a clock that drives a wait loop through hours of injected time and
// records its pauses, and a log handler that counts lines by message. It
// lives outside the _test files so that every package with a wait loop
// (gate, gate/peers, lock, apply, doctor) asserts its pace with one rule
// instead of a copy each. Only tests import it. It sits beside
// internal/clock, not under it: no package imports its ancestor.
package clocktest

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
)

// startUnix is Start in seconds.
const startUnix = 1700000000

// Horizon is a Stepping clock that ends a wait loop's context once
// horizon of injected time has passed, or once the loop has paused limit
// times (a loop that does not wait at all, which the old broker gate
// became after its backoff overflowed, would otherwise never reach the
// horizon). It records every pause, so that a test asserts the loop's
// pace, not the wall clock.
type Horizon struct {
	*clock.Stepping
	horizon time.Duration
	limit   int
	cancel  context.CancelFunc

	mu     sync.Mutex
	pauses []time.Duration
	// atPause is the injected time (since Start) of each pause.
	atPause []time.Duration
}

// Start is the injected time at which a Horizon clock starts.
func Start() time.Time { return time.Unix(startUnix, 0) }

// NewHorizon returns a Horizon clock at Start that calls cancel once
// horizon has passed or limit pauses were made.
func NewHorizon(horizon time.Duration, limit int, cancel context.CancelFunc) *Horizon {
	return &Horizon{Stepping: clock.NewStepping(Start()), horizon: horizon, limit: limit, cancel: cancel}
}

// After records the pause, advances the clock by d, and ends the loop's
// context at the horizon or the limit (a loop must wait on its context
// beside the clock, as every wait loop of connect-init does).
func (c *Horizon) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.pauses = append(c.pauses, d)
	c.atPause = append(c.atPause, c.Stepping.Now().Sub(Start()))
	n := len(c.pauses)
	c.mu.Unlock()
	ch := c.Stepping.After(d)
	if c.Elapsed() >= c.horizon || n >= c.limit {
		c.cancel()
		// A pause that never ends: the loop ends by its context, not by
		// a random pick between two ready cases of its select, so that
		// the number of tries is exact, not one or two more by chance.
		return make(chan time.Time)
	}
	return ch
}

// Elapsed is the injected time since Start.
func (c *Horizon) Elapsed() time.Duration { return c.Stepping.Now().Sub(Start()) }

// Pauses is how many pauses the loop made.
func (c *Horizon) Pauses() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pauses)
}

// AssertPace checks every pause is at least least, and that no minute of
// injected time holds more than perMinute pauses.
func (c *Horizon) AssertPace(t testing.TB, least time.Duration, perMinute int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, d := range c.pauses {
		if d < least {
			t.Fatalf("pause %d of %d is %v, want at least %v: the loop spins", i+1, len(c.pauses), d, least)
		}
	}
	byMinute := map[int64]int{}
	for _, at := range c.atPause {
		byMinute[int64(at/time.Minute)]++
	}
	for m, n := range byMinute {
		if n > perMinute {
			t.Fatalf("%d attempts in minute %d of injected time, want at most %d", n, m, perMinute)
		}
	}
}

// AssertReached fails t when the loop stopped before the horizon: a loop
// that gives up early proves nothing about its pace over hours.
func (c *Horizon) AssertReached(t testing.TB) {
	t.Helper()
	if e := c.Elapsed(); e < c.horizon {
		t.Fatalf("the loop stopped after %v of injected time and %d pauses, want %v: it stopped waiting (or hit the limit of %d pauses: it spins)",
			e, c.Pauses(), c.horizon, c.limit)
	}
}

// Logs is a slog.Handler that counts records by message, at every level
// (a debug line a look is a line a look too).
type Logs struct {
	mu   sync.Mutex
	msgs map[string]int
	all  int
}

// Enabled is true at every level.
func (h *Logs) Enabled(context.Context, slog.Level) bool { return true }

// Handle counts r.
func (h *Logs) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.msgs == nil {
		h.msgs = map[string]int{}
	}
	h.msgs[r.Message]++
	h.all++
	return nil
}

// WithAttrs returns h: attributes do not change the count.
func (h *Logs) WithAttrs([]slog.Attr) slog.Handler { return h }

// WithGroup returns h.
func (h *Logs) WithGroup(string) slog.Handler { return h }

// Count is how many records had message msg.
func (h *Logs) Count(msg string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.msgs[msg]
}

// Total is how many records there were.
func (h *Logs) Total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.all
}

// Logger returns a logger writing to h.
func (h *Logs) Logger() *slog.Logger { return slog.New(h) }

package lock

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/clocktest"
)

// Waiting costs nothing (issue 48): a lock topic that cannot be opened
// for two hours of injected time (a broker that does not come up) is
// opened again once a second, and warned about once every LogInterval
// (5 s), not at every try: a line a second before.
func TestOpenRetryingPace(t *testing.T) {
	h := newMemHarness(t)
	cfg := h.config("w")
	const horizon = 2 * time.Hour
	cfg.UnavailableAfter = horizon
	// The horizon is a backstop: UnavailableAfter ends the wait first.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktest.NewHorizon(horizon+time.Minute, 4*int(horizon/time.Second), cancel)
	cfg.Clock = clk
	l := h.newLock(cfg)
	var opened atomic.Int64
	l.open = func() (recordLog, logBounds, error) {
		opened.Add(1)
		return nil, logBounds{}, errors.New("lock: reading the end offset: kafka server: leader not available (test)")
	}
	_, _, _, err := l.openRetrying(ctx)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("openRetrying = %v, want ErrUnavailable after %v", err, horizon)
	}
	if e := clk.Elapsed(); e < horizon {
		t.Fatalf("gave up after %v of injected time, want %v (UnavailableAfter)", e, horizon)
	}
	clk.AssertPace(t, time.Second, int(time.Minute/time.Second)+1)
	if n, most := opened.Load(), int64(horizon/time.Second)+2; n > most {
		t.Errorf("opened %d times in %v, want at most %d (one a second)", n, horizon, most)
	}
	warnings := strings.Count(h.logs.String(), "the startup lock topic cannot be opened yet")
	if most := int(horizon/DefaultLogInterval) + 2; warnings > most {
		t.Errorf("%d warnings in %v, want at most %d (one every %v)", warnings, horizon, most, DefaultLogInterval)
	}
	if warnings == 0 {
		t.Error("no warning at all while the topic could not be opened")
	}
}

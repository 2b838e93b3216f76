package startup

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
)

// looks answers Look from a list, then repeats its last answer.
type looks struct {
	answers []gate.GroupOpenness
	errs    []error
	n       atomic.Int32
}

func (l *looks) Look(context.Context) (gate.GroupOpenness, error) {
	i := int(l.n.Add(1)) - 1
	i = min(i, len(l.answers)-1)
	var err error
	if i < len(l.errs) {
		err = l.errs[i]
	}
	return l.answers[i], err
}

// waitingAcquirer waits in the queue until ctx ends, or returns nil when
// permit is closed (the permit came first).
type waitingAcquirer struct {
	permit    chan struct{}
	cancelled atomic.Bool
}

func (a *waitingAcquirer) Acquire(ctx context.Context) error {
	select {
	case <-ctx.Done():
		a.cancelled.Store(true)
		return ctx.Err()
	case <-a.permit:
		return nil
	}
}

func openWatch(l *looks, clk clock.Clock, logs *strings.Builder) *groupOpenWatch {
	return newGroupOpenWatch(l, slog.New(slog.NewTextHandler(logs, nil)), clk)
}

var closed, opened = gate.GroupOpenness{Why: "the group is PreparingRebalance"}, gate.GroupOpenness{Open: true, Members: 1, AssignmentOffset: 3, Why: "ours"}

// A waiter stops waiting (its Acquire is cancelled, which withdraws its
// request) at the first poll that sees the group open; a failed look is
// "not open"; the message is logged once.
func TestAcquireUntilOpenStopsWaitingWhenTheGroupOpens(t *testing.T) {
	clk := clock.NewStepping(time.Unix(0, 0))
	var logs strings.Builder
	l := &looks{answers: []gate.GroupOpenness{closed, {}, closed, opened}, errs: []error{nil, errors.New("coordinator moving")}}
	a := &waitingAcquirer{permit: make(chan struct{})}
	open, err := acquireUntilOpen(context.Background(), a, openWatch(l, clk, &logs))
	if !open || err != nil || !a.cancelled.Load() {
		t.Fatalf("open %v, err %v, Acquire cancelled %v; want open, nil, cancelled", open, err, a.cancelled.Load())
	}
	if got := l.n.Load(); got != 4 {
		t.Errorf("%d looks, want 4 (open at the 4th)", got)
	}
	if w := clk.Waited(); w != 4*groupOpenPoll {
		t.Errorf("waited %s on the clock, want 4 polls of %s", w, groupOpenPoll)
	}
	if n := strings.Count(logs.String(), MsgGroupOpen); n != 1 {
		t.Errorf("%q logged %d times, want once:\n%s", MsgGroupOpen, n, logs.String())
	}
}

// A permit that comes before the group opens is kept: the normal path.
func TestAcquireUntilOpenKeepsAPermit(t *testing.T) {
	var logs strings.Builder
	a := &waitingAcquirer{permit: make(chan struct{})}
	close(a.permit)
	blocked := make(chan time.Time) // the watch never looks
	open, err := acquireUntilOpen(context.Background(), a, openWatch(&looks{answers: []gate.GroupOpenness{opened}}, stuckClock{blocked}, &logs))
	if open || err != nil || a.cancelled.Load() {
		t.Fatalf("open %v, err %v, cancelled %v; want the permit (false, nil, not cancelled)", open, err, a.cancelled.Load())
	}
}

// With each (no watch), or a group that never opens (stand-in workers),
// only the queue decides, and the caller's end is an error.
func TestAcquireUntilOpenWithoutAnOpenGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &waitingAcquirer{permit: make(chan struct{})}
	var logs strings.Builder
	l := &looks{answers: []gate.GroupOpenness{closed}}
	clk := &countingClock{after: func(n int) {
		if n == 20 {
			cancel()
		}
	}}
	open, err := acquireUntilOpen(ctx, a, openWatch(l, clk, &logs))
	if open || !errors.Is(err, context.Canceled) {
		t.Fatalf("open %v, err %v; want not open, context.Canceled", open, err)
	}
	if strings.Contains(logs.String(), MsgGroupOpen) {
		t.Errorf("logged %q for a group that never opened", MsgGroupOpen)
	}
	b := &waitingAcquirer{permit: make(chan struct{})}
	close(b.permit)
	if open, err := acquireUntilOpen(context.Background(), b, nil); open || err != nil {
		t.Fatalf("each: open %v, err %v", open, err)
	}
}

type stuckClock struct{ ch chan time.Time }

func (c stuckClock) Now() time.Time                       { return time.Unix(0, 0) }
func (c stuckClock) After(time.Duration) <-chan time.Time { return c.ch }

// countingClock fires every After at once and calls after with the count.
type countingClock struct {
	n     atomic.Int32
	after func(int)
}

func (c *countingClock) Now() time.Time { return time.Unix(0, 0) }
func (c *countingClock) After(time.Duration) <-chan time.Time {
	c.after(int(c.n.Add(1)))
	ch := make(chan time.Time, 1)
	ch <- time.Unix(0, 0)
	return ch
}

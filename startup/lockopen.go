package startup

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
)

// CONNECT_INIT_LOCK_JOINS=first: the startup lock serialises the first
// join of a group only.
//
// Why one join at a time is not needed after the first: incident 1's
// endless rebalance needed a member that reads another config topic (a
// worker of another Connect cluster with the same group.id, or a stale
// one); serialising the joins let the first worker settle the group before
// the others came, so none of them could be the one to meet such a member
// in a storm. Once the group is open (Stable, at least one member, every
// member caught up with its assignment and proven ours by the group gate's
// own rules: gate.GroupOpener), that proof is there: the group gate before
// the lock, and the peers step after it (which reads the group again when
// the lock step waited) still refuse a foreign member, so a worker that
// goes with the others cannot join a foreign member's group. What is left
// is Connect's own, ordinary join of several workers into a healthy group
// (a rebalance or two, no "Forcing rebalance"), which bare workers do too.

// groupOpenPoll is how often a waiter looks whether the group opened: the
// lock's own poll (TakeLockProfiled's PollInterval).
const groupOpenPoll = 250 * time.Millisecond

// groupOpenLookTimeout bounds one look (a describe, and for a new
// snapshot the reads of the identity rules).
const groupOpenLookTimeout = 5 * time.Second

// MsgGroupOpen is logged once when a worker stops waiting for the startup
// lock because the group is open.
const MsgGroupOpen = "startup lock not needed: the worker group is open"

// groupLooker is gate.GroupOpener as the watch uses it.
type groupLooker interface {
	Look(ctx context.Context) (gate.GroupOpenness, error)
}

// groupOpenWatch looks at the group for TakeLockProfiled.
type groupOpenWatch struct {
	opener groupLooker
	log    *slog.Logger
	clk    clock.Clock
	// looking serialises the looks (the poll's and the readiness
	// check's): the opener keeps state between them.
	looking sync.Mutex
	mu      sync.Mutex
	open    bool
	// stop cancels the wait in the queue (set by acquireUntilOpen).
	stop context.CancelFunc
}

func newGroupOpenWatch(o groupLooker, log *slog.Logger, clk clock.Clock) *groupOpenWatch {
	return &groupOpenWatch{opener: o, log: log, clk: clock.Or(clk)}
}

// look reports whether the group is open now, and logs it once when it
// is. A failed look is "not open": the queue goes on as before.
func (w *groupOpenWatch) look(ctx context.Context) bool {
	// Bounded, so that a look held up by a broker that went away does not
	// hold up the readiness check waiting for its turn to look.
	ctx, cancel := context.WithTimeout(ctx, groupOpenLookTimeout)
	defer cancel()
	w.looking.Lock()
	res, err := w.opener.Look(ctx)
	w.looking.Unlock()
	if err != nil {
		w.log.Debug("the worker group could not be described for the startup lock", "error", err)
		return false
	}
	if !res.Open {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.open {
		w.open = true
		w.log.Info(MsgGroupOpen, "members", res.Members, "leader", res.Leader, "assignment_offset", res.AssignmentOffset,
			"why", res.Why, "setting", "CONNECT_INIT_LOCK_JOINS=first")
	}
	return true
}

// isOpen reports whether a look found the group open.
func (w *groupOpenWatch) isOpen() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.open
}

// holderReady is the readiness check's hook: the holder before us is
// ready, so the group may just have opened; when it has, the wait stops
// here rather than by releasing the holder and claiming its permit (the
// same moment, but every waiter then goes the one way: the open group).
// It reports whether the group is open.
func (w *groupOpenWatch) holderReady(ctx context.Context) bool {
	if !w.look(ctx) {
		return false
	}
	w.mu.Lock()
	stop := w.stop
	w.mu.Unlock()
	if stop != nil {
		stop()
	}
	return true
}

// acquirer is the lock as acquireUntilOpen uses it.
type acquirer interface {
	Acquire(ctx context.Context) error
}

// acquireUntilOpen waits in the queue (l.Acquire) and, with a watch (w not
// nil), looks at the group every groupOpenPoll meanwhile: once it is open
// the wait is cancelled, which withdraws our request with a tombstone
// (lock.Lock's end), and open is true. A permit taken first is kept: open
// is then false and err nil, the normal path.
func acquireUntilOpen(ctx context.Context, l acquirer, w *groupOpenWatch) (open bool, err error) {
	if w == nil {
		return false, l.Acquire(ctx)
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	w.mu.Lock()
	w.stop = cancel
	w.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-actx.Done():
				return
			case <-w.clk.After(groupOpenPoll):
			}
			if w.look(actx) {
				cancel()
				return
			}
		}
	}()
	err = l.Acquire(actx)
	cancel()
	<-done
	if err != nil && w.isOpen() && ctx.Err() == nil {
		return true, nil
	}
	return false, err
}

package lock

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Members that die, restart, withdraw or share an identity, against kfake.

func TestDeadWaiterSkipped(t *testing.T) {
	h := newHarness(t)
	ready := newReadyTable()
	holder := h.start(h.newLock(h.config("holder")))
	h.eventually("holder holds", 0, func() bool { return holder.acquired(t) })

	dl := h.newLock(h.config("dead"))
	dl.crashOnCancel = true
	dead := h.start(dl)
	h.eventually("dead is queued", 0, func() bool { _, ok := entry(h.snapshot(dl), "dead"); return ok })
	cfg := h.config("live")
	cfg.Ready = ready.check
	live := h.start(h.newLock(cfg))
	h.eventually("live is queued", 0, func() bool { _, ok := entry(h.snapshot(dl), "live"); return ok })
	dead.cancel() // killed: no withdrawal
	if err := dead.wait(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("dead: %v", err)
	}
	// Past dead's lease (30s) in broker time, carried by live's heartbeats.
	h.eventually("dead to be seen dead", 5*time.Second, func() bool {
		e, _ := entry(h.snapshot(dl), "dead")
		return e.State == StateDead
	})
	if live.acquired(t) {
		t.Fatal("live acquired while holder was not ready")
	}
	ready.set("holder")
	h.eventually("live holds, skipping dead", time.Second, func() bool { return live.acquired(t) })
	if len(h.logs.lines("live", "skipping a silent waiter")) == 0 {
		t.Error(`no "skipping a silent waiter" log line`)
	}
}

func TestRestartWhileWaitingKeepsTicket(t *testing.T) {
	h := newHarness(t)
	ready := newReadyTable()
	holder := h.start(h.newLock(h.config("holder")))
	h.eventually("holder holds", 0, func() bool { return holder.acquired(t) })

	cfgW := h.config("w")
	cfgW.Ready = ready.check
	w1l := h.newLock(cfgW)
	w1l.crashOnCancel = true
	w1 := h.start(w1l)
	var ticket int64
	h.eventually("w queued", 0, func() bool {
		e, ok := entry(h.snapshot(w1l), "w")
		ticket = e.Ticket
		return ok
	})
	cfgX := h.config("x")
	cfgX.Ready = ready.check
	x := h.start(h.newLock(cfgX))
	h.eventually("x queued", 0, func() bool { _, ok := entry(h.snapshot(w1l), "x"); return ok })
	w1.cancel()
	_ = w1.wait(t)

	w2 := h.start(h.newLock(cfgW)) // the restart
	h.eventually("w re-requested", 0, func() bool {
		return len(h.logs.lines("w", "keeping the place in the queue")) > 0
	})
	snap := h.snapshot(w1l)
	if len(snap.Entries) != 3 {
		t.Fatalf("want 3 entries (holder, w, x), got %+v", snap.Entries)
	}
	if e, _ := entry(snap, "w"); e.Ticket != ticket {
		t.Fatalf("restarted w has ticket %d, want its old %d", e.Ticket, ticket)
	}
	ready.set("holder")
	h.eventually("w holds", time.Second, func() bool { return w2.acquired(t) })
	if x.acquired(t) {
		t.Fatal("x overtook the restarted w")
	}
}

func TestRestartAfterHoldingGoesToTheBack(t *testing.T) {
	h := newHarness(t)
	cfgA := h.config("a")
	a1 := h.start(h.newLock(cfgA))
	h.eventually("a holds", 0, func() bool { return a1.acquired(t) })
	b := h.start(h.newLock(h.config("b")))
	h.eventually("b queued", 0, func() bool { _, ok := entry(h.snapshot(a1.lock), "b"); return ok })

	// a's process died and restarts: its old hold is void, and it queues
	// behind b, which proceeds without waiting for the hold lease.
	a2 := h.start(h.newLock(cfgA))
	h.eventually("b holds", time.Second, func() bool { return b.acquired(t) })
	snap := h.snapshot(b.lock)
	ea, _ := entry(snap, "a")
	eb, _ := entry(snap, "b")
	if ea.State != StateWaiting || ea.Ticket <= eb.Ticket {
		t.Fatalf("restarted a = %+v, want waiting behind b = %+v", ea, eb)
	}
	if a2.acquired(t) {
		t.Fatal("restarted a acquired while b holds")
	}
	if n := len(snap.Entries); n != 2 {
		t.Fatalf("want one entry per member, got %+v", snap.Entries)
	}
}

func TestWithdrawOnCancel(t *testing.T) {
	h := newHarness(t)
	holder := h.start(h.newLock(h.config("holder")))
	h.eventually("holder holds", 0, func() bool { return holder.acquired(t) })
	w := h.start(h.newLock(h.config("w")))
	h.eventually("w queued", 0, func() bool { _, ok := entry(h.snapshot(w.lock), "w"); return ok })
	w.cancel()
	if err := w.wait(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire = %v, want context.Canceled", err)
	}
	if _, ok := entry(h.snapshot(holder.lock), "w"); ok {
		t.Fatal("w still queued after withdrawing")
	}
	recs := h.rawRecords()
	last := recs[len(recs)-1]
	k, _ := decodeKey(last.Key)
	if k.Identity != "w" || k.Release || last.Value != nil {
		t.Fatalf("last record = key %s value %q, want w's tombstone", last.Key, last.Value)
	}
	if len(h.logs.lines("w", "withdrew from the startup lock queue")) != 1 {
		t.Error("no withdrawal log line")
	}
}

func TestSupersededBySameIdentity(t *testing.T) {
	h := newHarness(t)
	holder := h.start(h.newLock(h.config("holder")))
	h.eventually("holder holds", 0, func() bool { return holder.acquired(t) })
	old := h.start(h.newLock(h.config("w")))
	h.eventually("old w queued", 0, func() bool { _, ok := entry(h.snapshot(old.lock), "w"); return ok })
	newer := h.start(h.newLock(h.config("w")))
	h.eventually("old w gives up", time.Second, func() bool {
		err, ok := old.result()
		if ok && !errors.Is(err, ErrSuperseded) {
			t.Fatalf("old w: %v, want ErrSuperseded", err)
		}
		return ok
	})
	h.never("newer w failing", 5, time.Second, func() bool {
		if err, ok := newer.result(); ok {
			t.Fatalf("newer w: %v", err)
		}
		return false
	})
	if e, _ := entry(h.snapshot(holder.lock), "w"); e.State != StateWaiting {
		t.Fatalf("w = %+v, want waiting", e)
	}
}

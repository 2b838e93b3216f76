package lock

import (
	"context"
	"testing"
	"time"
)

// A holder that releases passes its permit on at once, long before its
// hold lease; the waiter then holds, and the released member has left the
// queue.
func TestMemReleasePassesThePermitOn(t *testing.T) {
	h := newMemHarness(t)
	a := h.start(h.lock(h.config("a")))
	h.eventually("a holds", time.Second, func() bool { return a.acquired(t) })
	b := h.start(h.lock(h.config("b")))
	// b waits: the 10 min hold lease is far away, and nobody says a is ready.
	h.never("b holds while a does", 20, time.Second, func() bool { return b.acquired(t) })
	if err := a.lock.Release(context.Background()); err != nil {
		t.Fatalf("Release: %v", err)
	}
	h.eventually("b holds after a released", time.Second, func() bool { return b.acquired(t) })
	snap := h.snap(1)
	for _, e := range snap.Entries {
		if e.Identity == "a" {
			t.Errorf("the released member is still in the queue: %+v", e)
		}
	}
	if got := countState(snap, StateHolding); got != 1 {
		t.Errorf("%d holders after the release, want 1 (b): %+v", got, snap.Entries)
	}
	// A cancelled context writes nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := len(h.topic.records())
	if err := b.lock.Release(ctx); err == nil || len(h.topic.records()) != before {
		t.Errorf("Release with a cancelled context: %v, %d records written", err, len(h.topic.records())-before)
	}
}

// A waiter that leaves the queue without claiming (the group opened) can
// still release the holder it saw ready: the hold ends at once instead of
// at its hold lease, and a release naming another offset ends nothing.
func TestMemReleaseHolderEndsThatHoldOnly(t *testing.T) {
	h := newMemHarness(t)
	a := h.start(h.lock(h.config("a")))
	h.eventually("a holds", time.Second, func() bool { return a.acquired(t) })
	var hold Entry
	for _, e := range h.snap(1).Entries {
		if e.Identity == "a" {
			hold = e
		}
	}
	if hold.State != StateHolding {
		t.Fatalf("a is %s, want holding", hold.State)
	}
	c := h.lock(h.config("c"))
	if err := c.ReleaseHolder(context.Background(), Holder{Identity: "a", Offset: hold.Offset - 1}); err != nil {
		t.Fatalf("ReleaseHolder (another offset): %v", err)
	}
	if got := countState(h.snap(1), StateHolding); got != 1 {
		t.Errorf("a release naming another offset ended the hold: %d holders", got)
	}
	if err := c.ReleaseHolder(context.Background(), Holder{Identity: "a", Offset: hold.Offset}); err != nil {
		t.Fatalf("ReleaseHolder: %v", err)
	}
	snap := h.snap(1)
	if got := countState(snap, StateHolding); got != 0 {
		t.Errorf("%d holders after the release, want 0: %+v", got, snap.Entries)
	}
	for _, e := range snap.Entries {
		if e.Identity == "a" && (e.State != StateReleased || e.ReleaseReason != "ready" || e.ReleasedBy != "c") {
			t.Errorf("a after the release: %+v", e)
		}
	}
}

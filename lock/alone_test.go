package lock

import (
	"testing"
)

// Alone in the queue behind another member's stale hold (a restart into a
// running group: the holder before us joined long ago and nobody released
// it), a waiter asks whether the holder is ready as soon as its own
// request is read back, not a poll interval later: with the fake clock
// never advanced, only that first check can let it through (issue 39).
func TestMemAloneBehindAStaleHoldChecksReadinessAtOnce(t *testing.T) {
	h := newMemHarness(t)
	ready := newReadyTable()
	a := h.start(h.lock(h.config("a")))
	h.eventually("a holds", 0, func() bool { return a.acquired(t) })
	ready.set("a") // a joined its group long ago
	cfg := h.config("b")
	cfg.Ready = ready.check
	b := h.start(h.lock(cfg))
	h.eventually("b holds without any time passing", 0, func() bool { return b.acquired(t) })
	snap := h.snap(1)
	if e, ok := entry(snap, "a"); !ok || e.State != StateReleased || e.ReleaseReason != "ready" {
		t.Fatalf("a's hold: %+v (found %v), want released as ready", e, ok)
	}
}

package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Protocol tests over the in-memory record log: no broker, every append
// under the test's control.

// requireLiveWaiters fails unless snap shows exactly n live waiters whose
// latest record is younger than their lease: proof that they ran (and
// heartbeat) through the window just observed, not that they never started.
func requireLiveWaiters(t *testing.T, snap Snapshot, n int, window time.Duration) {
	t.Helper()
	got := 0
	for _, e := range snap.Entries {
		if e.State != StateWaiting {
			continue
		}
		got++
		if e.Age > e.Lease || window <= e.Lease {
			t.Fatalf("waiter %s: last record %v old over a %v window; the window must exceed the %v lease for this to prove it heartbeat", e.Identity, e.Age, window, e.Lease)
		}
	}
	if got != n {
		t.Fatalf("%d live waiters, want %d: %+v", got, n, snap.Entries)
	}
}

func TestMemPermitsNoFourthHolder(t *testing.T) {
	h := newMemHarness(t)
	ready := newReadyTable()
	var asked atomic.Int32
	var cs []*contender
	for i := range 6 {
		cfg := h.config(fmt.Sprintf("w%d", i))
		cfg.Permits = 3
		cfg.Ready = func(ctx context.Context, hd Holder) (bool, error) {
			asked.Add(1)
			return ready.check(ctx, hd)
		}
		cs = append(cs, h.start(h.lock(cfg)))
	}
	holders := func() []*contender {
		var out []*contender
		for _, c := range cs {
			if c.acquired(t) {
				out = append(out, c)
			}
		}
		return out
	}
	h.eventually("three holders", time.Second, func() bool { return len(holders()) >= 3 })
	before := len(h.topic.records())
	asked.Store(0)
	const window = 40 * time.Second // longer than the 30s lease
	h.never("a fourth holder", 40, time.Second, func() bool { return len(holders()) > 3 })
	snap := h.snap(3)
	if got := countState(snap, StateHolding); got != 3 {
		t.Fatalf("%d holders, want 3: %+v", got, snap.Entries)
	}
	requireLiveWaiters(t, snap, 3, window)
	if n := len(h.topic.records()) - before; n < 3*3 {
		t.Errorf("%d records written by the waiters during %v, want at least 3 heartbeats each", n, window)
	}
	if asked.Load() == 0 {
		t.Error("no waiter asked Ready about the holders during the window")
	}
	ready.set(holders()[0].id)
	h.eventually("a fourth holder", time.Second, func() bool { return len(holders()) == 4 })
}

func lastRecordOf(t *testing.T, recs []rawRecord, identity string) rawRecord {
	t.Helper()
	for i := len(recs) - 1; i >= 0; i-- {
		if k, err := decodeKey(recs[i].Key); err == nil && k.Identity == identity && !k.Release {
			return recs[i]
		}
	}
	t.Fatalf("no record of %s", identity)
	return rawRecord{}
}

// lastLog is the log the newest session opened.
func lastLog(t *memTopic) *memLog {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.logs[len(t.logs)-1]
}

// end: an acquired session leaves its claim standing, a cancelled one
// withdraws (a tombstone), a crashed one leaves its entry to its lease;
// each closes its log exactly once.
func TestMemEndPaths(t *testing.T) {
	h := newMemHarness(t)
	holder := h.start(h.lock(h.config("holder")))
	h.eventually("holder holds", 0, func() bool { return holder.acquired(t) })
	holderLog := lastLog(h.topic)

	w := h.start(h.lock(h.config("w")))
	h.eventually("w queued", 0, func() bool { _, ok := entry(h.snap(1), "w"); return ok })
	wLog := lastLog(h.topic)
	cl := h.lock(h.config("crash"))
	cl.crashOnCancel = true
	crash := h.start(cl)
	h.eventually("crash queued", 0, func() bool { _, ok := entry(h.snap(1), "crash"); return ok })
	crashLog := lastLog(h.topic)

	w.cancel()
	crash.cancel()
	for _, c := range []*contender{w, crash} {
		if err := c.wait(t); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: Acquire = %v, want context.Canceled", c.id, err)
		}
	}
	recs := h.topic.records()
	var v memberValue
	if r := lastRecordOf(t, recs, "holder"); json.Unmarshal(r.Value, &v) != nil || v.State != StateHolding {
		t.Errorf("holder's last record = %s, want its claim", r.Value)
	}
	if r := lastRecordOf(t, recs, "w"); r.Value != nil {
		t.Errorf("w's last record = %s, want a tombstone", r.Value)
	}
	if r := lastRecordOf(t, recs, "crash"); r.Value == nil {
		t.Error("crash left a tombstone, want its entry left to its lease")
	}
	for name, m := range map[string]*memLog{"holder": holderLog, "w": wLog, "crash": crashLog} {
		if n := m.closes.Load(); n != 1 {
			t.Errorf("%s: log closed %d times, want 1", name, n)
		}
	}
	if len(h.logs.lines("w", "withdrew from the startup lock queue")) != 1 || len(h.logs.lines("crash", "withdrew")) != 0 {
		t.Errorf("withdrawal log lines wrong:\n%s", h.logs.String())
	}
}

// A claim the log gives up on is forgotten and made again; it never counts
// as held until a claim is read back.
func TestMemLostClaimIsRetried(t *testing.T) {
	h := newMemHarness(t)
	var lost atomic.Int32
	h.topic.fail = func(_, value []byte) bool {
		var v memberValue
		if json.Unmarshal(value, &v) == nil && v.State == StateHolding && lost.Load() == 0 {
			lost.Add(1)
			return true
		}
		return false
	}
	a := h.start(h.lock(h.config("a")))
	h.eventually("a holds", time.Second, func() bool { return a.acquired(t) })
	if lost.Load() != 1 {
		t.Fatalf("%d claims lost, want 1", lost.Load())
	}
	if len(h.logs.lines("a", "writing to the startup lock topic failed")) == 0 {
		t.Error("no log line for the lost claim")
	}
	holds := 0
	for _, r := range h.topic.records() {
		var v memberValue
		if json.Unmarshal(r.Value, &v) == nil && v.State == StateHolding {
			holds++
		}
	}
	if holds != 1 {
		t.Errorf("%d holding records, want the one retried claim", holds)
	}
	if !strings.Contains(h.logs.String(), "acquired startup lock") {
		t.Error("no acquired line")
	}
}

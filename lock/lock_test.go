package lock

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFIFOUnder32Contenders(t *testing.T) {
	h := newHarness(t)
	ready := newReadyTable()
	const n = 32
	var (
		mu    sync.Mutex
		order []string
	)
	var cs []*contender
	for i := range n {
		cfg := h.config(fmt.Sprintf("worker-%02d", i))
		cfg.Lease = time.Hour // nobody may look dead while the test crawls
		cfg.HoldLease = 2 * time.Hour
		cfg.Ready = ready.check
		l := h.newLock(cfg)
		c := &contender{id: cfg.Identity, lock: l}
		cs = append(cs, c)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := c.lock.Acquire(context.Background()); err != nil {
				t.Errorf("%s: %v", c.id, err)
				return
			}
			mu.Lock()
			order = append(order, c.id)
			mu.Unlock()
		}()
	}
	close(start)
	acquiredCount := func() int { mu.Lock(); defer mu.Unlock(); return len(order) }

	var snap Snapshot
	h.eventually("all 32 requests in the queue", 0, func() bool {
		snap = h.snapshot(cs[0].lock)
		return len(snap.Entries) == n
	})
	want := sortedByTicket(snap)
	for i := range n {
		h.eventually(fmt.Sprintf("acquisition #%d", i+1), time.Second, func() bool { return acquiredCount() >= i+1 })
		mu.Lock()
		got := append([]string(nil), order...)
		mu.Unlock()
		if len(got) != i+1 {
			t.Fatalf("after releasing %d holders, %d members hold: %v", i, len(got), got)
		}
		if got[i] != want[i] {
			t.Fatalf("acquisition #%d: got %s, want %s (ticket order %v)", i+1, got[i], want[i], want)
		}
		ready.set(got[i])
	}
	wg.Wait()
	final := h.snapshot(cs[0].lock)
	if got := countState(final, StateHolding); got != 1 {
		t.Errorf("final holders = %d, want 1 (the last one, never released)", got)
	}
	e, _ := entry(final, want[0])
	if e.State != StateReleased || e.ReleaseReason != "ready" || e.ReleasedBy == "" {
		t.Errorf("first holder = %+v, want released for readiness", e)
	}
}

func TestPermits(t *testing.T) {
	h := newHarness(t)
	ready := newReadyTable()
	var cs []*contender
	for i := range 6 {
		cfg := h.config(fmt.Sprintf("w%d", i))
		cfg.Permits = 3
		cfg.Ready = ready.check
		cs = append(cs, h.start(h.newLock(cfg)))
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
	// 40s of fake time, beyond the 30s lease: the waiters are only still
	// live afterwards if they ran and heartbeat all along.
	h.never("a fourth holder", 40, time.Second, func() bool { return len(holders()) > 3 })
	snap := h.snapshot(cs[0].lock)
	if got := countState(snap, StateHolding); got != 3 {
		t.Fatalf("snapshot shows %d holders, want 3: %+v", got, snap.Entries)
	}
	requireLiveWaiters(t, snap, 3, 40*time.Second)
	ready.set(holders()[0].id)
	h.eventually("a fourth holder", time.Second, func() bool { return len(holders()) == 4 })
	h.never("a fifth holder", 40, time.Second, func() bool { return len(holders()) > 4 })
	requireLiveWaiters(t, h.snapshot(cs[0].lock), 2, 40*time.Second)
}

func TestHoldLeaseExpiry(t *testing.T) {
	h := newHarness(t)
	cfgA := h.config("a")
	cfgA.HoldLease = 2 * time.Minute
	a := h.start(h.newLock(cfgA)) // never ready
	h.eventually("a holds", 0, func() bool { return a.acquired(t) })
	began := h.clock.Now()
	b := h.start(h.newLock(h.config("b")))
	h.eventually("b holds after a's hold lease", time.Second, func() bool { return b.acquired(t) })
	if waited := h.clock.Now().Sub(began); waited < 2*time.Minute {
		t.Fatalf("b acquired %v after a, before a's 2m hold lease ran out", waited)
	}
	e, _ := entry(h.snapshot(b.lock), "a")
	if e.State != StateReleased || e.ReleaseReason != "hold lease expired" || e.ReleasedBy != "b" {
		t.Fatalf("a = %+v, want released by b for an expired hold lease", e)
	}
}

func TestReleaseOnReadiness(t *testing.T) {
	h := newHarness(t)
	ready := newReadyTable()
	var checked sync.Map
	cfgA := h.config("a")
	a := h.start(h.newLock(cfgA))
	h.eventually("a holds", 0, func() bool { return a.acquired(t) })
	cfgB := h.config("b")
	cfgB.Ready = func(ctx context.Context, hd Holder) (bool, error) {
		checked.Store(hd.Identity, hd)
		return ready.check(ctx, hd)
	}
	b := h.start(h.newLock(cfgB))
	h.eventually("b waiting", time.Second, func() bool { return len(h.logs.lines("b", "waiting for startup lock")) > 0 })
	h.never("b acquires while a is not ready", 20, time.Second, func() bool { return b.acquired(t) })
	v, ok := checked.Load("a")
	if !ok {
		t.Fatal("Ready was never asked about the holder")
	}
	if hd := v.(Holder); hd.URL != "http://a:8083/" || hd.HeldFor <= 0 {
		t.Errorf("Ready got %+v", hd)
	}
	ready.set("a")
	h.eventually("b holds", time.Second, func() bool { return b.acquired(t) })
	e, _ := entry(h.snapshot(b.lock), "a")
	if e.State != StateReleased || e.ReleaseReason != "ready" || e.ReleasedBy != "b" {
		t.Fatalf("a = %+v, want released by b as ready", e)
	}
}

func TestCompactionKeepsTopicSmall(t *testing.T) {
	h := newHarness(t)
	ready := newReadyTable()
	ids := []string{"a", "b", "c", "d"}
	var cs []*contender
	for _, id := range ids {
		cfg := h.config(id)
		cfg.Ready = ready.check
		cs = append(cs, h.start(h.newLock(cfg)))
		h.eventually(id+" queued", 0, func() bool { _, ok := entry(h.snapshot(cs[0].lock), id); return ok })
	}
	// A few minutes of heartbeats, then each proceeds in turn.
	h.never("anyone but a holding", 120, time.Second, func() bool {
		return cs[1].acquired(t) || cs[2].acquired(t) || cs[3].acquired(t)
	})
	for _, c := range cs {
		h.eventually(c.id+" holds", time.Second, func() bool { return c.acquired(t) })
		ready.set(c.id)
	}
	before := h.snapshot(cs[0].lock)
	n := len(h.rawRecords())
	h.cluster.Compact()
	recs := h.rawRecords()
	keys := map[string]bool{}
	for _, r := range recs {
		keys[string(r.Key)] = true
	}
	// At most one record per key, plus the active (never compacted) batch.
	if len(recs) > len(keys)+1 || len(recs) >= n {
		t.Fatalf("after compaction %d records for %d keys (before: %d)", len(recs), len(keys), n)
	}
	t.Logf("compaction: %d records -> %d (%d keys)", n, len(recs), len(keys))
	after := h.snapshot(cs[0].lock)
	if fmt.Sprint(stripAges(before)) != fmt.Sprint(stripAges(after)) {
		t.Fatalf("compaction changed the queue:\nbefore %+v\nafter  %+v", before.Entries, after.Entries)
	}
}

// stripAges keeps what must survive compaction unchanged.
func stripAges(s Snapshot) []string {
	var out []string
	for _, e := range s.Entries {
		out = append(out, fmt.Sprintf("%s/%s/%d/%d/%s", e.Identity, e.State, e.Ticket, e.Position, e.ReleaseReason))
	}
	return out
}

func TestProgressLogs(t *testing.T) {
	h := newHarness(t)
	ready := newReadyTable()
	a := h.start(h.newLock(h.config("a")))
	h.eventually("a holds", 0, func() bool { return a.acquired(t) })
	cfg := h.config("b")
	cfg.Ready = ready.check
	b := h.start(h.newLock(cfg))
	h.eventually("a waiting line", time.Second, func() bool { return len(h.logs.lines("b", "waiting for startup lock")) > 0 })
	line := h.logs.lines("b", "waiting for startup lock")[0]
	for _, want := range []string{"position=2", "of=2", "holder=http://a:8083/", "held_for=", "lease=10m0s"} {
		if !strings.Contains(line, want) {
			t.Errorf("waiting line %q lacks %q", line, want)
		}
	}
	// Throttled: about one line per LogInterval (5s) while nothing changes.
	before := len(h.logs.lines("b", "waiting for startup lock"))
	h.never("b acquiring", 20, time.Second, func() bool { return b.acquired(t) })
	if got := len(h.logs.lines("b", "waiting for startup lock")) - before; got < 3 || got > 5 {
		t.Errorf("%d waiting lines in 20s, want about 4", got)
	}
	ready.set("a")
	h.eventually("b holds", time.Second, func() bool { return b.acquired(t) })
	acq := h.logs.lines("b", "acquired startup lock")
	if len(acq) != 1 || !strings.Contains(acq[0], "waited=2") {
		t.Errorf("acquired lines = %q, want one with waited=2xs", acq)
	}
}

func TestAcquireMissingTopic(t *testing.T) {
	h := newHarness(t)
	cfg := h.config("a")
	cfg.Topic = "no-such-topic"
	err := h.newLock(cfg).Acquire(context.Background())
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("Acquire on a missing topic = %v", err)
	}
}

// Scopes share the topic but not the queue; junk in the topic is ignored.
func TestScopesShareTopicAndJunkIgnored(t *testing.T) {
	h := newHarness(t)
	h.produce(recordKey{Scope: "connect-cluster", Identity: "junk"}, map[string]string{"state": "bogus"})
	h.produce(recordKey{Scope: "other-cluster", Identity: "x"}, memberValue{V: 1, Identity: "x", State: StateHolding, Ticket: -1, LeaseMS: 30000, HoldLeaseMS: 600000})
	a := h.start(h.newLock(h.config("a")))
	h.eventually("a holds despite the other scope's holder", 0, func() bool { return a.acquired(t) })
	cfg := h.config("b")
	cfg.Scope = "other-cluster"
	b := h.start(h.newLock(cfg))
	h.eventually("b waiting", time.Second, func() bool { return len(h.logs.lines("b", "waiting for startup lock")) > 0 })
	h.never("b acquiring while x holds its scope", 10, time.Second, func() bool { return b.acquired(t) })
	snap := h.snapshot(b.lock)
	if len(snap.Entries) != 2 || snap.Entries[0].Identity != "x" || snap.Entries[1].Identity != "b" {
		t.Fatalf("other scope's queue: %+v", snap.Entries)
	}
}

package lock

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// logBuilder writes a synthetic lock log for pure state tests.
type logBuilder struct {
	t    *testing.T
	recs []rawRecord
	base time.Time
}

func (b *logBuilder) member(at time.Duration, id string, state State, inc string, ticket int64) int64 {
	v, _ := json.Marshal(memberValue{V: 1, Identity: id, State: state, Ticket: ticket, LeaseMS: 30000, HoldLeaseMS: 180000, Incarnation: inc})
	return b.add(at, recordKey{Scope: "s", Identity: id}, v)
}

func (b *logBuilder) release(at time.Duration, id string, holdOffset int64) int64 {
	v, _ := json.Marshal(releaseValue{V: 1, Identity: id, State: StateReleased, HoldOffset: holdOffset, Reason: "ready", By: "x"})
	return b.add(at, recordKey{Scope: "s", Identity: id, Release: true}, v)
}

func (b *logBuilder) tombstone(at time.Duration, id string) int64 {
	return b.add(at, recordKey{Scope: "s", Identity: id}, nil)
}

func (b *logBuilder) add(at time.Duration, k recordKey, v []byte) int64 {
	off := int64(len(b.recs))
	b.recs = append(b.recs, rawRecord{Offset: off, Timestamp: b.base.Add(at), Key: k.encode(), Value: v})
	return off
}

// view applies the first n records (all if n < 0).
func (b *logBuilder) view(n int) *view {
	st := newView("s")
	if n < 0 {
		n = len(b.recs)
	}
	for _, r := range b.recs[:n] {
		if err := st.apply(r); err != nil {
			b.t.Fatalf("apply %d: %v", r.Offset, err)
		}
	}
	return st
}

// compacted keeps the latest record per key, as Kafka's cleaner does.
func (b *logBuilder) compacted() *view {
	last := map[string]int{}
	for i, r := range b.recs {
		last[string(r.Key)] = i
	}
	st := newView("s")
	for i, r := range b.recs {
		if last[string(r.Key)] == i {
			_ = st.apply(r)
		}
	}
	return st
}

func newLog(t *testing.T) *logBuilder { return &logBuilder{t: t, base: time.Unix(1_000_000, 0)} }

func TestEntitledFIFOAndPermits(t *testing.T) {
	b := newLog(t)
	b.member(0, "a", StateWaiting, "ia", -1)
	b.member(time.Second, "b", StateWaiting, "ib", -1)
	b.member(2*time.Second, "c", StateWaiting, "ic", -1)
	st := b.view(-1)
	now := st.now
	for id, want := range map[string]bool{"a": true, "b": false, "c": false} {
		if got := st.entitled(id, "i"+id, 1, now); got != want {
			t.Errorf("permits 1: entitled(%s) = %v", id, got)
		}
	}
	for id, want := range map[string]bool{"a": true, "b": true, "c": false} {
		if got := st.entitled(id, "i"+id, 2, now); got != want {
			t.Errorf("permits 2: entitled(%s) = %v", id, got)
		}
	}
	if st.entitled("a", "other-incarnation", 1, now) {
		t.Error("entitled although our key holds another incarnation's record")
	}
}

// Two waiters disagree about whether "a" is dead; both claim. Whichever
// claim comes second in the log is invalid, whatever its writer believed.
func TestClaimRaceOnlyOneValid(t *testing.T) {
	b := newLog(t)
	b.member(0, "a", StateWaiting, "ia", -1)
	b.member(5*time.Second, "b", StateWaiting, "ib", -1)
	b.member(36*time.Second, "b", StateWaiting, "ib", 1) // a silent for 36s > 30s
	// b validates its claim against the state before it: a is dead.
	claimB := b.member(37*time.Second, "b", StateHolding, "ib", 1)
	st := b.view(int(claimB))
	if !st.entitled("b", "ib", 1, b.recs[claimB].Timestamp) {
		t.Fatal("b should be entitled with a dead")
	}
	// a comes back (a pause) and claims from its stale view; validated
	// against the log before its claim, b already holds.
	b.member(38*time.Second, "a", StateWaiting, "ia", 0)
	claimA := b.member(38*time.Second, "a", StateHolding, "ia", 0)
	st = b.view(int(claimA))
	if st.entitled("a", "ia", 1, b.recs[claimA].Timestamp) {
		t.Fatal("a's claim must be invalid: b holds")
	}
	// The invalid claim still counts as a holder until a supersedes it
	// (over-counting only delays).
	st = b.view(-1)
	if q := st.queue(st.now); len(q.holders) != 2 {
		t.Fatalf("holders = %d, want 2 (b, and a's unconfirmed claim)", len(q.holders))
	}
	b.member(39*time.Second, "a", StateWaiting, "ia", 0)
	st = b.view(-1)
	q := st.queue(st.now)
	if len(q.holders) != 1 || q.holders[0].identity != "b" || len(q.waiters) != 1 || q.waiters[0].ticket != 0 {
		t.Fatalf("after a's correction: holders %v waiters %v", ids(q.holders), ids(q.waiters))
	}
}

func TestReleaseAppliesOnlyToItsHold(t *testing.T) {
	b := newLog(t)
	b.member(0, "a", StateWaiting, "i1", -1)
	hold1 := b.member(0, "a", StateHolding, "i1", 0)
	b.release(time.Second, "a", hold1)
	b.member(2*time.Second, "a", StateWaiting, "i2", -1) // restart
	hold2 := b.member(3*time.Second, "a", StateHolding, "i2", 3)
	b.release(4*time.Second, "a", hold1) // a late duplicate release of hold 1
	for name, st := range map[string]*view{"full": b.view(-1), "compacted": b.compacted()} {
		m := st.members["a"]
		if m.offset != hold2 || st.stateOf(m, st.now) != StateHolding {
			t.Errorf("%s: a = %+v status %v, want holding hold 2", name, m, st.stateOf(m, st.now))
		}
	}
}

func TestExpiryAndDeadness(t *testing.T) {
	b := newLog(t)
	b.member(0, "h", StateHolding, "ih", -1)
	b.member(0, "w", StateWaiting, "iw", -1)
	b.member(time.Minute, "x", StateWaiting, "ix", -1)
	st := b.view(-1)
	if s := st.stateOf(st.members["w"], st.now); s != StateDead {
		t.Errorf("w silent 1m with a 30s lease: %v", s)
	}
	if s := st.stateOf(st.members["h"], st.now); s != StateHolding {
		t.Errorf("h held 1m of 3m: %v", s)
	}
	if st.entitled("x", "ix", 1, st.now) {
		t.Error("x entitled while h holds")
	}
	b.member(3*time.Minute+time.Second, "x", StateWaiting, "ix", 2)
	st = b.view(-1)
	if s := st.stateOf(st.members["h"], st.now); s != StateExpired {
		t.Errorf("h held 3m1s of 3m: %v", s)
	}
	if !st.entitled("x", "ix", 1, st.now) {
		t.Error("x not entitled after h expired and w died")
	}
}

// Decisions depend only on the latest record per key, so a reader that
// starts after compaction decides as one that read everything.
func TestCompactionPreservesDecisions(t *testing.T) {
	b := newLog(t)
	b.member(0, "a", StateWaiting, "ia", -1)
	b.member(time.Second, "b", StateWaiting, "ib", -1)
	b.member(2*time.Second, "c", StateWaiting, "ic", -1)
	ha := b.member(3*time.Second, "a", StateHolding, "ia", 0)
	b.member(10*time.Second, "b", StateWaiting, "ib", 1)
	b.member(11*time.Second, "c", StateWaiting, "ic", 2)
	b.release(12*time.Second, "a", ha)
	b.tombstone(13*time.Second, "c")
	b.member(14*time.Second, "d", StateWaiting, "id", -1)
	full, comp := b.view(-1), b.compacted()
	if !full.now.Equal(comp.now) {
		t.Fatalf("now differs: %v vs %v", full.now, comp.now)
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		for _, permits := range []int{1, 2} {
			inc := "i" + id
			if f, c := full.entitled(id, inc, permits, full.now), comp.entitled(id, inc, permits, comp.now); f != c {
				t.Errorf("entitled(%s, permits %d): full %v, compacted %v", id, permits, f, c)
			}
		}
	}
	if f, c := fmt.Sprint(stripAges(full.snapshot("t", 1))), fmt.Sprint(stripAges(comp.snapshot("t", 1))); f != c {
		t.Fatalf("snapshots differ: %v vs %v", f, c)
	}
}

func TestForeignAndJunkRecordsIgnored(t *testing.T) {
	st := newView("s")
	ts := time.Unix(5, 0)
	if err := st.apply(rawRecord{Offset: 0, Timestamp: ts, Key: []byte("not json"), Value: []byte("x")}); err == nil {
		t.Error("junk key accepted")
	}
	other := recordKey{Scope: "other", Identity: "a"}
	if err := st.apply(rawRecord{Offset: 1, Timestamp: ts.Add(time.Second), Key: other.encode(), Value: []byte("{")}); err != nil {
		t.Errorf("other scope: %v", err)
	}
	if len(st.members) != 0 || !st.now.Equal(ts.Add(time.Second)) || st.next != 2 {
		t.Errorf("state after junk: %+v", st)
	}
}

func ids(ms []*member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.identity)
	}
	return out
}

// A request written again by the same incarnation before it read the first
// back (ticket -1 twice) keeps the first one's offset as its ticket in
// every reader's view, as its writer does; otherwise it would fall behind
// members that came after it.
func TestViewRepeatedRequestKeepsFirstTicket(t *testing.T) {
	b := &logBuilder{t: t, base: time.Unix(1000, 0)}
	b.member(0, "a", StateWaiting, "ia", -1)
	b.member(0, "b", StateWaiting, "ib", -1)
	b.member(time.Second, "a", StateWaiting, "ia", -1) // a's request again, after a failover
	b.member(2*time.Second, "c", StateWaiting, "ic", -1)
	b.member(3*time.Second, "c", StateWaiting, "ic2", -1) // another incarnation: a new ticket
	v := b.view(-1)
	if got := v.members["a"].ticket; got != 0 {
		t.Fatalf("a's ticket = %d, want 0 (its first request)", got)
	}
	if got := v.members["c"].ticket; got != 4 {
		t.Fatalf("c's new incarnation's ticket = %d, want 4 (its own request)", got)
	}
	q := v.queue(v.now)
	if len(q.waiters) != 3 || q.waiters[0].identity != "a" || q.waiters[1].identity != "b" {
		t.Fatalf("queue %v, want a before b", q.waiters)
	}
}

package doctor

import (
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/connect-init/connect-init/gate"
)

// The measured rejoin: how long a worker of the group stays out of it
// when it is restarted or replaced (a rolling update, an orchestrator's
// restart). scheduled.rebalance.max.delay.ms should be longer than that,
// or a departed worker's tasks move to the others and back once more
// (checks.IDRebalanceDelayBelowRejoin).
//
// Only the watcher can measure it: one look of the group shows who is in
// it, not who left and when. doctor --watch compares each Stable look with
// the ones before. What identifies "the same worker" across a restart:
// not the member id (Connect has no static membership: a restarted worker
// joins with a new one, connect-<client id>-<uuid>), nor the client id
// (Connect's default is "connect-N" per JVM, the same on every worker of
// older versions), nor the client host (a replaced container gets a new
// address, a restarted one may keep it). The advertised REST URL of the
// member metadata is the worker's identity to its peers; with a stable
// hostname (Compose, a StatefulSet) a restarted worker comes back under
// it. A Swarm task that advertises its overlay address (examples/swarm)
// may come back under another one: a member with a URL the group never
// had, appearing while a departure is unmatched, is that departure's
// replacement (the oldest first, as Swarm replaces one task at a time).
// A member without a URL (undecodable metadata) is identified by client
// id and host.
//
// The startup lock's topic does not give one-shot doctor the same figure:
// its records carry broker timestamps, but a worker that stops writes
// nothing there (the old worker's departure is not in it), and a lone
// restarted worker's hold ends by its lease or the next waiter, not at its
// join. Its request and claim say when the new process reached the lock,
// which is the start-up profile's business, not the group's gap.
//
// Resolution: the watcher sees the group at its looks only. A rejoin is
// known to lie between AtLeast (the span of the looks that saw the worker
// away: 0 when none did, a restart between two looks) and AtMost (from
// the last look that saw it in to the first that saw it back). The finding
// compares the delay with AtLeast, so it never fires on the interval's
// blur; a shorter --interval narrows the two.

// DefaultRejoinMemory is how long a measured rejoin counts as recent:
// rolling updates are rare, and the finding should hold until the delay
// is raised, not vanish with the next quiet hour.
const DefaultRejoinMemory = 7 * 24 * time.Hour

// Rejoin is one worker's measured absence from the group.
type Rejoin struct {
	// Worker is its identity: the advertised URL, or "client <id> host
	// <host>" without one. Replaced names the URL it came back under when
	// that differs (a replacement at a new address).
	Worker   string `json:"worker"`
	Replaced string `json:"replaced_by,omitempty"`
	// Left is the last look that saw it in the group, Back the first
	// Stable look that saw it (or its replacement) in again.
	Left time.Time `json:"last_seen"`
	Back time.Time `json:"back"`
	// AtLeast and AtMost bound its absence (see the package comment).
	AtLeast time.Duration `json:"at_least_ns"`
	AtMost  time.Duration `json:"at_most_ns"`
}

// departure is a worker seen gone and not back yet.
type departure struct {
	worker              string
	lastIn              time.Time // the last look with it in
	firstAway, lastAway time.Time // the Stable looks without it
}

// RejoinTracker follows the group's members across the watcher's looks
// and measures each rejoin. Safe for concurrent use (the metrics are
// gathered while looks go on).
type RejoinTracker struct {
	// Memory is how long a rejoin counts as recent (default
	// DefaultRejoinMemory); a departure unmatched for that long (a worker
	// scaled away) is forgotten.
	Memory time.Duration

	mu      sync.Mutex
	members map[string]memberSeen // identity -> the member seen last
	ever    map[string]bool       // identities the group ever had
	gone    []*departure          // oldest first
	rejoins []Rejoin
	total   int
}

type memberSeen struct {
	memberID string
	at       time.Time
}

// NewRejoinTracker is a tracker with the default memory.
func NewRejoinTracker() *RejoinTracker { return &RejoinTracker{} }

func (t *RejoinTracker) memory() time.Duration {
	if t.Memory > 0 {
		return t.Memory
	}
	return DefaultRejoinMemory
}

// memberIdentity is what identifies a member's worker across a restart.
func memberIdentity(m gate.GroupMember) string {
	if u := strings.TrimRight(strings.TrimSpace(m.URL), "/"); u != "" {
		return u
	}
	return "client " + m.ClientID + " host " + m.ClientHost
}

// Observe records the group as a look at at saw it. Only a Stable
// snapshot with members counts: in a rebalance the member list is who has
// rejoined so far, not who left. A nil tracker or group records nothing.
func (t *RejoinTracker) Observe(at time.Time, g *gate.GroupReport) {
	if t == nil || g == nil || g.State != "Stable" || len(g.Members) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.members == nil {
		t.members, t.ever = map[string]memberSeen{}, map[string]bool{}
	}
	now := map[string]string{} // identity -> member id
	for _, m := range g.Members {
		now[memberIdentity(m)] = m.MemberID
	}
	first := len(t.ever) == 0
	// Who left: in the last Stable look, not in this one; or in both
	// under a new member id (a restart between two looks).
	for id, was := range t.members {
		mid, in := now[id]
		switch {
		case !in:
			t.gone = append(t.gone, &departure{worker: id, lastIn: was.at, firstAway: at, lastAway: at})
			delete(t.members, id)
		case mid != was.memberID:
			t.record(Rejoin{Worker: id, Left: was.at, Back: at, AtMost: at.Sub(was.at)})
		}
	}
	// Forget the departures away too long to be a restart (a worker
	// scaled away for good).
	kept := t.gone[:0]
	for _, d := range t.gone {
		if at.Sub(d.lastIn) <= t.memory() {
			kept = append(kept, d)
		}
	}
	t.gone = kept
	// Who came back: the same identity first, then a new one as the
	// oldest unmatched departure's replacement.
	var fresh []string
	for id := range now {
		if _, known := t.members[id]; known {
			continue
		}
		if d := t.takeDeparture(id); d != nil {
			t.record(Rejoin{Worker: id, Left: d.lastIn, Back: at, AtLeast: d.lastAway.Sub(d.firstAway), AtMost: at.Sub(d.lastIn)})
		} else if !t.ever[id] && !first {
			fresh = append(fresh, id)
		}
	}
	sort.Strings(fresh) // a deterministic pairing when several arrive at once
	for _, id := range fresh {
		if len(t.gone) == 0 {
			break // a new worker (the group grew), not a replacement
		}
		d := t.gone[0]
		t.gone = t.gone[1:]
		t.record(Rejoin{Worker: d.worker, Replaced: id, Left: d.lastIn, Back: at, AtLeast: d.lastAway.Sub(d.firstAway), AtMost: at.Sub(d.lastIn)})
	}
	// Still away: this look saw them away too.
	for _, d := range t.gone {
		d.lastAway = at
	}
	for id, mid := range now {
		t.members[id] = memberSeen{memberID: mid, at: at}
		t.ever[id] = true
	}
	t.forget(at)
}

// takeDeparture removes and returns the departure of worker id, if any.
func (t *RejoinTracker) takeDeparture(id string) *departure {
	for i, d := range t.gone {
		if d.worker == id {
			t.gone = append(t.gone[:i], t.gone[i+1:]...)
			return d
		}
	}
	return nil
}

func (t *RejoinTracker) record(r Rejoin) {
	t.rejoins = append(t.rejoins, r)
	t.total++
}

// forget drops rejoins older than the memory.
func (t *RejoinTracker) forget(now time.Time) {
	kept := t.rejoins[:0]
	for _, r := range t.rejoins {
		if now.Sub(r.Back) <= t.memory() {
			kept = append(kept, r)
		}
	}
	t.rejoins = kept
}

// Longest is the recent rejoin with the longest AtLeast (ties: the longest
// AtMost), and false when none was measured.
func (t *RejoinTracker) Longest() (Rejoin, bool) {
	if t == nil {
		return Rejoin{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var best Rejoin
	found := false
	for _, r := range t.rejoins {
		if !found || r.AtLeast > best.AtLeast || (r.AtLeast == best.AtLeast && r.AtMost > best.AtMost) {
			best, found = r, true
		}
	}
	return best, found
}

// Total is the number of rejoins measured since the watcher started.
func (t *RejoinTracker) Total() int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

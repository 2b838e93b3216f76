package checks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Ids of the rebalance-delay checks.
const (
	IDRebalanceDelayDefault     = "rebalance-delay-default"
	IDRebalanceDelayBelowRejoin = "rebalance-delay-below-rejoin"
)

// ConnectDefaultRebalanceDelay is Connect's default
// scheduled.rebalance.max.delay.ms (DistributedConfig): 5 minutes.
const ConnectDefaultRebalanceDelay = 5 * time.Minute

// Rebalance is what the worker's settings say about the delay before the
// group's leader hands a departed worker's tasks to the others.
//
// With incremental cooperative rebalancing (connect.protocol compatible or
// sessioned, the default since Kafka 2.3), the leader keeps a departed
// worker's tasks unassigned for scheduled.rebalance.max.delay.ms, and a
// worker that joins meanwhile receives them only when it ends; Connect has
// no static membership, so a restarted worker is a new member. In a
// rolling update every follower replaced before the leader costs its
// tasks up to that delay (measured: docs/benchmarks.md, rolling update).
type Rebalance struct {
	GroupID string
	// Delay is scheduled.rebalance.max.delay.ms as set ("" when unset:
	// Connect's default).
	Delay string
	// Protocol is connect.protocol as set ("" when unset: sessioned).
	Protocol string
	// Rejoin is how long a restarted or replaced worker of this group
	// was measured away from it, at least (0: unknown): doctor --watch
	// measures it between its looks (doctor.RejoinTracker), so the true
	// figure lies between Rejoin and RejoinAtMost.
	Rejoin       time.Duration
	RejoinAtMost time.Duration
	// RejoinWorker names the worker that took that long.
	RejoinWorker string
}

// rejoinText is the measured rejoin with both bounds and the worker.
func (r Rebalance) rejoinText() string {
	who := ""
	if r.RejoinWorker != "" {
		who = " (" + r.RejoinWorker + ")"
	}
	return fmt.Sprintf("the longest recent rejoin measured by doctor --watch%s: away at least %s, at most %s", who,
		r.Rejoin.Round(time.Second), max(r.RejoinAtMost, r.Rejoin).Round(time.Second))
}

// suggestedDelay is the delay the fix names for a measured rejoin: its
// upper bound plus a 30 s margin, rounded up to 10 s.
func (r Rebalance) suggestedDelay() time.Duration {
	d := max(r.RejoinAtMost, r.Rejoin) + 30*time.Second
	if rem := d % (10 * time.Second); rem != 0 {
		d += 10*time.Second - rem
	}
	return d
}

// delay is the delay in effect, and whether it could be read.
func (r Rebalance) delay() (time.Duration, bool) {
	if strings.TrimSpace(r.Delay) == "" {
		return ConnectDefaultRebalanceDelay, true
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(r.Delay), 10, 64)
	if err != nil || ms < 0 {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// cooperative reports whether the delay applies: not under the eager
// protocol, which reassigns everything at every rebalance.
func (r Rebalance) cooperative() bool {
	return !strings.EqualFold(strings.TrimSpace(r.Protocol), "eager")
}

func (r Rebalance) delayText() string {
	d, _ := r.delay()
	if strings.TrimSpace(r.Delay) == "" {
		return fmt.Sprintf("scheduled.rebalance.max.delay.ms is not set: Connect's default, %d ms (%s)", d.Milliseconds(), d)
	}
	return fmt.Sprintf("scheduled.rebalance.max.delay.ms=%s (%s)", strings.TrimSpace(r.Delay), d)
}

// rebalanceDelayFix is the fix of both rules; with a measured rejoin it
// names the value: the rejoin's upper bound plus a margin.
func rebalanceDelayFix(r Rebalance) string {
	if r.Rejoin <= 0 && r.RejoinAtMost <= 0 {
		return rebalanceDelayFixUnmeasured
	}
	d := r.suggestedDelay()
	return fmt.Sprintf("raise CONNECT_SCHEDULED_REBALANCE_MAX_DELAY_MS (scheduled.rebalance.max.delay.ms) to at least %d (%s: the measured rejoin's upper bound, %s, plus a 30 s margin), so that a restarted or replaced worker is back before the leader hands its tasks to the others; measure again with a shorter doctor --watch --interval for a tighter figure",
		d.Milliseconds(), d, max(r.RejoinAtMost, r.Rejoin).Round(time.Second))
}

const rebalanceDelayFixUnmeasured = "set CONNECT_SCHEDULED_REBALANCE_MAX_DELAY_MS (scheduled.rebalance.max.delay.ms) a little above the time a replaced worker needs to start and join the group (doctor --watch measures it; docs/benchmarks.md, Rolling update, has the Swarm example's), so that a rolling update costs a departed worker's tasks that long instead of 5 minutes, and the returning worker still receives them"

// rebalanceChecks is the table RebalanceChecks returns: data, not code, so that one rule
// reads as one entry (issue 49).
var rebalanceChecks = []Check[Rebalance]{
	{
		ID:       IDRebalanceDelayDefault,
		Severity: Warning,
		Applies:  Rebalance.cooperative,
		Test: func(r Rebalance) bool {
			d, ok := r.delay()
			return ok && d == ConnectDefaultRebalanceDelay
		},
		Subject: func(r Rebalance) string { return "group " + r.GroupID },
		Summary: func(Rebalance) string {
			return "a worker that leaves the group (a rolling update, a restart) leaves its tasks unassigned for 5 minutes"
		},
		Evidence: func(r Rebalance) string {
			e := r.delayText() + "; the leader keeps a departed worker's tasks unassigned that long, whoever replaces it and however fast"
			if r.Rejoin > 0 || r.RejoinAtMost > 0 {
				e += "; this group's workers do restart: " + r.rejoinText()
			}
			return e
		},
		Fix: rebalanceDelayFix,
	},
	{
		ID:       IDRebalanceDelayBelowRejoin,
		Severity: Warning,
		Applies:  Rebalance.cooperative,
		Test: func(r Rebalance) bool {
			d, ok := r.delay()
			return ok && r.Rejoin > 0 && d < r.Rejoin
		},
		Subject: func(r Rebalance) string { return "group " + r.GroupID },
		Summary: func(Rebalance) string {
			return "the rebalance delay ends before a replaced worker is back: its tasks move to the others, then back once more"
		},
		Evidence: func(r Rebalance) string {
			return fmt.Sprintf("%s, below %s", r.delayText(), r.rejoinText())
		},
		Fix: rebalanceDelayFix,
	},
}

// RebalanceChecks are the rebalance-delay rules, for doctor.
func RebalanceChecks() []Check[Rebalance] { return slices.Clone(rebalanceChecks) }

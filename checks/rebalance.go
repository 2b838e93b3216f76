package checks

import (
	"fmt"
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
	// Rejoin is how long a replaced worker of this group takes to start
	// and join, when known (0: unknown).
	Rejoin time.Duration
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

const rebalanceDelayFix = "set CONNECT_SCHEDULED_REBALANCE_MAX_DELAY_MS (scheduled.rebalance.max.delay.ms) a little above the time a replaced worker needs to start and join the group (its start-up profile plus the JVM's start; 90000-120000 on the measured Swarm), so that a rolling update costs a departed worker's tasks that long instead of 5 minutes, and the returning worker still receives them"

// RebalanceChecks are the rebalance-delay rules, for doctor.
func RebalanceChecks() []Check[Rebalance] {
	return []Check[Rebalance]{
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
				return r.delayText() + "; the leader keeps a departed worker's tasks unassigned that long, whoever replaces it and however fast"
			},
			Fix: func(Rebalance) string { return rebalanceDelayFix },
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
				return fmt.Sprintf("%s, below the %s a replaced worker of this group took to start and join", r.delayText(), r.Rejoin.Round(time.Second))
			},
			Fix: func(Rebalance) string { return rebalanceDelayFix },
		},
	}
}

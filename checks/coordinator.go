package checks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Ids of the coordinator checks.
const (
	IDConsumerOffsetsMissing  = "consumer-offsets-missing"
	IDCoordinatorNotAvailable = "coordinator-not-available"
	IDConsumerOffsetsSingle   = "consumer-offsets-single-replica"
)

// Coordinator is what the coordinator gate read about the worker group's
// coordinator and its __consumer_offsets partition.
type Coordinator struct {
	GroupID string
	// ConsumerOffsetsMissing is true when __consumer_offsets does not
	// exist yet (doctor only: the gate's FindCoordinator creates it).
	ConsumerOffsetsMissing bool
	// Found is true once FindCoordinator answered; FindError says why it
	// did not.
	Found     bool
	FindError string
	// Partition is the group's partition of Partitions, with its leader,
	// replicas and in-sync replicas. When __consumer_offsets was not read
	// (Partitions 0), Partition is where the group would live with the
	// default 50 partitions, or -1.
	Partition  int32
	Partitions int
	Leader     int32
	Replicas   []int32
	ISR        []int32
	// OffsetsTopicReplicationFactor is the broker setting, "" if unread.
	OffsetsTopicReplicationFactor string
	// Brokers is the number of brokers in the cluster.
	Brokers int
	// Strict is CONNECT_INIT_STRICT: a single-replica partition is then an
	// error.
	Strict bool
	// DownReplicas are the partition's replicas whose broker is not live
	// (read when no coordinator was found).
	DownReplicas []DownBroker
}

// DownBroker is a replica's broker that is not live: its id and the line
// naming it with its state and last address.
type DownBroker struct {
	ID   int32
	Text string
}

// allReplicasDown reports whether every replica of the group's partition
// is on a broker that is not live (known only once the partition was read).
func (c Coordinator) allReplicasDown() bool {
	return c.Partitions > 0 && len(c.Replicas) > 0 && len(c.DownReplicas) == len(c.Replicas)
}

// lostEvidence is where the group lives when no coordinator was found:
// the partition, its replicas, ISR and leader, and the replicas down.
func (c Coordinator) lostEvidence() string {
	if c.Partitions == 0 {
		return "the group lives in __consumer_offsets partition " + c.partitionText()
	}
	s := fmt.Sprintf("the group lives in __consumer_offsets partition %d (abs(hashCode) %% %d): replicas %s, ISR %s, leader %s",
		c.Partition, c.Partitions, idList(c.Replicas), idList(c.ISR), leaderText(c.Leader))
	if len(c.DownReplicas) > 0 {
		down := make([]string, len(c.DownReplicas))
		for i, d := range c.DownReplicas {
			down[i] = d.Text
		}
		s += "; down: " + strings.Join(down, "; ")
	} else {
		s += "; every replica's broker is live"
	}
	return s
}

// idList is "[3, 1]", "[]" when empty.
func idList(ids []int32) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(int(id))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func leaderText(id int32) string {
	if id < 0 {
		return "none"
	}
	return strconv.Itoa(int(id))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func joinIDs(ids []int32) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(int(id))
	}
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, ", ")
}

// coordinatorChecks is the table CoordinatorChecks returns: data, not code, so that one rule
// reads as one entry (issue 49).
var coordinatorChecks = []Check[Coordinator]{
	{
		ID: IDConsumerOffsetsMissing, Severity: Info,
		Test:    func(c Coordinator) bool { return c.ConsumerOffsetsMissing },
		Subject: func(Coordinator) string { return "__consumer_offsets" },
		Summary: func(Coordinator) string {
			return "__consumer_offsets does not exist yet: no consumer group has ever run on this cluster"
		},
		Evidence: func(Coordinator) string {
			return "the brokers create it on the first FindCoordinator request, with offsets.topic.replication.factor replicas if that many brokers are up"
		},
		Fix: func(Coordinator) string {
			return "nothing to do: connect-init run and prepare trigger its creation only once every expected broker is up (doctor never does)"
		},
	},
	{
		ID: IDCoordinatorNotAvailable, Severity: Error, Transient: true,
		Test:    func(c Coordinator) bool { return !c.ConsumerOffsetsMissing && !c.Found && c.FindError != "" },
		Subject: func(c Coordinator) string { return c.GroupID },
		Summary: func(c Coordinator) string {
			return fmt.Sprintf("no coordinator can be found for the worker group %q", c.GroupID)
		},
		Evidence: func(c Coordinator) string {
			return c.FindError + "; " + c.lostEvidence()
		},
		Fix: func(c Coordinator) string {
			raise := "then raise its replication online so one broker loss cannot do this again: connect-init repair --topics=offsets prints the plan, connect-init repair --topics=offsets --execute carries it out (and set offsets.topic.replication.factor=3 on the brokers)"
			switch {
			case c.allReplicasDown():
				ids := make([]int32, len(c.DownReplicas))
				for i, d := range c.DownReplicas {
					ids[i] = d.ID
				}
				return fmt.Sprintf("bring broker %s back: every replica of __consumer_offsets partition %d is on it, and the offsets committed there are not available until it returns; %s",
					joinIDs(ids), c.Partition, raise)
			case c.Partitions > 0:
				return fmt.Sprintf("wait for the leader election of __consumer_offsets partition %d: it has live replicas, so a new leader should take over within seconds; if none does, check the controller's log", c.Partition)
			}
			return "the leader of that __consumer_offsets partition is down: bring its replicas' brokers back; " + raise
		},
	},
	{
		ID: IDConsumerOffsetsSingle, Severity: Warning,
		Escalate: func(c Coordinator) bool { return c.Strict },
		Test:     func(c Coordinator) bool { return c.Found && c.Partitions > 0 && c.Brokers >= 2 && len(c.ISR) < 2 },
		Subject:  func(c Coordinator) string { return fmt.Sprintf("__consumer_offsets-%d", c.Partition) },
		Summary: func(c Coordinator) string {
			return fmt.Sprintf("the worker group %q lives in __consumer_offsets partition %d, which has replicas %v and in-sync replicas %v",
				c.GroupID, c.Partition, c.Replicas, c.ISR)
		},
		Evidence: func(c Coordinator) string {
			return fmt.Sprintf("group %q -> __consumer_offsets partition %d (abs(hashCode) %% %d): replicas %v, ISR %v, leader %d, %d in-sync replica(s) on a %d-broker cluster; broker setting offsets.topic.replication.factor=%s; if broker %s stops, no worker can find its coordinator (FindCoordinator answers COORDINATOR_NOT_AVAILABLE)",
				c.GroupID, c.Partition, c.Partitions, c.Replicas, c.ISR, c.Leader, len(c.ISR), c.Brokers, orUnknown(c.OffsetsTopicReplicationFactor), joinIDs(c.ISR))
		},
		Fix: func(Coordinator) string {
			return "add replicas online: connect-init repair --topics=offsets prints the plan, connect-init repair --topics=offsets --execute carries it out (every committed offset stays); and set offsets.topic.replication.factor=3 on the brokers (it only applies when the topic is created)"
		},
	},
}

// CoordinatorChecks are the rules for the worker group's coordinator. The
// rule lists are functions, each call a new list, so that no importer can
// change the rules for the others.
func CoordinatorChecks() []Check[Coordinator] { return slices.Clone(coordinatorChecks) }

// partitionText is the group's partition, or the hint the gate computed
// (PartitionHint) when __consumer_offsets was not read.
func (c Coordinator) partitionText() string {
	if c.Partitions > 0 {
		return strconv.Itoa(int(c.Partition))
	}
	if c.Partition >= 0 {
		return fmt.Sprintf("%d (with the default 50 partitions)", c.Partition)
	}
	return "unknown"
}

package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"
	"unicode/utf16"

	"github.com/IBM/sarama"
)

// JavaStringHashCode is Java's String.hashCode: s[0]*31^(n-1) + ... over
// UTF-16 code units, in 32-bit two's complement arithmetic.
func JavaStringHashCode(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// GroupPartition is the __consumer_offsets partition that holds a group:
// Kafka's Utils.abs(groupId.hashCode()) % partitions, where Utils.abs maps
// Integer.MIN_VALUE to 0.
func GroupPartition(groupID string, partitions int) int32 {
	h := JavaStringHashCode(groupID)
	if h == -2147483648 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % int32(partitions)
}

// CoordinatorReport is what the coordinator gate found.
type CoordinatorReport struct {
	GroupID         string  `json:"group_id"`
	CoordinatorID   int32   `json:"coordinator_id"`
	CoordinatorAddr string  `json:"coordinator_address"`
	Partition       int32   `json:"partition"`
	Partitions      int     `json:"partitions"`
	Leader          int32   `json:"leader"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	// OffsetsTopicReplicationFactor is the broker setting, "" if unreadable.
	OffsetsTopicReplicationFactor string `json:"offsets_topic_replication_factor,omitempty"`
	Brokers                       int    `json:"brokers"`
	// Warning is set when the group's partition has fewer than two in-sync
	// replicas on a multi-broker cluster.
	Warning string `json:"warning,omitempty"`
}

// CoordinatorGate finds the worker group's coordinator (which makes the
// brokers create __consumer_offsets if needed, now that every broker is
// up) and checks that the group's partition survives a broker loss.
type CoordinatorGate struct {
	Client  sarama.Client
	Admin   sarama.ClusterAdmin
	GroupID string
	Log     *slog.Logger
	Clock   Clock
	// Strict turns the single-replica warning into a failure.
	Strict bool
	// Wait is false for doctor: one look, no retries.
	Wait bool
}

// Check runs the gate.
func (g *CoordinatorGate) Check(ctx context.Context) (*CoordinatorReport, error) {
	clock := g.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	rep := &CoordinatorReport{GroupID: g.GroupID, CoordinatorID: -1, Leader: -1, Partition: -1}
	var coord *sarama.Broker
	lastLog := clock.Now()
	for {
		err := g.Client.RefreshCoordinator(g.GroupID)
		if err == nil {
			coord, err = g.Client.Coordinator(g.GroupID)
		}
		if err == nil {
			break
		}
		if !g.Wait {
			return rep, &GateError{Gate: "coordinator", Err: fmt.Errorf("find coordinator of group %q: %s", g.GroupID, ExplainConnError(err))}
		}
		if clock.Now().Sub(lastLog) >= 5*time.Second {
			g.Log.Info("waiting for the group coordinator", "group", g.GroupID, "error", ExplainConnError(err))
			lastLog = clock.Now()
		}
		select {
		case <-ctx.Done():
			return rep, &GateError{Gate: "coordinator", Err: fmt.Errorf("no coordinator for group %q: %s", g.GroupID, ExplainConnError(err)),
				Fix: "the partition of __consumer_offsets that holds this group has no leader: bring its replicas' brokers back, or check the brokers' logs"}
		case <-clock.After(200 * time.Millisecond):
		}
	}
	rep.CoordinatorID = coord.ID()
	rep.CoordinatorAddr = coord.Addr()

	if err := g.Client.RefreshMetadata(consumerOffsetsTopic); err != nil {
		return rep, &GateError{Gate: "coordinator", Err: fmt.Errorf("describe %s: %s", consumerOffsetsTopic, ExplainConnError(err))}
	}
	parts, err := g.Client.Partitions(consumerOffsetsTopic)
	if err != nil || len(parts) == 0 {
		return rep, &GateError{Gate: "coordinator", Err: fmt.Errorf("describe %s: %v", consumerOffsetsTopic, err)}
	}
	rep.Partitions = len(parts)
	rep.Partition = GroupPartition(g.GroupID, len(parts))
	rep.Replicas, _ = g.Client.Replicas(consumerOffsetsTopic, rep.Partition)
	rep.ISR, _ = g.Client.InSyncReplicas(consumerOffsetsTopic, rep.Partition)
	if leader, err := g.Client.Leader(consumerOffsetsTopic, rep.Partition); err == nil {
		rep.Leader = leader.ID()
	}
	rep.Brokers = len(g.Client.Brokers())
	if configs, err := describeConfig(g.Admin, sarama.ConfigResource{Type: sarama.BrokerResource,
		Name: strconv.Itoa(int(rep.CoordinatorID)), ConfigNames: []string{offsetsTopicReplicationFactor}}); err == nil {
		rep.OffsetsTopicReplicationFactor = configs[offsetsTopicReplicationFactor]
	}
	if rep.Brokers >= 2 && len(rep.ISR) < 2 {
		rep.Warning = fmt.Sprintf("the worker group %q lives in %s partition %d, which has replicas %v and in-sync replicas %v: if broker %v stops, no worker can find its coordinator (FindCoordinator answers COORDINATOR_NOT_AVAILABLE); broker setting offsets.topic.replication.factor=%s; fix: set offsets.topic.replication.factor=3 on the brokers (it only applies when the topic is created) and reassign the partitions of %s to add replicas (kafka-reassign-partitions)",
			g.GroupID, consumerOffsetsTopic, rep.Partition, rep.Replicas, rep.ISR, rep.ISR, orUnknown(rep.OffsetsTopicReplicationFactor), consumerOffsetsTopic)
		if g.Strict {
			return rep, &GateError{Gate: "coordinator", Err: errors.New(rep.Warning)}
		}
		g.Log.Warn(rep.Warning, "partition", rep.Partition, "replicas", fmt.Sprint(rep.Replicas), "isr", fmt.Sprint(rep.ISR))
	} else {
		g.Log.Info("group coordinator found", "group", g.GroupID, "coordinator", rep.CoordinatorID,
			"partition", rep.Partition, "replicas", fmt.Sprint(rep.Replicas), "isr", fmt.Sprint(rep.ISR))
	}
	return rep, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

package checks

import (
	"fmt"
	"slices"
	"strconv"
)

// Ids of the topic checks.
const (
	IDInternalTopicMissing      = "internal-topic-missing"
	IDTopicConfigsUnreadable    = "topic-configs-unreadable"
	IDConfigTopicPartitions     = "config-topic-partitions"
	IDTopicNotCompacted         = "topic-not-compacted"
	IDTopicUnderReplicated      = "topic-under-replicated"
	IDTopicReplicationBelowConf = "topic-replication-below-configured"
	IDTopicMinISRTooHigh        = "topic-min-insync-too-high"
)

// Topic is what the topic gate read about one of Connect's internal topics:
// the subject of the topic checks.
type Topic struct {
	// Role is config, offset or status.
	Role string
	Name string
	// TopicEnv and ReplicationEnv are the variables that set the topic's
	// name and replication factor (CONNECT_CONFIG_STORAGE_TOPIC, ...), for
	// the fixes.
	TopicEnv, ReplicationEnv string
	// Exists is false when the topic is not in the cluster's metadata.
	Exists bool
	// Partitions and ReplicationFactor are as found; the replication
	// factor is the largest replica set of any partition.
	Partitions, ReplicationFactor int
	// ConfiguredReplicationFactor is the worker setting; 0 or less means
	// the broker default, which the checks cannot compare against.
	ConfiguredReplicationFactor int
	// ConfigError is why this topic's configuration could not be read;
	// empty when it was read, and then CleanupPolicy and
	// MinInsyncReplicas are the broker's values ("" when empty).
	ConfigError       string
	CleanupPolicy     string
	MinInsyncReplicas string
	// UnderReplicated lists partitions whose ISR is smaller than their
	// replica set; Offline those without a leader.
	UnderReplicated, Offline []int32
	// WorkersRunning is true when the worker group has Connect members: a
	// missing topic is then not a fresh cluster but a mismatch.
	WorkersRunning bool
}

func (t Topic) exists() bool     { return t.Exists }
func (t Topic) configRead() bool { return t.Exists && t.ConfigError == "" }
func (t Topic) name() string     { return t.Name }

// minISR is min.insync.replicas as a number, and whether it is one.
func (t Topic) minISR() (int, bool) {
	n, err := strconv.Atoi(t.MinInsyncReplicas)
	return n, err == nil
}

// topicChecks is the table TopicChecks returns: data, not code, so that one rule
// reads as one entry (issue 49).
var topicChecks = []Check[Topic]{
	{
		ID: IDInternalTopicMissing, Severity: Warning,
		Escalate: func(t Topic) bool { return t.WorkersRunning },
		Test:     func(t Topic) bool { return !t.Exists },
		Subject:  Topic.name,
		Summary:  func(t Topic) string { return fmt.Sprintf("the %s topic %q does not exist", t.Role, t.Name) },
		Evidence: func(t Topic) string {
			why := "connect-init run or prepare creates it with the right layout"
			if t.WorkersRunning {
				why = "yet the worker group has members: they were started with other topic names than these settings, or the topic was deleted under them"
			}
			return fmt.Sprintf("%s=%s is not in the cluster's metadata; %s", t.TopicEnv, t.Name, why)
		},
		Fix: func(t Topic) string {
			return "run connect-init prepare (or start a worker through connect-init run); if workers are running, make " + t.TopicEnv + " match their config"
		},
	},
	{
		ID: IDTopicConfigsUnreadable, Severity: Error,
		Applies: Topic.exists,
		Test:    func(t Topic) bool { return t.ConfigError != "" },
		Subject: Topic.name,
		Summary: func(t Topic) string {
			return fmt.Sprintf("the settings of topic %q could not be read, so its cleanup.policy cannot be checked", t.Name)
		},
		Evidence: func(t Topic) string { return "DescribeConfigs: " + t.ConfigError },
		Fix: func(Topic) string {
			return "let this principal DESCRIBE_CONFIGS on the topic (connect-init never starts a worker on unverified topics)"
		},
	},
	{
		ID: IDConfigTopicPartitions, Severity: Error,
		Applies: Topic.exists,
		Test:    func(t Topic) bool { return t.Role == "config" && t.Partitions != 1 },
		Subject: Topic.name,
		Summary: func(t Topic) string {
			return fmt.Sprintf("config topic %q has %d partitions, Connect requires exactly 1", t.Name, t.Partitions)
		},
		Evidence: func(t Topic) string {
			return fmt.Sprintf("%s has %d partitions; the worker refuses to start (\"Topic '%s' supplied via the 'config.storage.topic' property is required to have a single partition\")", t.Name, t.Partitions, t.Name)
		},
		Fix: func(t Topic) string {
			return "a topic cannot lose partitions: create a new topic with 1 partition and cleanup.policy=compact (or let connect-init create it) and point " + t.TopicEnv + " at it; copy the records over if the connectors' configs must survive"
		},
	},
	{
		// An empty policy counts as not compact: the broker then does not
		// compact the topic, and connect-init promises exactly compact.
		ID: IDTopicNotCompacted, Severity: Error,
		Applies: Topic.configRead,
		Test:    func(t Topic) bool { return t.CleanupPolicy != "compact" },
		Subject: Topic.name,
		Summary: func(t Topic) string {
			return fmt.Sprintf("topic %q has cleanup.policy=%s, Connect requires exactly compact", t.Name, t.CleanupPolicy)
		},
		Evidence: func(t Topic) string {
			if t.CleanupPolicy == "" {
				return fmt.Sprintf("DescribeConfigs: %s cleanup.policy is empty: the topic is not compacted, so Connect's superseded records are never cleaned up", t.Name)
			}
			return fmt.Sprintf("DescribeConfigs: %s cleanup.policy=%s; the worker refuses to start, and with deletion the topic would lose Connect's state", t.Name, t.CleanupPolicy)
		},
		Fix: func(t Topic) string {
			return fmt.Sprintf("kafka-configs --bootstrap-server ... --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact", t.Name)
		},
	},
	{
		// Offline partitions share the under-replicated id (doctor has
		// reported them under it, as an error, since schema version 1).
		// Transient: during a leader election a partition has no leader
		// for a moment, so a waiting gate reads again until its deadline.
		ID: IDTopicUnderReplicated, Severity: Error, Transient: true,
		Applies: Topic.exists,
		Test:    func(t Topic) bool { return len(t.Offline) > 0 },
		Subject: Topic.name,
		Summary: func(t Topic) string { return fmt.Sprintf("topic %q has partitions without a leader", t.Name) },
		Evidence: func(t Topic) string {
			return fmt.Sprintf("offline partitions %v (replication factor %d)", t.Offline, t.ReplicationFactor)
		},
		Fix: func(Topic) string {
			return "bring back the brokers holding these partitions' replicas; Connect cannot read or write them until then"
		},
	},
	{
		ID: IDTopicUnderReplicated, Severity: Warning,
		Applies: Topic.exists,
		Test:    func(t Topic) bool { return len(t.UnderReplicated) > 0 },
		Subject: Topic.name,
		Summary: func(t Topic) string {
			return fmt.Sprintf("topic %q has partitions with fewer in-sync replicas than replicas", t.Name)
		},
		Evidence: func(t Topic) string {
			return fmt.Sprintf("under-replicated partitions %v (replication factor %d)", t.UnderReplicated, t.ReplicationFactor)
		},
		Fix: func(Topic) string {
			return "check the brokers holding the missing replicas (down, or lagging); another broker loss may make these partitions unavailable"
		},
	},
	{
		ID: IDTopicReplicationBelowConf, Severity: Warning,
		Applies: Topic.exists,
		Test: func(t Topic) bool {
			return t.ConfiguredReplicationFactor > 0 && t.ReplicationFactor < t.ConfiguredReplicationFactor
		},
		Subject: Topic.name,
		Summary: func(t Topic) string {
			return fmt.Sprintf("topic %q has replication factor %d, below the configured %d", t.Name, t.ReplicationFactor, t.ConfiguredReplicationFactor)
		},
		Evidence: func(t Topic) string {
			return fmt.Sprintf("%s=%d, topic has %d replicas per partition: it was created elsewhere (another tool, or a worker with other settings)",
				t.ReplicationEnv, t.ConfiguredReplicationFactor, t.ReplicationFactor)
		},
		Fix: func(Topic) string {
			return "add replicas online: connect-init repair --topics=internal prints the plan, connect-init repair --topics=internal --execute carries it out"
		},
	},
	{
		ID: IDTopicMinISRTooHigh, Severity: Warning,
		Applies: Topic.configRead,
		Test: func(t Topic) bool {
			n, ok := t.minISR()
			return ok && t.ReplicationFactor > 1 && n >= t.ReplicationFactor
		},
		Subject: Topic.name,
		Summary: func(t Topic) string {
			n, _ := t.minISR()
			return fmt.Sprintf("topic %q has min.insync.replicas=%d with replication factor %d", t.Name, n, t.ReplicationFactor)
		},
		Evidence: func(Topic) string {
			return "with acks=all (Connect's producers for its internal topics) a single broker down stops every write to this topic"
		},
		Fix: func(t Topic) string {
			return fmt.Sprintf("lower min.insync.replicas (kafka-configs --alter --entity-type topics --entity-name %s --add-config min.insync.replicas=%d) or add replicas", t.Name, t.ReplicationFactor-1)
		},
	},
}

// TopicChecks are the rules for Connect's internal topics, in the order
// they are reported.
func TopicChecks() []Check[Topic] { return slices.Clone(topicChecks) }

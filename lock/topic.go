package lock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// TopicConfig is what EnsureTopic sets on a lock topic it creates. The first
// two are required for correctness (and checked on an existing topic); the
// rest keep the topic small: segments roll every 10 minutes so the cleaner
// can compact them, cleaning starts at 10% dirty, and tombstones (withdrawn
// requests) are kept for an hour, far longer than any reader needs to catch
// up.
var TopicConfig = map[string]string{
	"cleanup.policy":            "compact",
	"message.timestamp.type":    "LogAppendTime",
	"segment.ms":                "600000",
	"min.cleanable.dirty.ratio": "0.1",
	"delete.retention.ms":       "3600000",
}

// EnsureTopic creates the lock topic if it is absent (one partition, the
// TopicConfig settings, replicationFactor replicas; -1 means the broker
// default) and validates it otherwise: exactly one partition,
// cleanup.policy including compact, message.timestamp.type=LogAppendTime.
// An existing topic is never altered. Concurrent callers all succeed.
func EnsureTopic(ctx context.Context, admin sarama.ClusterAdmin, topic string, replicationFactor int16) error {
	if topic == "" {
		return errors.New("lock: empty lock topic name")
	}
	entries := make(map[string]*string, len(TopicConfig))
	for k, v := range TopicConfig {
		entries[k] = &v
	}
	err := admin.CreateTopic(topic, &sarama.TopicDetail{
		NumPartitions:     1,
		ReplicationFactor: replicationFactor,
		ConfigEntries:     entries,
	}, false)
	if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
		return fmt.Errorf("lock: creating topic %q (1 partition, replication factor %d): %w", topic, replicationFactor, err)
	}
	// A topic just created may take a moment to show up in metadata.
	for {
		err := validateTopic(admin, topic)
		if err == nil || !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%w)", err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func validateTopic(admin sarama.ClusterAdmin, topic string) error {
	mds, err := admin.DescribeTopics([]string{topic})
	if err != nil {
		return fmt.Errorf("lock: describing topic %q: %w", topic, err)
	}
	if len(mds) != 1 {
		return fmt.Errorf("lock: describing topic %q: got %d answers", topic, len(mds))
	}
	if mds[0].Err != sarama.ErrNoError {
		return fmt.Errorf("lock: describing topic %q: %w", topic, mds[0].Err)
	}
	if n := len(mds[0].Partitions); n != 1 {
		return fmt.Errorf("lock: topic %q has %d partitions, but the startup lock needs exactly 1 so that the log orders all requests; delete it or choose another lock topic", topic, n)
	}
	res, err := admin.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.TopicResource, Name: topic}}, sarama.DescribeConfigsOptions{})
	if err != nil {
		return fmt.Errorf("lock: reading the configuration of topic %q: %w", topic, err)
	}
	if len(res) != 1 {
		return fmt.Errorf("lock: reading the configuration of topic %q: got %d answers", topic, len(res))
	}
	if res[0].ErrorCode != sarama.ErrNoError {
		return fmt.Errorf("lock: reading the configuration of topic %q: %w %s", topic, res[0].ErrorCode, res[0].ErrorMsg)
	}
	got := map[string]string{}
	for _, c := range res[0].Configs {
		got[c.Name] = c.Value
	}
	var problems []string
	if !strings.Contains(got["cleanup.policy"], "compact") {
		problems = append(problems, fmt.Sprintf("cleanup.policy=%s (want compact, or the topic grows without bound)", got["cleanup.policy"]))
	}
	if got["message.timestamp.type"] != "LogAppendTime" {
		problems = append(problems, fmt.Sprintf("message.timestamp.type=%s (want LogAppendTime: leases are measured in broker time, never in container clocks)", got["message.timestamp.type"]))
	}
	if len(problems) > 0 {
		return fmt.Errorf("lock: topic %q is misconfigured: %s; fix with kafka-configs --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact,message.timestamp.type=LogAppendTime", topic, strings.Join(problems, "; "), topic)
	}
	return nil
}

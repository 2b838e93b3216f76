package lock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka/notyet"
)

// TopicConfig is what EnsureTopic sets on a lock topic it creates, a new
// map at each call so that no caller can change it for the others. The first
// two are required for correctness (and checked on an existing topic); the
// rest keep the topic small: segments roll every 10 minutes so the cleaner
// can compact them, cleaning starts at 10% dirty, and tombstones (withdrawn
// requests) are kept for an hour, far longer than any reader needs to catch
// up.
func TopicConfig() map[string]string {
	return map[string]string{
		"cleanup.policy":            "compact",
		"message.timestamp.type":    "LogAppendTime",
		"segment.ms":                "600000",
		"min.cleanable.dirty.ratio": "0.1",
		"delete.retention.ms":       "3600000",
	}
}

// EnsureTopic creates the lock topic if it is absent (one partition, the
// TopicConfig settings, replicationFactor replicas; -1 means the broker
// default) and validates it otherwise: exactly one partition,
// cleanup.policy including compact, message.timestamp.type=LogAppendTime.
// An existing topic is never altered. Concurrent callers all succeed.
// Answers that waiting can change are looked at again until ctx ends.
func EnsureTopic(ctx context.Context, admin sarama.ClusterAdmin, topic string, replicationFactor int16) error {
	return ensureTopic(ctx, clock.System{}, admin, topic, replicationFactor)
}

// ensureTopicEvery is EnsureTopic's pause between two tries.
const ensureTopicEvery = 200 * time.Millisecond

// ensureTopic is EnsureTopic pacing its tries on clk, so that a test
// drives its wait through hours of injected time (issue 48).
func ensureTopic(ctx context.Context, clk clock.Clock, admin sarama.ClusterAdmin, topic string, replicationFactor int16) error {
	if topic == "" {
		return errors.New("lock: empty lock topic name")
	}
	cfg := TopicConfig()
	entries := make(map[string]*string, len(cfg))
	for k, v := range cfg {
		entries[k] = &v
	}
	for {
		err := ensureOnce(admin, topic, replicationFactor, entries)
		if err == nil || final(err) {
			return err
		}
		// A broker killed or restarting, a controller moving, a topic
		// just created that this broker does not know yet: look again
		// (the fault harness found run exiting 1 here when the broker it
		// asked had just been killed).
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%w)", err, ctx.Err())
		case <-clk.After(ensureTopicEvery):
		}
	}
}

// ensureOnce is one try of EnsureTopic.
func ensureOnce(admin sarama.ClusterAdmin, topic string, replicationFactor int16, entries map[string]*string) error {
	err := admin.CreateTopic(topic, &sarama.TopicDetail{
		NumPartitions:     1,
		ReplicationFactor: replicationFactor,
		ConfigEntries:     entries,
	}, false)
	if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
		return fmt.Errorf("lock: creating topic %q (1 partition, replication factor %d): %w", topic, replicationFactor, err)
	}
	return validateTopic(admin, topic)
}

// final reports whether err is an answer that waiting cannot change: a
// topic of the wrong layout or settings, or any answer the one shared list
// (kafka/notyet) calls final (authorization, an invalid replication factor
// or configuration, a policy). Everything else (connections refused or
// closed, NOT_CONTROLLER, LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION
// right after a create, timeouts) is looked at again.
func final(err error) bool {
	return errors.Is(err, errLayout) || !notyet.Is(err)
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
		return fmt.Errorf("%w: topic %q has %d partitions, but the startup lock needs exactly 1 so that the log orders all requests; delete it or choose another lock topic", errLayout, topic, n)
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
		return fmt.Errorf("%w: topic %q is misconfigured: %s; fix with kafka-configs --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact,message.timestamp.type=LogAppendTime", errLayout, topic, strings.Join(problems, "; "), topic)
	}
	return nil
}

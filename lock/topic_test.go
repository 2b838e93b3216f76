package lock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
)

func TestEnsureTopic(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	admin, err := sarama.NewClusterAdmin(c.ListenAddrs(), adminConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// Created, then found valid; concurrent callers all succeed.
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- EnsureTopic(ctx, admin, "lock", 1) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatalf("EnsureTopic: %v", err)
		}
	}
	res, err := admin.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.TopicResource, Name: "lock"}}, sarama.DescribeConfigsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range res[0].Configs {
		got[e.Name] = e.Value
	}
	for k, v := range TopicConfig() {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}

	s := func(v string) *string { return &v }
	if err := admin.CreateTopic("two", &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1, ConfigEntries: map[string]*string{
		"cleanup.policy": s("compact"), "message.timestamp.type": s("LogAppendTime")}}, false); err != nil {
		t.Fatal(err)
	}
	if err := EnsureTopic(ctx, admin, "two", 1); err == nil || !strings.Contains(err.Error(), "2 partitions") {
		t.Errorf("two partitions: %v", err)
	}
	if err := admin.CreateTopic("plain", &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false); err != nil {
		t.Fatal(err)
	}
	err = EnsureTopic(ctx, admin, "plain", 1)
	if err == nil || !strings.Contains(err.Error(), "cleanup.policy=delete") || !strings.Contains(err.Error(), "message.timestamp.type=CreateTime") {
		t.Errorf("plain topic: %v", err)
	}
}

// flakyAdmin fails CreateTopic the first n times as a killed broker does.
type flakyAdmin struct {
	sarama.ClusterAdmin
	fails int
	err   error
}

func (a *flakyAdmin) CreateTopic(topic string, d *sarama.TopicDetail, validate bool) error {
	if a.fails > 0 {
		a.fails--
		return a.err
	}
	return a.ClusterAdmin.CreateTopic(topic, d, validate)
}

// An answer that waiting can change (a connection refused by a broker just
// killed) is looked at again; a refusal fails at once.
func TestEnsureTopicLooksAgain(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	admin, err := sarama.NewClusterAdmin(c.ListenAddrs(), adminConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = admin.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	flaky := &flakyAdmin{ClusterAdmin: admin, fails: 3, err: errors.New("dial tcp 127.0.0.1:9: connect: connection refused")}
	if err := EnsureTopic(ctx, flaky, "lock-again", 1); err != nil || flaky.fails != 0 {
		t.Fatalf("EnsureTopic = %v after %d refused connections left, want success after looking again", err, flaky.fails)
	}
	denied := &flakyAdmin{ClusterAdmin: admin, fails: 1000, err: sarama.ErrTopicAuthorizationFailed}
	if err := EnsureTopic(ctx, denied, "lock-denied", 1); !errors.Is(err, sarama.ErrTopicAuthorizationFailed) || denied.fails != 999 {
		t.Fatalf("EnsureTopic = %v after %d tries, want TOPIC_AUTHORIZATION_FAILED at once", err, 1000-denied.fails)
	}
}

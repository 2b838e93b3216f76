//go:build integration

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
)

// prepareEnv is the environment of a connect-init for a new Connect cluster
// name on the shared cluster.
func prepareEnv(t *testing.T, name string, extra ...string) ([]string, map[string]string) {
	t.Helper()
	props, err := cluster.WorkerProps(uniqueGroup(t, name))
	if err != nil {
		t.Fatal(err)
	}
	env := append(baseEnv(), envFromProps(props)...)
	env = append(env, "CONNECT_INIT_TIMEOUT=90s")
	return append(env, extra...), props
}

// TestPrepareConcurrentCreatorsAllSucceed: 8 connect-init prepare at once
// on a new Connect cluster name create each topic once, with the right
// layout, and all exit 0.
func TestPrepareConcurrentCreatorsAllSucceed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env, props := prepareEnv(t, "race")
	const n = 8
	codes := make([]int, n)
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var err error
			codes[i], outs[i], err = testbed.Run(ctx, binary, []string{"prepare"}, env)
			if err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	created := map[string]int{}
	for i := 0; i < n; i++ {
		if codes[i] != 0 {
			t.Fatalf("prepare #%d exited %d:\n%s", i, codes[i], outs[i])
		}
		for _, line := range strings.Split(outs[i], "\n") {
			if strings.Contains(line, `msg="created internal topic"`) {
				for _, topic := range []string{props["config.storage.topic"], props["offset.storage.topic"], props["status.storage.topic"]} {
					if strings.Contains(line, "topic="+topic+" ") {
						created[topic]++
					}
				}
			}
		}
	}
	for _, topic := range []string{props["config.storage.topic"], props["offset.storage.topic"], props["status.storage.topic"]} {
		if created[topic] != 1 {
			t.Errorf("topic %s created %d times, want exactly once", topic, created[topic])
		}
	}
	admin := newAdmin(t)
	mds, err := admin.DescribeTopics([]string{props["config.storage.topic"], props["offset.storage.topic"], props["status.storage.topic"]})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{props["config.storage.topic"]: 1, props["offset.storage.topic"]: 5, props["status.storage.topic"]: 2}
	for _, md := range mds {
		if len(md.Partitions) != want[md.Name] || len(md.Partitions[0].Replicas) != 3 {
			t.Errorf("topic %s: %d partitions with %d replicas, want %d x 3", md.Name, len(md.Partitions), len(md.Partitions[0].Replicas), want[md.Name])
		}
		assertCompacted(t, admin, md.Name)
	}
}

// TestPrepareRejectsWrongExistingLayouts: an existing config topic with 3
// partitions, or a topic with cleanup.policy=delete, fails with the fix
// spelled out, and connect-init changes nothing.
func TestPrepareRejectsWrongExistingLayouts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := newAdmin(t)
	del := "delete"

	env, props := prepareEnv(t, "threeparts")
	if err := admin.CreateTopic(props["config.storage.topic"], &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: 3}, false); err != nil {
		t.Fatal(err)
	}
	code, out, err := testbed.Run(ctx, binary, []string{"prepare"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(out, "has 3 partitions, Connect requires exactly 1") || !strings.Contains(out, "create a new topic with 1 partition") {
		t.Fatalf("want exit 1 naming the partition problem and its fix, got %d:\n%s", code, out)
	}
	mds, _ := admin.DescribeTopics([]string{props["config.storage.topic"]})
	if len(mds) != 1 || len(mds[0].Partitions) != 3 {
		t.Fatalf("connect-init changed the existing config topic")
	}

	env, props = prepareEnv(t, "deletepolicy")
	if err := admin.CreateTopic(props["status.storage.topic"], &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 3,
		ConfigEntries: map[string]*string{"cleanup.policy": &del}}, false); err != nil {
		t.Fatal(err)
	}
	code, out, err = testbed.Run(ctx, binary, []string{"prepare"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(out, "cleanup.policy=delete, Connect requires exactly compact") || !strings.Contains(out, "--add-config cleanup.policy=compact") {
		t.Fatalf("want exit 1 naming the cleanup policy and its fix, got %d:\n%s", code, out)
	}
	entries, err := admin.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.TopicResource, Name: props["status.storage.topic"], ConfigNames: []string{"cleanup.policy"}}}, sarama.DescribeConfigsOptions{})
	if err != nil || len(entries) != 1 || len(entries[0].Configs) != 1 || entries[0].Configs[0].Value != "delete" {
		t.Fatalf("connect-init changed the existing status topic's cleanup.policy: %v", err)
	}
}

// TestBadConfigurationExitsTwoAndTouchesNothing: missing or malformed
// settings and a missing worker command are exit 2 with the variable named,
// before anything is created.
func TestBadConfigurationExitsTwoAndTouchesNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env, props := prepareEnv(t, "badcfg")
	var withoutGroup []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CONNECT_GROUP_ID=") {
			withoutGroup = append(withoutGroup, kv)
		}
	}
	cases := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"missing group id", []string{"prepare"}, withoutGroup, "CONNECT_GROUP_ID"},
		{"bad timeout", []string{"prepare"}, append(env, "CONNECT_INIT_TIMEOUT=later"), "CONNECT_INIT_TIMEOUT"},
		{"bad replication factor", []string{"prepare"}, append(env, "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR=three"), "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR"},
		{"missing worker command", []string{"run", "--", "/nonexistent/connect-distributed"}, env, "/nonexistent/connect-distributed"},
		{"unknown subcommand", []string{"prepair"}, env, "unknown command"},
		{"bad flag", []string{"prepare", "--lock-permits=none"}, env, "lock-permits"},
	}
	for _, c := range cases {
		code, out, err := testbed.Run(ctx, binary, c.args, c.env)
		if err != nil {
			t.Fatal(err)
		}
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("%s: want exit 2 mentioning %q, got %d:\n%s", c.name, c.want, code, out)
		}
		if strings.Contains(out, "created internal topic") {
			t.Errorf("%s: topics were created despite bad configuration", c.name)
		}
	}
	mds, err := newAdmin(t).DescribeTopics([]string{props["config.storage.topic"]})
	if err != nil || len(mds) != 1 || mds[0].Err != sarama.ErrUnknownTopicOrPartition {
		t.Fatalf("a config topic exists after only bad configurations: %v %+v", err, mds)
	}
}

// TestPrepareWaitsThroughBrokerKill: a broker killed with SIGKILL while
// connect-init waits keeps it waiting; it succeeds after the restart.
func TestPrepareWaitsThroughBrokerKill(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cluster.Kill(3)
	defer func() { // leave the shared cluster whole for the next test
		if !cluster.Running(3) {
			_ = cluster.Start(3)
		}
		_ = cluster.WaitStarted(ctx, 3)
	}()
	env, _ := prepareEnv(t, "brokerkill")
	logPath := filepath.Join(workDir, fmt.Sprintf("prepare-kill-%d.log", time.Now().UnixNano()))
	p, err := testbed.StartProcess("prepare", []string{binary, "prepare"}, env, workDir, logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if err := p.WaitForLog(ctx, "2/3 brokers up"); err != nil {
		t.Fatal(err)
	}
	if p.Exited() {
		t.Fatalf("prepare gave up while a broker was down:\n%s", p.Log())
	}
	if err := cluster.Start(3); err != nil {
		t.Fatal(err)
	}
	code, err := p.ExitCode(ctx)
	if err != nil || code != 0 {
		t.Fatalf("prepare exit %d %v after the broker came back:\n%s", code, err, p.Log())
	}
	if !strings.Contains(p.Log(), "all brokers up") {
		t.Fatalf("no 'all brokers up' line:\n%s", p.Log())
	}
}

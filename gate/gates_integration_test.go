//go:build integration

package gate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
)

// These scenarios each need a cluster in a particular state from its very
// start (brokers not started yet, __consumer_offsets created by one broker,
// a broken advertised listener), so each test starts its own small cluster,
// one at a time.

var (
	dist    *testbed.Dist
	binary  string
	workDir string
)

func TestMain(m *testing.M) {
	os.Exit(mainWithDist(m))
}

func mainWithDist(m *testing.M) int {
	defer testbed.KillAll()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var err error
	if workDir, err = os.MkdirTemp("", "connect-init-gates-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(workDir)
	if binary, err = testbed.BuildConnectInit(workDir, "v0.0.0-gates"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if dist, err = testbed.Fetch(ctx, testbed.Version()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func gateEnv(c *testbed.Cluster, group string, extra ...string) []string {
	env := append(testbed.BaseEnv(), testbed.EnvFromProps(map[string]string{
		"bootstrap.servers":    c.Bootstrap(),
		"group.id":             group,
		"config.storage.topic": group + "-configs",
		"offset.storage.topic": group + "-offsets",
		"status.storage.topic": group + "-status",
		"key.converter":        "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":      "org.apache.kafka.connect.json.JsonConverter",
	})...)
	return append(env, extra...)
}

// TestBrokersStartedLateAndOffsetsSpread: connect-init starts first, the
// three brokers 10 s later; it waits, succeeds, and because it let the
// coordinator lookup create __consumer_offsets only once all brokers were
// up, its 50 single-replica partitions are spread over all three brokers
// even with offsets.topic.replication.factor=1.
func TestBrokersStartedLateAndOffsetsSpread(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, err := testbed.StartCluster(ctx, dist, testbed.ClusterOptions{Brokers: 3, Dir: filepath.Join(workDir, "late"),
		BrokerProps: map[string]string{"offsets.topic.replication.factor": "1"}, StartNodes: []int{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	p, err := testbed.StartProcess("prepare", []string{binary, "prepare"}, gateEnv(c, "late", "CONNECT_INIT_TIMEOUT=3m"),
		workDir, filepath.Join(workDir, "late-prepare.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if err := p.WaitForLog(ctx, "0/3 brokers up; no bootstrap server answers"); err != nil {
		t.Fatal(err)
	}
	select { // the scenario: brokers come 10 s after connect-init
	case <-time.After(10 * time.Second):
	case <-p.Done():
		t.Fatalf("prepare did not wait for the brokers:\n%s", p.Log())
	}
	for id := 1; id <= 3; id++ {
		if err := c.Start(id); err != nil {
			t.Fatal(err)
		}
	}
	code, err := p.ExitCode(ctx)
	if err != nil || code != 0 {
		t.Fatalf("prepare: exit %d %v\n%s", code, err, p.Log())
	}

	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	client, err := sarama.NewClient(strings.Split(c.Bootstrap(), ","), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	parts, err := client.Partitions("__consumer_offsets")
	if err != nil || len(parts) != 50 {
		t.Fatalf("__consumer_offsets: %d partitions, %v", len(parts), err)
	}
	perBroker := map[int32]int{}
	for _, p := range parts {
		replicas, _ := client.Replicas("__consumer_offsets", p)
		for _, r := range replicas {
			perBroker[r]++
		}
	}
	if len(perBroker) != 3 {
		t.Fatalf("__consumer_offsets partitions live on brokers %v, want all three", perBroker)
	}
}

// TestIncident2SingleReplicaCoordinator reproduces incident 2:
// __consumer_offsets is created while only broker 1 runs, with
// offsets.topic.replication.factor=1, so all 50 partitions live on broker
// 1. prepare warns, naming the group's partition and its single replica;
// with CONNECT_INIT_STRICT=true it exits 1.
func TestIncident2SingleReplicaCoordinator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, err := testbed.StartCluster(ctx, dist, testbed.ClusterOptions{Brokers: 3, Dir: filepath.Join(workDir, "incident2"),
		BrokerProps: map[string]string{"offsets.topic.replication.factor": "1"}, Controllers: 1, StartNodes: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Only broker 1 runs when the first consumer looks for its coordinator.
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	client, err := sarama.NewClient([]string{c.Addr(1, "PLAINTEXT")}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err = client.Coordinator("some-early-consumer"); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("coordinator lookup with one broker: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	client.Close()
	for _, id := range []int{2, 3} {
		if err := c.Start(id); err != nil {
			t.Fatal(err)
		}
		if err := c.WaitStarted(ctx, id); err != nil {
			t.Fatal(err)
		}
	}

	const group = "connect-cluster"
	partition := GroupPartition(group, 50)
	env := gateEnv(c, group, "CONNECT_INIT_TIMEOUT=2m")
	code, out, err := testbed.Run(ctx, binary, []string{"prepare"}, env)
	if err != nil {
		t.Fatal(err)
	}
	wantWarning := fmt.Sprintf("lives in __consumer_offsets partition %d, which has replicas [1] and in-sync replicas [1]", partition)
	if code != 0 || !strings.Contains(out, "level=WARN") || !strings.Contains(out, wantWarning) || !strings.Contains(out, "offsets.topic.replication.factor=1") {
		t.Fatalf("want exit 0 with a warning %q, got %d:\n%s", wantWarning, code, out)
	}
	code, out, err = testbed.Run(ctx, binary, []string{"prepare"}, append(env, "CONNECT_INIT_STRICT=true"))
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(out, wantWarning) {
		t.Fatalf("strict: want exit 1 with %q, got %d:\n%s", wantWarning, code, out)
	}

	// doctor explains the same state: a warning, an error when strict.
	code, out, err = testbed.Run(ctx, binary, []string{"doctor", "--json"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || !strings.Contains(out, `"id": "consumer-offsets-single-replica"`) || !strings.Contains(out, `"severity": "warning"`) {
		t.Fatalf("doctor: want exit 0 with a consumer-offsets-single-replica warning, got %d:\n%s", code, out)
	}
	code, out, err = testbed.Run(ctx, binary, []string{"doctor"}, append(env, "CONNECT_INIT_STRICT=true"))
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(out, "consumer-offsets-single-replica") {
		t.Fatalf("doctor strict: want exit 1 naming consumer-offsets-single-replica, got %d:\n%s", code, out)
	}
}

// TestAdvertisedListenerUnreachable: a broker whose advertised listener
// names an address that does not answer from here (the classic Docker
// mistake) fails the broker gate with the broker's id and address.
func TestAdvertisedListenerUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	closed, err := testbed.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	bad := fmt.Sprintf("127.0.0.1:%d", closed)
	c, err := testbed.StartCluster(ctx, dist, testbed.ClusterOptions{Brokers: 1, Dir: filepath.Join(workDir, "advertised"),
		AdvertisedOverride: map[int]map[string]string{1: {"PLAINTEXT": bad}},
		BrokerProps:        map[string]string{"offsets.topic.replication.factor": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	env := gateEnv(c, "advertised", "CONNECT_INIT_TIMEOUT=6s", "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR=1",
		"CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR=1", "CONNECT_STATUS_STORAGE_REPLICATION_FACTOR=1")
	code, out, err := testbed.Run(ctx, binary, []string{"prepare"}, env)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("broker 1 at %s: connection refused", bad)
	if code != 1 || !strings.Contains(out, want) || !strings.Contains(out, "advertised.listeners") {
		t.Fatalf("want exit 1 naming %q and advertised.listeners, got %d:\n%s", want, code, out)
	}
}

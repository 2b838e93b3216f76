//go:build integration

package degraded

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/testbed"
	"github.com/connect-init/connect-init/kafka"
)

// The package's cluster: 3 brokers, node 1 the only KRaft controller, so
// that stopping broker 2 or 3 keeps the quorum. offsets.topic.replication.factor
// is 1, so every __consumer_offsets partition lives on one broker (incident
// 2's layout), and a short broker session makes a killed broker fenced
// within seconds.
var (
	cluster *testbed.Cluster
	binary  string
	workDir string
	// kafka4 is true from Kafka 4.0 on, whose DescribeCluster says which
	// brokers are fenced; before, fenced brokers are left out.
	kafka4 bool
)

func TestMain(m *testing.M) { os.Exit(mainWithCluster(m)) }

func mainWithCluster(m *testing.M) int {
	defer testbed.KillAll()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var err error
	if workDir, err = os.MkdirTemp("", "connect-init-degraded-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(workDir)
	if binary, err = testbed.BuildConnectInit(workDir, "v0.0.0-degraded"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dist, err := testbed.Fetch(ctx, testbed.Version())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cluster, err = testbed.StartCluster(ctx, dist, testbed.ClusterOptions{Brokers: 3, Dir: filepath.Join(workDir, "cluster"), Controllers: 1,
		BrokerProps: map[string]string{
			"offsets.topic.replication.factor": "1",
			"broker.session.timeout.ms":        "4000",
			"broker.heartbeat.interval.ms":     "500",
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cluster.Close()
	kafka4 = !strings.HasPrefix(dist.Version, "2.") && !strings.HasPrefix(dist.Version, "3.")
	fmt.Fprintf(os.Stderr, "degraded cluster: Kafka %s, bootstrap %s\n", dist.Version, cluster.Bootstrap())
	// __consumer_offsets, spread over the three brokers.
	client, err := sarama.NewClient(strings.Split(cluster.Bootstrap(), ","), saramaConfig())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for {
		if _, err = client.Coordinator("degraded-first-consumer"); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(os.Stderr, "no coordinator on the fresh cluster:", err)
			return 1
		case <-time.After(200 * time.Millisecond):
		}
	}
	client.Close()
	return m.Run()
}

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.ApiVersionsRequest = true
	return cfg
}

// env is a connect-init environment for a new Connect cluster named name
// whose internal topics have 2 replicas (so that two brokers can create
// them), bootstrapping from the given nodes.
func env(t *testing.T, group string, nodes []int, extra ...string) []string {
	t.Helper()
	props, err := cluster.WorkerProps(map[string]string{
		"group.id": group, "config.storage.topic": group + "-configs", "offset.storage.topic": group + "-offsets",
		"status.storage.topic": group + "-status", "config.storage.replication.factor": "2",
		"offset.storage.replication.factor": "2", "status.storage.replication.factor": "2",
	})
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, cluster.Addr(n, "PLAINTEXT"))
	}
	props["bootstrap.servers"] = strings.Join(addrs, ",")
	e := append(testbed.BaseEnv(), testbed.EnvFromProps(props)...)
	return append(e, extra...)
}

// groupOn returns a group id whose __consumer_offsets partition is led by
// broker id (offsets.topic.replication.factor=1: its only replica).
func groupOn(t *testing.T, name string, id int32) (string, int32) {
	t.Helper()
	client, err := sarama.NewClient([]string{cluster.Addr(1, "PLAINTEXT")}, saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	parts, err := client.Partitions("__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		g := fmt.Sprintf("%s-%d-%d", name, time.Now().UnixNano()%1e6, i)
		p := gate.GroupPartition(g, len(parts))
		if leader, err := client.Leader("__consumer_offsets", p); err == nil && leader.ID() == id {
			return g, p
		}
	}
	t.Fatalf("no group id found whose partition broker %d leads", id)
	return "", 0
}

// registration is broker id's registration as node 1 tells it: found, and
// fenced. Before Kafka 4.0 a fenced broker is not found.
func registration(t *testing.T, id int32) (found, fenced bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	regs, fencedKnown, err := kafka.DescribeClusterAt(ctx, saramaConfig(), cluster.Addr(1, "PLAINTEXT"))
	if err != nil {
		t.Fatal(err)
	}
	if fencedKnown != kafka4 {
		t.Fatalf("DescribeCluster told fenced brokers: %v, want %v on this Kafka version", fencedKnown, kafka4)
	}
	for _, r := range regs {
		if r.ID == id {
			return true, r.Fenced
		}
	}
	return false, false
}

// notLive reports whether broker id is fenced: registered and fenced on
// 4.x, left out before.
func notLive(t *testing.T, id int32) bool {
	found, fenced := registration(t, id)
	if kafka4 {
		return found && fenced
	}
	return !found
}

// waitFenced waits until the controller fenced broker id.
func waitFenced(t *testing.T, id int32) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !notLive(t, id) {
		if time.Now().After(deadline) {
			t.Fatalf("broker %d not fenced after 60s", id)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// missingFenced is how the brokers gate names a fenced broker id at addr
// that its bootstrap list includes: by id on 4.x, by address before.
func missingFenced(id int, addr string) string {
	if kafka4 {
		return fmt.Sprintf("missing: broker %d (registered but fenced, last at %s)", id, addr)
	}
	return "missing: " + addr + " (bootstrap address that no live broker advertises)"
}

// restart starts node id again (if down) and waits until it is live.
func restart(t *testing.T, id int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if !cluster.Running(id) {
		if err := cluster.Start(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := cluster.WaitStarted(ctx, id); err != nil {
		t.Fatal(err)
	}
	for {
		if found, fenced := registration(t, int32(id)); found && !fenced {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("broker %d not live again", id)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// A stopped broker on 4.x stays registered, fenced. Without
// CONNECT_INIT_EXPECTED_BROKERS the bootstrap list expects it: prepare
// waits, naming it by id and address with the fix, and fails at its
// timeout. With CONNECT_INIT_EXPECTED_BROKERS=2 no gate waits for it and
// prepare passes; doctor names it as not live. Unregistered, it is named
// from the registrations seen, and a bootstrap list of the live brokers
// lets workers start without CONNECT_INIT_EXPECTED_BROKERS.
func TestStoppedBroker(t *testing.T) {
	cluster.Stop(3)
	defer restart(t, 3)
	waitFenced(t, 3)
	addr3 := cluster.Addr(3, "PLAINTEXT")
	all := []int{1, 2, 3}

	t.Run("without expected brokers", func(t *testing.T) {
		g, _ := groupOn(t, "deg-stop-noexp", 1)
		code, out := testbed.RunCLI(t, binary, env(t, g, all, "CONNECT_INIT_TIMEOUT=6s"), "prepare")
		if code == 0 {
			t.Fatalf("prepare passed with broker 3 stopped and 3 brokers expected:\n%s", out)
		}
		t.Log(gateFailed(out))
		testbed.MustContain(t, "prepare", out, "2/3 brokers up", missingFenced(3, addr3), "CONNECT_INIT_EXPECTED_BROKERS=2")
		if kafka4 {
			testbed.MustContain(t, "prepare", out, "restart broker 3", "kafka-cluster unregister --bootstrap-server ... --id 3")
		}
	})
	t.Run("with expected brokers", func(t *testing.T) {
		g, _ := groupOn(t, "deg-stop-exp", 1)
		e := env(t, g, all, "CONNECT_INIT_TIMEOUT=60s", "CONNECT_INIT_EXPECTED_BROKERS=2")
		code, out := testbed.RunCLI(t, binary, e, "prepare")
		if code != 0 {
			t.Fatalf("prepare exit %d with CONNECT_INIT_EXPECTED_BROKERS=2 and broker 3 fenced:\n%s", code, out)
		}
		testbed.MustContain(t, "prepare", out, "all brokers up")
		if strings.Contains(out, "not visible on every broker") {
			t.Errorf("the topics gate waited for the fenced broker:\n%s", out)
		}
		if code, out := testbed.RunCLI(t, binary, e, "prepare"); code != 0 {
			t.Fatalf("repeated prepare exit %d:\n%s", code, out)
		}
		_, doc, out := testbed.DoctorJSON(t, binary, e)
		if kafka4 {
			f := testbed.Findings(doc)["broker-not-live/broker 3"]
			if f == nil || f["severity"] != "warning" {
				t.Fatalf("doctor has no broker-not-live warning for broker 3:\n%s", out)
			}
			testbed.MustContain(t, "doctor's finding", fmt.Sprint(f), "registered but fenced", addr3, "kafka-cluster unregister")
			_, human := testbed.RunCLI(t, binary, e, "doctor")
			testbed.MustContain(t, "doctor", human, "NOT LIVE: registered but fenced")
		}
		if f := testbed.Findings(doc)["broker-count-below-expected/cluster"]; f != nil {
			t.Errorf("doctor counts broker 3 as expected with CONNECT_INIT_EXPECTED_BROKERS=2: %v", f)
		}
	})
	t.Run("unregistered", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cluster.Unregister(ctx, 3); err != nil {
			t.Fatal(err)
		}
		if found, _ := registration(t, 3); found {
			t.Fatal("broker 3 still registered after kafka-cluster unregister")
		}
		g, _ := groupOn(t, "deg-unreg-live", 1)
		code, out := testbed.RunCLI(t, binary, env(t, g, []int{1, 2}, "CONNECT_INIT_TIMEOUT=60s"), "prepare")
		if code != 0 {
			t.Fatalf("prepare exit %d with broker 3 unregistered and the live brokers as bootstrap:\n%s", code, out)
		}
		g, _ = groupOn(t, "deg-unreg-all", 1)
		code, out = testbed.RunCLI(t, binary, env(t, g, all, "CONNECT_INIT_TIMEOUT=5s"), "prepare")
		if code == 0 {
			t.Fatalf("prepare passed expecting 3 brokers with 2 registered:\n%s", out)
		}
		testbed.MustContain(t, "prepare", out, "2/3 brokers up", "missing: "+addr3+" (bootstrap address that no live broker advertises)")
	})
}

// A killed broker is registered and unreachable until the controller
// fences it (broker.session.timeout.ms): a prepare started right after the
// kill with CONNECT_INIT_EXPECTED_BROKERS=2 waits, then passes once the
// broker is fenced, without the broker coming back. Expecting 3, prepare
// fails naming the fenced broker.
func TestFencedBroker(t *testing.T) {
	addr2 := cluster.Addr(2, "PLAINTEXT")
	g, _ := groupOn(t, "deg-fenced", 1)
	cluster.Kill(2)
	defer restart(t, 2)
	e := env(t, g, []int{1, 3}, "CONNECT_INIT_TIMEOUT=60s", "CONNECT_INIT_EXPECTED_BROKERS=2")
	code, out := testbed.RunCLI(t, binary, e, "prepare")
	if code != 0 {
		t.Fatalf("prepare exit %d after broker 2 was killed, 2 expected:\n%s", code, out)
	}
	testbed.MustContain(t, "prepare", out, "all brokers up")
	if !notLive(t, 2) {
		t.Fatal("broker 2 is live after prepare passed; want it fenced")
	}
	g, _ = groupOn(t, "deg-fenced-3", 1)
	code, out = testbed.RunCLI(t, binary, env(t, g, []int{1, 3}, "CONNECT_INIT_TIMEOUT=5s", "CONNECT_INIT_EXPECTED_BROKERS=3"), "prepare")
	if code == 0 {
		t.Fatalf("prepare passed expecting 3 with broker 2 fenced:\n%s", out)
	}
	if kafka4 {
		testbed.MustContain(t, "prepare", out, missingFenced(2, addr2))
	} else { // not in the bootstrap list, never seen registered by this run
		testbed.MustContain(t, "prepare", out, "missing: 1 more broker(s) of unknown id")
	}
}

// Incident 2, to the end: the group's __consumer_offsets partition has its
// only replica on broker 3; prepare warns, naming it. Once broker 3 is
// killed, no coordinator can be found: prepare waits (logging every 5 s)
// and fails at its timeout naming the partition, its replicas, ISR and
// leader, the dead broker and the fix; doctor fills its coordinator
// section with the same.
func TestIncident2CoordinatorLost(t *testing.T) {
	group, p := groupOn(t, "deg-inc2", 3)
	e := env(t, group, []int{1, 2, 3}, "CONNECT_INIT_TIMEOUT=60s")
	code, out := testbed.RunCLI(t, binary, e, "prepare")
	if code != 0 {
		t.Fatalf("prepare exit %d on the healthy cluster:\n%s", code, out)
	}
	testbed.MustContain(t, "prepare's warning", out, "consumer-offsets-single-replica", fmt.Sprintf("__consumer_offsets partition %d", p))

	cluster.Kill(3)
	defer restart(t, 3)
	waitFenced(t, 3)
	e = env(t, group, []int{1, 2}, "CONNECT_INIT_TIMEOUT=12s", "CONNECT_INIT_EXPECTED_BROKERS=2")
	code, out = testbed.RunCLI(t, binary, e, "prepare")
	if code == 0 {
		t.Fatalf("prepare passed with the group's only coordinator replica dead:\n%s", out)
	}
	t.Log(gateFailed(out))
	testbed.MustContain(t, "prepare", out, "waiting for the group coordinator",
		fmt.Sprintf("the group lives in __consumer_offsets partition %d", p), "replicas [3], ISR [", "], leader none",
		downText(3),
		fmt.Sprintf("bring broker 3 back: every replica of __consumer_offsets partition %d is on it", p))

	code, doc, out := testbed.DoctorJSON(t, binary, e)
	if code != 1 {
		t.Errorf("doctor exit %d, want 1 (an error finding)", code)
	}
	co, _ := doc["cluster"].(map[string]any)["coordinator"].(map[string]any)
	if co == nil {
		t.Fatalf("doctor's coordinator section is null:\n%s", out)
	}
	if co["partition"] != float64(p) || fmt.Sprint(co["replicas"]) != "[3]" || co["id"] != float64(-1) {
		t.Errorf("doctor's coordinator section = %v, want partition %d, replicas [3], no coordinator", co, p)
	}
	down, _ := co["down_replicas"].([]any)
	wantState := gate.StateFenced
	if !kafka4 {
		wantState = gate.StateNotLive
	}
	if len(down) != 1 || fmt.Sprint(down[0].(map[string]any)["id"]) != "3" || down[0].(map[string]any)["state"] != wantState {
		t.Errorf("doctor's down replicas = %v, want broker 3 %s", co["down_replicas"], wantState)
	}
	var f map[string]any
	for k, v := range testbed.Findings(doc) {
		if strings.HasPrefix(k, "coordinator-not-available/") {
			f = v
		}
	}
	if f == nil {
		t.Fatalf("doctor has no coordinator-not-available finding:\n%s", out)
	}
	testbed.MustContain(t, "doctor's finding", fmt.Sprint(f), fmt.Sprintf("partition %d", p), downText(3), "bring broker 3 back")
}

// The single-controller layout: node 1 is the only KRaft controller, so
// killing broker 1 also kills the quorum. Nothing fences broker 1 then; the
// other brokers keep serving their last metadata, in which it is
// registered: prepare waits for broker 1 by id and address (it cannot be
// told from a slow broker) and fails at its timeout, and doctor reports it
// unreachable. It runs last: the cluster does not recover without node 1.
func TestSingleControllerKilled(t *testing.T) {
	g, _ := groupOn(t, "deg-quorum", 2)
	addr1 := cluster.Addr(1, "PLAINTEXT")
	cluster.Kill(1)
	e := env(t, g, []int{2, 3}, "CONNECT_INIT_TIMEOUT=6s", "CONNECT_INIT_EXPECTED_BROKERS=2")
	code, out := testbed.RunCLI(t, binary, e, "prepare")
	if code == 0 {
		t.Fatalf("prepare passed with the only controller dead:\n%s", out)
	}
	testbed.MustContain(t, "prepare", out, "waiting for broker 1 at "+addr1, "the KRaft controller quorum has no leader", "start the KRaft controllers")
	_, doc, out := testbed.DoctorJSON(t, binary, e)
	f := testbed.Findings(doc)["broker-unreachable/broker 1"]
	if f == nil || f["severity"] != "error" {
		t.Fatalf("doctor has no broker-unreachable error for broker 1:\n%s", out)
	}
	if q := testbed.Findings(doc)["controller-quorum-lost/cluster"]; q == nil || q["severity"] != "error" {
		t.Fatalf("doctor does not name the lost quorum:\n%s", out)
	}
}

// downText names replica broker id down in the coordinator gate's words.
func downText(id int) string {
	if kafka4 {
		return fmt.Sprintf("down: broker %d (registered but fenced, last at %s)", id, cluster.Addr(id, "PLAINTEXT"))
	}
	return fmt.Sprintf("down: broker %d (not live (fenced or unregistered); address unknown)", id)
}

// gateFailed is the "gate failed" line of out, for the test log.
func gateFailed(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "gate failed") {
			return l
		}
	}
	return "(no gate failed line)"
}

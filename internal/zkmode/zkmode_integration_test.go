//go:build integration

package zkmode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/testbed"
)

// The package's cluster: Kafka 3.4.1 in ZooKeeper mode, one ZooKeeper
// server and 3 brokers with the test bed's defaults (internal topics and
// __consumer_offsets replicated 3 times). A killed broker keeps its
// ZooKeeper registration, and so its place in the Metadata, until its
// session times out (zkSession).
var (
	cluster *testbed.Cluster
	binary  string
	workDir string
)

// zkSession is the brokers' zookeeper.session.timeout.ms.
const zkSession = 6 * time.Second

func TestMain(m *testing.M) { os.Exit(mainWithCluster(m)) }

func mainWithCluster(m *testing.M) int {
	defer testbed.KillAll()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var err error
	if workDir, err = os.MkdirTemp("", "connect-init-zkmode-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(workDir)
	if binary, err = testbed.BuildConnectInit(workDir, "v0.0.0-zkmode"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dist, err := testbed.Fetch(ctx, testbed.ZooKeeperVersion)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cluster, err = testbed.StartCluster(ctx, dist, testbed.ClusterOptions{Brokers: 3, Dir: filepath.Join(workDir, "cluster"), ZooKeeper: true,
		BrokerProps: map[string]string{"zookeeper.session.timeout.ms": fmt.Sprint(zkSession.Milliseconds())}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cluster.Close()
	fmt.Fprintf(os.Stderr, "zookeeper-mode cluster: Kafka %s, zookeeper.connect %s, bootstrap %s\n",
		dist.Version, cluster.ZooKeeperConnect(), cluster.Bootstrap())
	// __consumer_offsets, created while every broker is up.
	client, err := sarama.NewClient(strings.Split(cluster.Bootstrap(), ","), saramaConfig())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for {
		if _, err = client.Coordinator("zkmode-first-consumer"); err == nil {
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

// groupProps are worker properties for a new Connect cluster (group and
// internal topics named after name), its internal topics replicated rf
// times; every call picks a new REST port.
func groupProps(t *testing.T, group string, rf int) map[string]string {
	t.Helper()
	props, err := cluster.WorkerProps(map[string]string{
		"group.id": group, "config.storage.topic": group + "-configs", "offset.storage.topic": group + "-offsets",
		"status.storage.topic": group + "-status", "config.storage.replication.factor": fmt.Sprint(rf),
		"offset.storage.replication.factor": fmt.Sprint(rf), "status.storage.replication.factor": fmt.Sprint(rf),
	})
	if err != nil {
		t.Fatal(err)
	}
	return props
}

// newGroup is a group id no other test uses.
func newGroup(name string) string { return fmt.Sprintf("%s-%d", name, time.Now().UnixNano()%1e9) }

// env is connect-init's environment for props, plus extra.
func env(props map[string]string, extra ...string) []string {
	return append(append(testbed.BaseEnv(), testbed.EnvFromProps(props)...), extra...)
}

// metadataBrokers returns the broker ids and the controller id in the
// Metadata of the broker at addr.
func metadataBrokers(t *testing.T, addr string) (map[int32]bool, int32) {
	t.Helper()
	b := sarama.NewBroker(addr)
	if err := b.Open(saramaConfig()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	md, err := b.GetMetadata(&sarama.MetadataRequest{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[int32]bool{}
	for _, br := range md.Brokers {
		ids[br.ID()] = true
	}
	return ids, md.ControllerID
}

// A healthy ZooKeeper-mode cluster: prepare creates the three internal
// topics and finds the coordinator, a repeated prepare creates nothing and
// passes, and doctor --json reports the 3 brokers and the ZooKeeper
// controller with no error.
func TestPrepareRepeatedPrepareDoctor(t *testing.T) {
	group := newGroup("zk-prep")
	props := groupProps(t, group, 3)
	e := env(props, "CONNECT_INIT_TIMEOUT=60s")
	code, out := testbed.RunCLI(t, binary, e, "prepare")
	if code != 0 {
		t.Fatalf("prepare exit %d on the healthy cluster:\n%s", code, out)
	}
	testbed.MustContain(t, "prepare", out, "all brokers up", "brokers=3 expected=3", "group coordinator found")
	if n := strings.Count(out, "created internal topic"); n != 3 {
		t.Errorf("prepare created %d internal topics, want 3:\n%s", n, out)
	}
	for _, bad := range []string{"level=WARN", "level=ERROR"} {
		if strings.Contains(out, bad) {
			t.Errorf("prepare logged %s on the healthy cluster:\n%s", bad, out)
		}
	}

	code, out = testbed.RunCLI(t, binary, e, "prepare")
	if code != 0 {
		t.Fatalf("repeated prepare exit %d:\n%s", code, out)
	}
	testbed.MustContain(t, "repeated prepare", out, "all brokers up", "group coordinator found")
	if strings.Contains(out, "created internal topic") {
		t.Errorf("repeated prepare created a topic:\n%s", out)
	}

	_, controller := metadataBrokers(t, cluster.Addr(1, "PLAINTEXT"))
	code, doc, out := testbed.DoctorJSON(t, binary, e)
	if code != 0 {
		t.Errorf("doctor exit %d on the healthy cluster, want 0", code)
	}
	br, _ := doc["cluster"].(map[string]any)["brokers"].(map[string]any)
	if br == nil || br["registered"] != float64(3) || br["reachable"] != float64(3) || br["controller_id"] != float64(controller) || br["mode"] != "zookeeper" {
		t.Errorf("doctor's brokers = %v, want 3 registered, 3 reachable, controller %d, mode zookeeper", br, controller)
	}
	if a, _ := br["absent"].([]any); len(a) != 0 {
		t.Errorf("doctor names absent brokers on the healthy cluster: %v", a)
	}
	topics, _ := doc["cluster"].(map[string]any)["topics"].([]any)
	want := map[string]float64{props["config.storage.topic"]: 1, props["offset.storage.topic"]: 5, props["status.storage.topic"]: 2}
	for _, tp := range topics {
		m := tp.(map[string]any)
		name, _ := m["name"].(string)
		if m["exists"] != true || m["partitions"] != want[name] || m["replication_factor"] != float64(3) || m["cleanup_policy"] != "compact" {
			t.Errorf("doctor's topic %v, want it to exist with %v partitions, 3 replicas, compact", m, want[name])
		}
		delete(want, name)
	}
	if len(want) != 0 {
		t.Errorf("doctor does not report topics %v", want)
	}
	if co, _ := doc["cluster"].(map[string]any)["coordinator"].(map[string]any); co == nil || co["id"] == float64(-1) {
		t.Errorf("doctor's coordinator = %v, want the group's coordinator", co)
	}
	if c, _ := doc["counts"].(map[string]any); c["error"] != float64(0) {
		t.Errorf("doctor counts %v errors on the healthy cluster:\n%s", c["error"], out)
	}
}

// providerLine is what connect-init's config provider logs in the worker
// when it starts waiting for the lock.
const providerLine = "Waiting for this worker's turn to join the group"

// providerJar is testbed.ProviderJar, failing the test when the build does.
func providerJar(t *testing.T) string {
	t.Helper()
	jar, err := testbed.ProviderJar()
	if err != nil {
		t.Fatal(err)
	}
	return jar
}

// run with the startup lock, in both lock modes: two real 3.4.1 workers
// launched through connect-init run at the same instant on a new group.
// exec: one takes the lock and execs, the other waits before its exec.
// worker: both exec at once with the provider jar on their classpath, and
// each JVM waits in the provider after its plugin scan. Either way the
// second sees the holder ready as a member of the Stable group (3.4
// workers have no GET /health), releases it and takes the lock; both
// become healthy and the group ends Stable with 2 members.
func TestRunWithStartupLock(t *testing.T) {
	for _, mode := range []string{"exec", "worker"} {
		t.Run(mode, func(t *testing.T) { runWithLock(t, mode) })
	}
}

func runWithLock(t *testing.T, mode string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	group := newGroup("zk-lock-" + mode)
	var workers []*testbed.Worker
	for _, name := range []string{"a", "b"} {
		props := groupProps(t, group, 3)
		spec, err := cluster.NewWorkerSpec(group+"-"+name, props, 0)
		if err != nil {
			t.Fatal(err)
		}
		// each: the test asserts that the second worker waits for the
		// first to be ready (the default, first, may let it go once the
		// group is open).
		e := env(props, "CONNECT_INIT_TIMEOUT=2m", "CONNECT_INIT_LOCK_MODE="+mode, "CONNECT_INIT_LOCK_JOINS=each")
		if mode == "worker" {
			jar := providerJar(t)
			spec.AddClasspath(jar)
			e = append(e, "CONNECT_INIT_LOCK_JAR="+jar, "CONNECT_INIT_WORKER_CONFIG="+spec.PropsFile)
		}
		w, err := cluster.StartWorkerCommand(spec, append([]string{binary, "run", "--"}, spec.Argv...), e)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop(20 * time.Second)
		workers = append(workers, w)
	}
	for _, w := range workers {
		if err := w.WaitHealthy(ctx); err != nil {
			t.Fatal(err)
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", w.Pid()))
		if err != nil || !strings.Contains(string(cmdline), "org.apache.kafka.connect.cli.ConnectDistributed") {
			t.Errorf("pid %d is not the Connect worker (%v): %q", w.Pid(), err, cmdline)
		}
		testbed.MustContain(t, "worker "+w.Spec.Name, w.Log(), `msg="startup lock mode" component=connect-init mode=`+mode,
			`msg="starting the worker"`)
		if n := w.CountInLog(`msg="acquired startup lock"`); n != 1 {
			t.Errorf("worker %s logged \"acquired startup lock\" %d times, want 1", w.Spec.Name, n)
		}
		if mode == "worker" {
			testbed.MustContain(t, "worker "+w.Spec.Name, w.Log(), providerLine)
		}
	}
	var first, second *testbed.Worker
	for i, w := range workers {
		if strings.Contains(w.Log(), "releasing the startup lock holder") {
			second, first = w, workers[1-i]
		}
	}
	if second == nil || strings.Contains(first.Log(), "releasing the startup lock holder") {
		t.Fatalf("want exactly one worker to release the other; logs:\n%s\n----\n%s", testbed.Tail(workers[0].Log(), 6000), testbed.Tail(workers[1].Log(), 6000))
	}
	holder := "holder=" + first.Spec.RESTURL + "/"
	testbed.MustContain(t, "the second worker", second.Log(), `msg="waiting for startup lock"`,
		`msg="startup lock holder is ready" component=connect-init `+holder+` why="member of the stable group at config offset`,
		"reason=ready")

	admin, err := sarama.NewClusterAdmin(strings.Split(cluster.Bootstrap(), ","), saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for {
		descs, err := admin.DescribeConsumerGroups([]string{group})
		if err == nil && len(descs) == 1 && descs[0].State == "Stable" && len(descs[0].Members) == 2 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s not Stable with 2 members: %v %+v", group, err, descs)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// A killed broker in ZooKeeper mode: until its ZooKeeper session times out
// it stays registered and in the Metadata, so prepare waits for it by id
// and address; then ZooKeeper drops it. With CONNECT_INIT_EXPECTED_BROKERS=2
// prepare then passes, and a repeated prepare passes at once. Expecting 3
// (the bootstrap list), prepare fails at its timeout naming the broker by
// id and last address, with the fix. doctor --json with 2 expected reports
// the 2 live brokers and no error.
func TestKilledBroker(t *testing.T) {
	victim, live := nonController(t)
	addr := cluster.Addr(victim, "PLAINTEXT")
	expired := strings.Count(cluster.ZooKeeperLog(), expiringSession)
	cluster.Kill(victim)
	defer restart(t, victim)
	if ids, _ := metadataBrokers(t, cluster.Addr(live[0], "PLAINTEXT")); !ids[int32(victim)] {
		t.Fatalf("broker %d left the Metadata right after kill -9, before its ZooKeeper session ended: %v", victim, ids)
	}

	props := groupProps(t, newGroup("zk-kill"), 2)
	exp2 := env(props, "CONNECT_INIT_TIMEOUT=60s", "CONNECT_INIT_EXPECTED_BROKERS=2")
	exp3 := env(props, "CONNECT_INIT_TIMEOUT=20s")
	var wg sync.WaitGroup
	var code2, code3 int
	var out2, out3 string
	wg.Add(2)
	go func() { defer wg.Done(); code2, out2 = testbed.RunCLI(t, binary, exp2, "prepare") }()
	go func() { defer wg.Done(); code3, out3 = testbed.RunCLI(t, binary, exp3, "prepare") }()
	wg.Wait()

	t.Logf("expecting 3: %s", lineWith(out3, "gate failed"))
	waiting := fmt.Sprintf("waiting for broker %d at %s: ", victim, addr)
	if code2 != 0 {
		t.Errorf("prepare exit %d with CONNECT_INIT_EXPECTED_BROKERS=2 and broker %d killed:\n%s", code2, victim, out2)
	}
	testbed.MustContain(t, "prepare expecting 2", out2, waiting, "all brokers up", "brokers=2 expected=2")
	if code3 != 1 {
		t.Errorf("prepare exit %d expecting 3 brokers with broker %d killed, want 1:\n%s", code3, victim, out3)
	}
	testbed.MustContain(t, "prepare expecting 3", out3, waiting,
		fmt.Sprintf("2/3 brokers up; 2 of 3 expected brokers live; missing: broker %d (%s, last at %s)", victim, gate.StateZooKeeperGone, addr),
		fmt.Sprintf("start broker %d again, or set CONNECT_INIT_EXPECTED_BROKERS=2", victim))
	if ids, _ := metadataBrokers(t, cluster.Addr(live[0], "PLAINTEXT")); ids[int32(victim)] {
		t.Errorf("broker %d is still in the Metadata after prepare passed without it: %v", victim, ids)
	}
	// ZooKeeper dropped it because its session timed out.
	if n := strings.Count(cluster.ZooKeeperLog(), expiringSession); n != expired+1 {
		t.Errorf("ZooKeeper expired %d sessions since the kill, want 1 (the killed broker's)", n-expired)
	}
	testbed.MustContain(t, "ZooKeeper's log", cluster.ZooKeeperLog(), fmt.Sprintf("timeout of %dms exceeded", zkSession.Milliseconds()))

	code, out := testbed.RunCLI(t, binary, exp2, "prepare")
	if code != 0 {
		t.Errorf("repeated prepare exit %d:\n%s", code, out)
	}
	if strings.Contains(out, "waiting for broker") || strings.Contains(out, "created internal topic") {
		t.Errorf("repeated prepare waited for a broker or created a topic:\n%s", out)
	}

	code, doc, out := testbed.DoctorJSON(t, binary, exp2)
	br, _ := doc["cluster"].(map[string]any)["brokers"].(map[string]any)
	if br == nil || br["registered"] != float64(2) || br["reachable"] != float64(2) || br["expected"] != float64(2) {
		t.Errorf("doctor's brokers = %v, want 2 registered, 2 reachable, 2 expected", br)
	}
	if c, _ := doc["counts"].(map[string]any); code != 0 || c["error"] != float64(0) {
		t.Errorf("doctor exit %d with %v errors, want 0 with the 2 expected brokers live:\n%s", code, c["error"], out)
	}
	// Expecting 3, doctor (one look, no history of registrations) names
	// the bootstrap address no live broker advertises.
	code, doc, out = testbed.DoctorJSON(t, binary, exp3)
	f := testbed.Findings(doc)["broker-count-below-expected/cluster"]
	if code != 1 || f == nil || f["severity"] != "error" {
		t.Fatalf("doctor exit %d, want 1 with a broker-count-below-expected error expecting 3:\n%s", code, out)
	}
	testbed.MustContain(t, "doctor's finding", fmt.Sprint(f), "missing: "+addr+" (bootstrap address that no live broker advertises)")
}

// expiringSession is what ZooKeeper logs when a session times out.
const expiringSession = "Expiring session 0x"

// nonController returns a broker that is not the controller (3, else 2),
// so that no controller election runs, and the other two.
func nonController(t *testing.T) (victim int, live []int) {
	t.Helper()
	ids, controller := metadataBrokers(t, cluster.Addr(1, "PLAINTEXT"))
	if len(ids) != 3 {
		t.Fatalf("the cluster has brokers %v, want 3", ids)
	}
	victim = 3
	if controller == 3 {
		victim = 2
	}
	for id := 1; id <= 3; id++ {
		if id != victim {
			live = append(live, id)
		}
	}
	return victim, live
}

// A gracefully stopped broker in ZooKeeper mode closes its ZooKeeper
// session as it shuts down, so it leaves the registrations, and the
// Metadata, at once: no session expires. prepare with
// CONNECT_INIT_EXPECTED_BROKERS=2 passes without waiting for it. Expecting
// 3, this run never saw it registered, so prepare fails at its timeout
// naming its bootstrap address, with the fix.
func TestStoppedBroker(t *testing.T) {
	victim, live := nonController(t)
	addr := cluster.Addr(victim, "PLAINTEXT")
	expired := strings.Count(cluster.ZooKeeperLog(), expiringSession)
	// A group whose internal topics exist with a replica on every broker,
	// as on a cluster where a worker restarts after a broker left.
	existing := groupProps(t, newGroup("zk-stop-existing"), 3)
	if code, out := testbed.RunCLI(t, binary, env(existing, "CONNECT_INIT_TIMEOUT=60s"), "prepare"); code != 0 {
		t.Fatalf("prepare exit %d with every broker up:\n%s", code, out)
	}
	cluster.Stop(victim)
	defer restart(t, victim)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		if ids, _ := metadataBrokers(t, cluster.Addr(live[0], "PLAINTEXT")); !ids[int32(victim)] {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("broker %d still in the Metadata after it stopped", victim)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if n := strings.Count(cluster.ZooKeeperLog(), expiringSession); n != expired {
		t.Errorf("ZooKeeper expired %d sessions after broker %d stopped, want none (it closes its session)", n-expired, victim)
	}

	props := groupProps(t, newGroup("zk-stop"), 2)
	exp2 := env(props, "CONNECT_INIT_TIMEOUT=60s", "CONNECT_INIT_EXPECTED_BROKERS=2")
	exp3 := env(props, "CONNECT_INIT_TIMEOUT=6s")
	code, out := testbed.RunCLI(t, binary, exp2, "prepare")
	if code != 0 {
		t.Errorf("prepare exit %d with CONNECT_INIT_EXPECTED_BROKERS=2 and broker %d stopped:\n%s", code, victim, out)
	}
	testbed.MustContain(t, "prepare expecting 2", out, "all brokers up", "brokers=2 expected=2")
	if strings.Contains(out, "waiting for broker") {
		t.Errorf("prepare waited for a broker that left the registrations:\n%s", out)
	}
	code, out = testbed.RunCLI(t, binary, exp3, "prepare")
	t.Logf("expecting 3: %s", lineWith(out, "gate failed"))
	if code != 1 {
		t.Errorf("prepare exit %d expecting 3 brokers with broker %d stopped, want 1:\n%s", code, victim, out)
	}
	testbed.MustContain(t, "prepare expecting 3", out,
		fmt.Sprintf("2/3 brokers up; 2 of 3 expected brokers live; missing: %s (bootstrap address that no live broker advertises)", addr),
		"start the missing brokers, or set CONNECT_INIT_EXPECTED_BROKERS=2")
	// Where the internal topics hold a replica on it, the broker that left
	// before this run saw it is named by id as well.
	code, out = testbed.RunCLI(t, binary, env(existing, "CONNECT_INIT_TIMEOUT=6s"), "prepare")
	if code != 1 {
		t.Errorf("prepare exit %d expecting 3 brokers with broker %d stopped, want 1:\n%s", code, victim, out)
	}
	testbed.MustContain(t, "prepare expecting 3, topics existing", out,
		fmt.Sprintf("broker %d (not live, still a replica of the internal topics; address unknown)", victim))
}

// restart starts broker id again and waits until it is back in the
// Metadata.
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
	other := 1
	if id == 1 {
		other = 2
	}
	for {
		if ids, _ := metadataBrokers(t, cluster.Addr(other, "PLAINTEXT")); ids[int32(id)] {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("broker %d not back in the Metadata", id)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// lineWith is the first line of out containing substr, for the test log.
func lineWith(out, substr string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, substr) {
			return l
		}
	}
	return "(no line with " + substr + ")"
}

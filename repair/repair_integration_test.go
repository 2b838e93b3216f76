//go:build integration

package repair_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
)

// One cluster for the package: three brokers and a controller of their
// own (so that a killed broker does not take the KRaft quorum with it),
// offsets.topic.replication.factor=1 on the brokers, and only broker 1
// started at first: incident 2's cluster.
var (
	cluster *testbed.Cluster
	binary  string
	workDir string
)

func TestMain(m *testing.M) { os.Exit(mainWithCluster(m)) }

func mainWithCluster(m *testing.M) int {
	defer testbed.KillAll()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var err error
	if workDir, err = os.MkdirTemp("", "connect-init-repair-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(workDir)
	if binary, err = testbed.BuildConnectInit(workDir, "v0.0.0-itest"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dist, err := testbed.Fetch(ctx, testbed.Version())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cluster, err = testbed.StartCluster(ctx, dist, testbed.ClusterOptions{Brokers: 3, Dir: filepath.Join(workDir, "cluster"), HeapMB: 256,
		DedicatedController: true, StartNodes: []int{1},
		BrokerProps: map[string]string{"offsets.topic.replication.factor": "1", "broker.session.timeout.ms": "6000", "broker.heartbeat.interval.ms": "1000"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cluster.Close()
	return m.Run()
}

const (
	appGroup    = "inc2-app"
	workerGroup = "inc2-connect"
	dataTopic   = "inc2-data"
)

func newClient(t *testing.T, addrs ...string) sarama.Client {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.Metadata.Retry.Max = 1
	cfg.Net.DialTimeout = 3 * time.Second
	if len(addrs) == 0 {
		addrs = strings.Split(cluster.Bootstrap(), ",")
	}
	client, err := sarama.NewClient(addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// eventually polls f every 300 ms until it returns nil or ctx ends.
func eventually(ctx context.Context, t *testing.T, what string, f func() error) {
	t.Helper()
	var err error
	for {
		if err = f(); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, err)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// findCoordinator asks broker addr, with a FindCoordinator request of its
// own, for group's coordinator; it returns the coordinator's id or the
// error code the broker answered.
func findCoordinator(addr, group string) (int32, error) {
	b := sarama.NewBroker(addr)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.Net.DialTimeout = 3 * time.Second
	if err := b.Open(cfg); err != nil {
		return -1, err
	}
	defer b.Close()
	rsp, err := b.FindCoordinator(&sarama.FindCoordinatorRequest{Version: 2, CoordinatorKey: group, CoordinatorType: sarama.CoordinatorGroup})
	if err != nil {
		return -1, err
	}
	if !errors.Is(rsp.Err, sarama.ErrNoError) {
		return -1, rsp.Err
	}
	return rsp.Coordinator.ID(), nil
}

// groupPartition is Kafka's abs(javaHashCode(group)) % n.
func groupPartition(group string, n int32) int32 {
	var h int32
	for _, r := range group {
		h = 31*h + int32(r)
	}
	if h == -2147483648 {
		return 0
	}
	if h < 0 {
		h = -h
	}
	return h % n
}

// snapshot is what must not change in a dry run: __consumer_offsets'
// assignment and the throttle settings.
type snapshot struct {
	Replicas map[int32][]int32
	Topic    map[string]string
	Brokers  map[string]string
}

func takeSnapshot(t *testing.T, admin sarama.ClusterAdmin) snapshot {
	t.Helper()
	md, err := admin.DescribeTopics([]string{"__consumer_offsets"})
	if err != nil || len(md) != 1 {
		t.Fatalf("describe __consumer_offsets: %v", err)
	}
	s := snapshot{Replicas: map[int32][]int32{}, Topic: map[string]string{}, Brokers: map[string]string{}}
	for _, p := range md[0].Partitions {
		s.Replicas[p.ID] = p.Replicas
	}
	for _, e := range describeConfig(t, admin, sarama.TopicResource, "__consumer_offsets") {
		if strings.Contains(e.Name, "throttled") {
			s.Topic[e.Name] = e.Value
		}
	}
	for id := 1; id <= 3; id++ {
		for _, e := range describeConfig(t, admin, sarama.BrokerResource, fmt.Sprint(id)) {
			if strings.Contains(e.Name, "throttled") && !e.Default {
				s.Brokers[fmt.Sprintf("%d/%s", id, e.Name)] = e.Value
			}
		}
	}
	return s
}

func describeConfig(t *testing.T, admin sarama.ClusterAdmin, typ sarama.ConfigResourceType, name string) []sarama.ConfigEntry {
	t.Helper()
	rs, err := admin.DescribeConfigs([]*sarama.ConfigResource{{Type: typ, Name: name}}, sarama.DescribeConfigsOptions{})
	if err != nil || len(rs) != 1 || !errors.Is(rs[0].ErrorCode, sarama.ErrNoError) {
		t.Fatalf("describe configs of %s: %v %+v", name, err, rs)
	}
	return rs[0].Configs
}

func committed(t *testing.T, admin sarama.ClusterAdmin, group string) (map[int32]int64, error) {
	t.Helper()
	rsp, err := admin.ListConsumerGroupOffsets(group, map[string][]int32{dataTopic: {0, 1, 2}})
	if err != nil {
		return nil, err
	}
	if !errors.Is(rsp.Err, sarama.ErrNoError) {
		return nil, rsp.Err
	}
	out := map[int32]int64{}
	for p, b := range rsp.Blocks[dataTopic] {
		if !errors.Is(b.Err, sarama.ErrNoError) {
			return nil, b.Err
		}
		out[p] = b.Offset
	}
	return out, nil
}

func repairEnv() []string {
	return append(testbed.BaseEnv(), testbed.EnvFromProps(map[string]string{
		"bootstrap.servers":         cluster.Bootstrap(),
		"group.id":                  workerGroup,
		"config.storage.topic":      workerGroup + "-configs",
		"offset.storage.topic":      workerGroup + "-offsets",
		"status.storage.topic":      workerGroup + "-status",
		"offset.storage.partitions": "5", "status.storage.partitions": "2",
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
		"rest.advertised.host.name": "127.0.0.1",
	})...)
}

// TestIncident2RepairSurvivesBrokerLoss is incident 2 from start to end:
// __consumer_offsets created while only broker 1 runs (all 50 partitions
// on broker 1, one replica each), committed offsets, a kill -9 of broker 1
// that leaves the group without coordinator (COORDINATOR_NOT_AVAILABLE);
// then, with broker 1 back, repair without --execute changes nothing,
// repair --execute raises every partition to three in-sync replicas and
// removes its throttle, and after another kill -9 of broker 1 a consumer
// of the group finds its coordinator and resumes from its committed
// offsets, and a Connect worker group finds its coordinator too.
func TestIncident2RepairSurvivesBrokerLoss(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	// __consumer_offsets is created by the first coordinator lookup, while
	// only broker 1 runs.
	early := newClient(t, cluster.Addr(1, "PLAINTEXT"))
	eventually(ctx, t, "coordinator lookup with one broker", func() error { _, err := early.Coordinator(appGroup); return err })
	for _, id := range []int{2, 3} {
		if err := cluster.Start(id); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []int{2, 3} {
		if err := cluster.WaitStarted(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	client := newClient(t)
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	before := takeSnapshot(t, admin)
	if len(before.Replicas) != 50 {
		t.Fatalf("__consumer_offsets has %d partitions, want 50", len(before.Replicas))
	}
	for p, r := range before.Replicas {
		if !reflect.DeepEqual(r, []int32{1}) {
			t.Fatalf("__consumer_offsets-%d has replicas %v, want [1] (created while only broker 1 ran)", p, r)
		}
	}

	// A data topic that survives a broker loss, and committed offsets.
	if err := admin.CreateTopic(dataTopic, &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: 3}, false); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "data topic leaders", func() error {
		if err := client.RefreshMetadata(dataTopic); err != nil {
			return err
		}
		ps, err := client.WritablePartitions(dataTopic)
		if err == nil && len(ps) != 3 {
			err = fmt.Errorf("%d writable partitions", len(ps))
		}
		return err
	})
	pcfg := sarama.NewConfig()
	pcfg.Version = sarama.MaxVersion
	pcfg.Producer.Return.Successes = true
	pcfg.Producer.RequiredAcks = sarama.WaitForAll
	pcfg.Producer.Partitioner = sarama.NewManualPartitioner
	producer, err := sarama.NewSyncProducer(strings.Split(cluster.Bootstrap(), ","), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 3; p++ {
		for i := 0; i < 10; i++ {
			if _, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: dataTopic, Partition: p, Value: sarama.StringEncoder(fmt.Sprint(i))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	producer.Close()
	want := map[int32]int64{0: 5, 1: 6, 2: 7}
	commit(ctx, t, want)
	if got, err := committed(t, admin, appGroup); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("committed offsets %v %v, want %v", got, err, want)
	}
	t.Logf("group %s lives in __consumer_offsets-%d, worker group %s in -%d, both on broker 1", appGroup, groupPartition(appGroup, 50), workerGroup, groupPartition(workerGroup, 50))

	// Without the repair: kill -9 broker 1 and the groups lose their
	// coordinator.
	cluster.Kill(1)
	for _, g := range []string{appGroup, workerGroup} {
		eventually(ctx, t, "COORDINATOR_NOT_AVAILABLE for "+g+" after broker 1 died", func() error {
			id, err := findCoordinator(cluster.Addr(2, "PLAINTEXT"), g)
			if errors.Is(err, sarama.ErrConsumerCoordinatorNotAvailable) {
				return nil
			}
			return fmt.Errorf("FindCoordinator: coordinator %d, error %v", id, err)
		})
	}
	t.Log("without the repair: FindCoordinator answers COORDINATOR_NOT_AVAILABLE for both groups with broker 1 dead")

	// repair refuses while broker 1 is down: its partitions cannot copy.
	code, out, err := testbed.Run(ctx, binary, []string{"repair", "--topics=offsets", "--execute"}, repairEnv())
	if err != nil || code != 1 || !strings.Contains(out, "not up") {
		t.Fatalf("repair --execute with broker 1 dead: want exit 1 naming the broker not up, got %d %v:\n%s", code, err, out)
	}

	if err := cluster.Start(1); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitStarted(ctx, 1); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "coordinator back with broker 1", func() error { _, err := findCoordinator(cluster.Addr(2, "PLAINTEXT"), appGroup); return err })
	eventually(ctx, t, "prepare creates Connect's topics", func() error {
		code, out, err := testbed.Run(ctx, binary, []string{"prepare"}, append(repairEnv(), "CONNECT_INIT_TIMEOUT=1m", "CONNECT_INIT_EXPECTED_BROKERS=3"))
		if err != nil || code != 0 {
			return fmt.Errorf("prepare exit %d %v:\n%s", code, err, out)
		}
		return nil
	})

	// Connections to the killed broker 1 are gone: new clients.
	client = newClient(t)
	if admin, err = sarama.NewClusterAdminFromClient(client); err != nil {
		t.Fatal(err)
	}

	// A Connect worker of the worker group.
	props, err := cluster.WorkerProps(map[string]string{"group.id": workerGroup, "config.storage.topic": workerGroup + "-configs",
		"offset.storage.topic": workerGroup + "-offsets", "status.storage.topic": workerGroup + "-status"})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cluster.NewWorkerSpec("w1", props, 256)
	if err != nil {
		t.Fatal(err)
	}
	worker, err := cluster.StartWorker(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Kill()

	// Too few brokers for the asked factor: refused, nothing changed.
	code, out, err = testbed.Run(ctx, binary, []string{"repair", "--replication-factor", "4"}, repairEnv())
	if err != nil || code != 1 || !strings.Contains(out, "needs 4 live brokers, only 3 are up") {
		t.Fatalf("repair --replication-factor 4: want exit 1, got %d %v:\n%s", code, err, out)
	}

	// A reassignment someone else started (throttled to crawl, so it stays
	// in progress): repair refuses, with and without --execute.
	foreignReassignment(ctx, t, admin, client, func() {
		for _, args := range [][]string{{"repair"}, {"repair", "--execute"}} {
			code, out, err := testbed.Run(ctx, binary, args, repairEnv())
			if err != nil || code != 1 || !strings.Contains(out, "a partition reassignment that connect-init repair did not start is in progress: inc2-foreign-0") {
				t.Fatalf("%v during a foreign reassignment: want exit 1 naming it, got %d %v:\n%s", args, code, err, out)
			}
		}
	})

	// The dry run prints the plan and changes nothing.
	before = takeSnapshot(t, admin)
	code, out, err = testbed.Run(ctx, binary, []string{"repair"}, repairEnv())
	if err != nil || code != 0 {
		t.Fatalf("repair (dry run): exit %d %v:\n%s", code, err, out)
	}
	for _, wantLine := range []string{"dry run: nothing changed", "__consumer_offsets  50 partition(s), replication factor 1 -> 3", "50 to reassign", "__consumer_offsets partitions 0-49  [1] -> [1,2,3]"} {
		if !strings.Contains(out, wantLine) {
			t.Fatalf("repair (dry run) output lacks %q:\n%s", wantLine, out)
		}
	}
	if after := takeSnapshot(t, admin); !reflect.DeepEqual(before, after) {
		t.Fatalf("the dry run changed the cluster:\nbefore %v\nafter  %v", before, after)
	}
	all50 := make([]int32, 50)
	for i := range all50 {
		all50[i] = int32(i)
	}
	if st, err := admin.ListPartitionReassignments("__consumer_offsets", all50); err != nil || len(st["__consumer_offsets"]) != 0 {
		t.Fatalf("the dry run left reassignments: %v %v", st, err)
	}
	t.Logf("repair (dry run):\n%s", out)

	// The repair.
	start := time.Now()
	code, out, err = testbed.Run(ctx, binary, []string{"repair", "--execute"}, repairEnv())
	if err != nil || code != 0 || !strings.Contains(out, "Done: 50 partition(s) reassigned and verified") {
		t.Fatalf("repair --execute: exit %d %v:\n%s", code, err, out)
	}
	t.Logf("repair --execute took %s:\n%s", time.Since(start).Round(time.Millisecond), out)
	md, err := admin.DescribeTopics([]string{"__consumer_offsets"})
	if err != nil {
		t.Fatal(err)
	}
	perBroker := map[int32]int{}
	for _, p := range md[0].Partitions {
		if len(p.Replicas) != 3 || len(p.Isr) != 3 || p.Replicas[0] != 1 {
			t.Fatalf("after the repair __consumer_offsets-%d has replicas %v ISR %v, want 3 replicas led by 1, all in sync", p.ID, p.Replicas, p.Isr)
		}
		for _, r := range p.Replicas {
			perBroker[r]++
		}
	}
	if perBroker[1] != 50 || perBroker[2] != 50 || perBroker[3] != 50 {
		t.Fatalf("replicas per broker %v, want 50 each", perBroker)
	}
	if s := takeSnapshot(t, admin); len(s.Topic) > 0 && (s.Topic["leader.replication.throttled.replicas"] != "" || s.Topic["follower.replication.throttled.replicas"] != "") || len(s.Brokers) > 0 {
		t.Fatalf("throttle left after the repair: topic %v brokers %v", s.Topic, s.Brokers)
	}
	if got, err := committed(t, admin, appGroup); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("committed offsets after the repair %v %v, want %v", got, err, want)
	}
	if err := worker.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}

	// A second run has nothing to do.
	code, out, err = testbed.Run(ctx, binary, []string{"repair", "--execute"}, repairEnv())
	if err != nil || code != 0 || !strings.Contains(out, "replication factor 3, target 3") || !strings.Contains(out, "Nothing to repair.") || strings.Contains(out, "throttle removed") {
		t.Fatalf("second repair --execute: exit %d %v; want only \"Nothing to repair.\":\n%s", code, err, out)
	}

	// The incident again: kill -9 broker 1.
	cluster.Kill(1)
	killed := time.Now()
	for _, g := range []string{appGroup, workerGroup} {
		var id int32
		eventually(ctx, t, "coordinator for "+g+" after broker 1 died", func() (err error) {
			id, err = findCoordinator(cluster.Addr(2, "PLAINTEXT"), g)
			if err == nil && id == 1 {
				err = errors.New("still broker 1")
			}
			return err
		})
		t.Logf("after the repair, broker 1 killed: group %s has coordinator broker %d (%s after the kill)", g, id, time.Since(killed).Round(100*time.Millisecond))
	}
	resumed := consumeFirst(ctx, t)
	if !reflect.DeepEqual(resumed, want) {
		t.Fatalf("with broker 1 dead the consumer resumed at %v, want the committed %v", resumed, want)
	}
	t.Logf("a consumer of %s joined with broker 1 dead and resumed at the committed offsets %v", appGroup, resumed)
	// The worker's group has a coordinator again and the worker serves.
	eventually(ctx, t, "worker group Stable after broker 1 died", func() error {
		a := newClient(t, cluster.Addr(2, "PLAINTEXT"), cluster.Addr(3, "PLAINTEXT"))
		ad, err := sarama.NewClusterAdminFromClient(a)
		if err != nil {
			return err
		}
		gs, err := ad.DescribeConsumerGroups([]string{workerGroup})
		if err != nil {
			return err
		}
		if len(gs) != 1 || gs[0].State != "Stable" || len(gs[0].Members) != 1 {
			return fmt.Errorf("worker group %+v", gs)
		}
		return nil
	})
	if err := worker.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("the Connect worker group %s is Stable with its worker, which answers /health 200, with broker 1 dead", workerGroup)
	repairWithBrokerDown(ctx, t)
}

// repairWithBrokerDown: broker 1 killed a moment ago is still registered:
// repair refuses, naming it, never with a raw dial error or a promise to
// resume what it never started. Once the controller fenced it, the default
// target for __consumer_offsets (its broker setting is 1) stays the 3 the
// cluster has, said first as a warning that only 2 brokers can take it,
// not a silent 2; here every partition has 3 replicas already, so there is
// nothing to do and --execute says only that.
func repairWithBrokerDown(ctx context.Context, t *testing.T) {
	if err := cluster.Start(1); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitStarted(ctx, 1); err != nil {
		t.Fatal(err)
	}
	cluster.Kill(1)
	addr1 := cluster.Addr(1, "PLAINTEXT")
	code, out, err := testbed.Run(ctx, binary, []string{"repair", "--topics=offsets"}, repairEnv())
	if err != nil || code != 1 || !strings.Contains(out, "broker 1 at "+addr1+" is registered but does not answer") ||
		strings.Contains(out, "dial tcp") || strings.Contains(out, "resumes the reassignment") {
		t.Fatalf("repair with broker 1 just killed: exit %d %v; want 1 naming broker 1, no raw dial error:\n%s", code, err, out)
	}
	t.Logf("repair with broker 1 just killed: %s", firstLineWith(out, "refused"))
	eventually(ctx, t, "repair no longer waiting on broker 1 (fenced)", func() error {
		code, out, err = testbed.Run(ctx, binary, []string{"repair", "--topics=offsets"}, repairEnv())
		if err != nil || code != 0 {
			return fmt.Errorf("exit %d %v: %s", code, err, firstLineWith(out, "refused"))
		}
		return nil
	})
	for _, want := range []string{"WARNING  __consumer_offsets: target 2 replicas, below the 3 wanted", "broker 1 (registered but fenced", "Nothing to repair."} {
		if !strings.Contains(out, want) {
			t.Errorf("repair with broker 1 fenced lacks %q:\n%s", want, out)
		}
	}
	code, out, err = testbed.Run(ctx, binary, []string{"repair", "--topics=offsets", "--execute"}, repairEnv())
	if err != nil || code != 0 || !strings.Contains(out, "Nothing to repair.") || strings.Contains(out, "throttle removed") {
		t.Fatalf("repair --execute with nothing to do: exit %d %v:\n%s", code, err, out)
	}
}

func firstLineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// foreignReassignment runs during a reassignment of a topic of its own
// (broker 2 -> [2,3], 300 KB at 1 KB/s), then cancels it and removes its
// throttle.
func foreignReassignment(ctx context.Context, t *testing.T, admin sarama.ClusterAdmin, client sarama.Client, during func()) {
	t.Helper()
	const topic = "inc2-foreign"
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: -1, ReplicationFactor: -1, ReplicaAssignment: map[int32][]int32{0: {2}}}, false); err != nil {
		t.Fatal(err)
	}
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.Producer.Return.Successes = true
	cfg.Producer.Retry.Max = 40
	cfg.Producer.Retry.Backoff = 250 * time.Millisecond
	producer, err := sarama.NewSyncProducer([]string{cluster.Addr(2, "PLAINTEXT"), cluster.Addr(3, "PLAINTEXT")}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// 4 MB: a follower's first fetch takes up to replica.fetch.max.bytes
	// (1 MiB) before the throttle holds it back, so a smaller log is copied
	// at once and the reassignment ends before repair looks.
	var msgs []*sarama.ProducerMessage
	for i := 0; i < 4000; i++ {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: topic, Value: sarama.ByteEncoder(make([]byte, 1000))})
	}
	if err := producer.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
	producer.Close()
	rate, list := "1000", "0:3"
	set := sarama.IncrementalAlterConfigsOperationSet
	for _, b := range []string{"2", "3"} {
		if err := admin.IncrementalAlterConfig(sarama.BrokerResource, b, map[string]sarama.IncrementalAlterConfigsEntry{
			"leader.replication.throttled.rate": {Operation: set, Value: &rate}, "follower.replication.throttled.rate": {Operation: set, Value: &rate}}, false); err != nil {
			t.Fatal(err)
		}
	}
	leaders := "0:2"
	if err := admin.IncrementalAlterConfig(sarama.TopicResource, topic, map[string]sarama.IncrementalAlterConfigsEntry{
		"leader.replication.throttled.replicas": {Operation: set, Value: &leaders}, "follower.replication.throttled.replicas": {Operation: set, Value: &list}}, false); err != nil {
		t.Fatal(err)
	}
	if err := admin.AlterPartitionReassignments(topic, [][]int32{{2, 3}}); err != nil {
		t.Fatal(err)
	}
	st, err := admin.ListPartitionReassignments(topic, []int32{0})
	if err != nil || st[topic][0] == nil {
		t.Fatalf("the foreign reassignment is not in progress: %v %v", st, err)
	}
	during()
	// nil replicas: cancel (it may have finished by now despite the throttle)
	if err := admin.AlterPartitionReassignments(topic, [][]int32{nil}); err != nil && !errors.Is(err, sarama.ErrNoReassignmentInProgress) {
		t.Fatal(err)
	}
	del := sarama.IncrementalAlterConfigsOperationDelete
	for _, b := range []string{"2", "3"} {
		if err := admin.IncrementalAlterConfig(sarama.BrokerResource, b, map[string]sarama.IncrementalAlterConfigsEntry{
			"leader.replication.throttled.rate": {Operation: del}, "follower.replication.throttled.rate": {Operation: del}}, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.DeleteTopic(topic); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "no reassignment left", func() error {
		st, err := admin.ListPartitionReassignments(dataTopic, []int32{0, 1, 2})
		if err == nil && len(st[dataTopic]) > 0 {
			err = fmt.Errorf("still %v", st)
		}
		return err
	})
	_ = client
}

// commit commits offsets for appGroup as a consumer of the group would.
func commit(ctx context.Context, t *testing.T, offsets map[int32]int64) {
	t.Helper()
	client := newClient(t)
	om, err := sarama.NewOffsetManagerFromClient(appGroup, client)
	if err != nil {
		t.Fatal(err)
	}
	defer om.Close()
	for p, off := range offsets {
		pom, err := om.ManagePartition(dataTopic, p)
		if err != nil {
			t.Fatal(err)
		}
		pom.MarkOffset(off, "")
		defer pom.Close()
	}
	om.Commit()
	_ = ctx
}

// consumeFirst joins appGroup as a consumer and returns, per partition of
// the data topic, the offset of the first record it is given: the group's
// committed offset.
func consumeFirst(ctx context.Context, t *testing.T) map[int32]int64 {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Group.Rebalance.Timeout = 20 * time.Second
	cg, err := sarama.NewConsumerGroup([]string{cluster.Addr(2, "PLAINTEXT"), cluster.Addr(3, "PLAINTEXT")}, appGroup, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	h := &firstHandler{first: map[int32]int64{}, done: make(chan struct{})}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		for cctx.Err() == nil {
			if err := cg.Consume(cctx, []string{dataTopic}, h); err != nil {
				errc <- err
				return
			}
		}
	}()
	select {
	case <-h.done:
	case err := <-errc:
		t.Fatalf("consumer group: %v", err)
	case <-ctx.Done():
		t.Fatalf("consumer group got no records: %v", h.snapshot())
	}
	return h.snapshot()
}

type firstHandler struct {
	mu    sync.Mutex
	first map[int32]int64
	done  chan struct{}
	once  sync.Once
}

func (h *firstHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *firstHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *firstHandler) ConsumeClaim(_ sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		h.mu.Lock()
		if _, ok := h.first[m.Partition]; !ok {
			h.first[m.Partition] = m.Offset
		}
		n := len(h.first)
		h.mu.Unlock()
		if n == 3 {
			h.once.Do(func() { close(h.done) })
		}
	}
	return nil
}

func (h *firstHandler) snapshot() map[int32]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[int32]int64{}
	for k, v := range h.first {
		out[k] = v
	}
	return out
}

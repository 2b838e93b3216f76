//go:build integration

package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	diag "github.com/connect-init/connect-init/doctor"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/testbed"
	"github.com/connect-init/connect-init/kafka/kafkalog"
)

// TestDoctorWatchCountsGenerations (issue 51, deliver 4): two real
// workers of one group, and two watchers (doctor --watch --metrics-addr,
// a look every second): one whose principal may read __consumer_offsets
// (the cluster's super user), one whose SCRAM principal is denied Read on
// it. A worker is stopped and started again (at least 2 rebalances). The
// first serves connect_init_group_generation equal to the last generation
// the workers' own logs joined at, and its rebalances_total grows by
// exactly the generations in between; the second serves the window's
// count, no generation, rebalances_source{source="window"} 1, and logs
// the right it lacks. Both serve build_info with the binary's -ldflags
// stamp. About 40 s: two worker starts and a restart.
//
// With CITEST_DUMP_GROUP_METADATA=DIR it writes the group's last group
// metadata record, as the broker stored it, to DIR as a test vector for
// doctor's TestDecodeGroupMetadataVectors.
func TestDoctorWatchCountsGenerations(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "gen")
	g := group["group.id"]
	workerProps := func() map[string]string {
		p, err := cluster.WorkerProps(group)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	propsA, propsB := workerProps(), workerProps()
	a := startTestWorker(t, g+"-a", propsA)
	b := startTestWorker(t, g+"-b", propsB)
	for _, w := range []*testbed.Worker{a, b} {
		if err := w.WaitHealthy(ctx); err != nil {
			t.Fatal(err)
		}
	}
	user := "nooffsets-" + randomSuffix()
	password := scramUser(t, user, sarama.SCRAM_MECHANISM_SHA_512)
	denyOffsetsRead(t, "User:"+user)

	exact := startMetricsWatcher(t, "exact", connectInitEnv(propsA))
	refused := startMetricsWatcher(t, "refused", connectInitEnv(merge(propsA, map[string]string{
		"bootstrap.servers": cluster.BootstrapFor(listenerSASL), "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
		"sasl.jaas.config": jaas(scramModule, map[string]string{"username": user, "password": password})})))
	grp := map[string]string{"group_id": g}
	joined := func() int {
		return max(lastJoinedGeneration(a.Log()), lastJoinedGeneration(b.Log()))
	}
	// settled waits until the exact watcher serves the generation the
	// workers last joined at, with both workers in the group.
	settled := func(what string) (gen, total float64) {
		t.Helper()
		for {
			mfs := exact.scrape(t)
			gen, okG := metricValue(mfs, "connect_init_group_generation", grp)
			members, _ := metricValue(mfs, "connect_init_group_members", grp)
			if okG && members == 2 && int(gen) == joined() && joined() > 0 {
				total, _ = metricValue(mfs, "connect_init_group_rebalances_total", grp)
				return gen, total
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: the watcher serves generation %v (%v) and %v members; the workers joined generation %d last; /metrics:\n%s",
					what, gen, okG, members, joined(), exact.raw(t))
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
	gen0, total0 := settled("at the start")

	b.Stop(20 * time.Second)
	for {
		if m, _ := metricValue(exact.scrape(t), "connect_init_group_members", grp); m == 1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the watcher never saw the group without b: %v", ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	b = startTestWorker(t, g+"-b2", propsB)
	if err := b.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	gen1, total1 := settled("after b's restart")
	t.Logf("MEASURE generation %v -> %v (the workers' logs: %d), rebalances_total %v -> %v", gen0, gen1, joined(), total0, total1)
	if gen1-gen0 < 2 {
		t.Errorf("a stop and a start moved the generation from %v to %v, want at least 2 rebalances", gen0, gen1)
	}
	if total1-total0 != gen1-gen0 {
		t.Errorf("rebalances_total grew by %v while the generation moved by %v: not exact", total1-total0, gen1-gen0)
	}
	mfs := exact.scrape(t)
	if v, _ := metricValue(mfs, "connect_init_group_rebalances_source", map[string]string{"source": "generation"}); v != 1 {
		t.Errorf("the exact watcher serves rebalances_source{source=generation} %v, want 1", v)
	}
	if v, _ := metricValue(mfs, "connect_init_build_info", nil); v != 1 || buildVersion(mfs) != testVersionStamp {
		t.Errorf("build_info version %q, want the -ldflags stamp %q (what `connect-init version` prints)", buildVersion(mfs), testVersionStamp)
	}

	rmfs := refused.scrape(t)
	if v, _ := metricValue(rmfs, "connect_init_group_rebalances_source", map[string]string{"source": "window"}); v != 1 {
		t.Errorf("the watcher without Read on __consumer_offsets serves rebalances_source{source=window} %v, want 1; /metrics:\n%s", v, refused.raw(t))
	}
	if v, ok := metricValue(rmfs, "connect_init_group_generation", grp); ok {
		t.Errorf("the watcher without Read on __consumer_offsets serves a generation (%v)", v)
	}
	rtotal, _ := metricValue(rmfs, "connect_init_group_rebalances_total", grp)
	t.Logf("MEASURE the watcher without Read on __consumer_offsets counted %v rebalances by its windows", rtotal)
	reqs, _ := metricValue(mfs, "connect_init_doctor_look_kafka_requests", grp)
	rreqs, _ := metricValue(rmfs, "connect_init_doctor_look_kafka_requests", grp)
	t.Logf("MEASURE a calm look's Kafka requests: %v reading the generation, %v refused", reqs, rreqs)
	if log := refused.Log(); !strings.Contains(log, "cannot read the group's __consumer_offsets partition") || !strings.Contains(log, "grant it Read and Describe on the topic __consumer_offsets") {
		t.Errorf("the refused watcher's log does not say it falls back, and why:\n%s", testbed.Tail(log, 3000))
	}
	noSecret(t, "the refused watcher's log", refused.Log(), password)
	dumpGroupMetadata(t, g, int(gen1), 2)
}

// denyOffsetsRead denies principal Read on __consumer_offsets, allowing
// everyone everything else on it (the cluster allows what no ACL speaks
// of, and an ACL on the topic would otherwise refuse the other
// principals), until the test ends.
func denyOffsetsRead(t *testing.T, principal string) {
	t.Helper()
	admin := newAdmin(t)
	res := sarama.Resource{ResourceType: sarama.AclResourceTopic, ResourceName: "__consumer_offsets", ResourcePatternType: sarama.AclPatternLiteral}
	acls := []*sarama.Acl{
		{Principal: "User:*", Host: "*", Operation: sarama.AclOperationAll, PermissionType: sarama.AclPermissionAllow},
		{Principal: principal, Host: "*", Operation: sarama.AclOperationRead, PermissionType: sarama.AclPermissionDeny},
	}
	if err := admin.CreateACLs([]*sarama.ResourceAcls{{Resource: res, Acls: acls}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, a := range acls {
			filter := sarama.AclFilter{ResourceType: res.ResourceType, ResourceName: &res.ResourceName, ResourcePatternTypeFilter: res.ResourcePatternType,
				Principal: &a.Principal, Host: &a.Host, Operation: a.Operation, PermissionType: a.PermissionType}
			if _, err := admin.DeleteACL(filter, false); err != nil {
				t.Errorf("delete the ACL %+v on __consumer_offsets: %v", a, err)
			}
		}
	})
}

var joinedAt = regexp.MustCompile(`Joined group at generation (\d+)`)

// lastJoinedGeneration is the last generation a worker's log says it
// joined at (0: none).
func lastJoinedGeneration(log string) int {
	last := 0
	for _, m := range joinedAt.FindAllStringSubmatch(log, -1) {
		if n, err := strconv.Atoi(m[1]); err == nil {
			last = n
		}
	}
	return last
}

// metricsWatcher is a running doctor --watch --metrics-addr.
type metricsWatcher struct {
	*testbed.Process
	url string
}

func startMetricsWatcher(t *testing.T, name string, env []string) *metricsWatcher {
	t.Helper()
	port, err := testbed.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	dir := t.TempDir()
	p, err := testbed.StartProcess("watcher-"+name, []string{binary, "doctor", "--watch", "--interval=1s", "--metrics-addr=" + addr},
		env, dir, filepath.Join(dir, "watcher.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("watcher %s log:\n%s", name, testbed.Tail(p.Log(), 6000))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := testbed.WaitForPort(ctx, addr); err != nil {
		t.Fatalf("the watcher does not serve %s: %v; log:\n%s", addr, err, p.Log())
	}
	return &metricsWatcher{Process: p, url: "http://" + addr + "/metrics"}
}

func (w *metricsWatcher) raw(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(w.url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

func (w *metricsWatcher) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	var p expfmt.TextParser
	mfs, err := p.TextToMetricFamilies(strings.NewReader(w.raw(t)))
	if err != nil {
		t.Fatalf("the watcher's /metrics does not parse: %v", err)
	}
	return mfs
}

// metricValue is the first sample of name whose labels include want.
func metricValue(mfs map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
next:
	for _, m := range mfs[name].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		if m.Counter != nil {
			return m.GetCounter().GetValue(), true
		}
		return m.GetGauge().GetValue(), true
	}
	return 0, false
}

func buildVersion(mfs map[string]*dto.MetricFamily) string {
	for _, m := range mfs["connect_init_build_info"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "version" {
				return l.GetValue()
			}
		}
	}
	return ""
}

// dumpGroupMetadata reads the group's partition of __consumer_offsets as
// the super user, decodes every record of the group (the last must say
// the generation and members the workers joined with), and, with
// CITEST_DUMP_GROUP_METADATA=DIR, writes the last one to DIR.
func dumpGroupMetadata(t *testing.T, group string, gen, members int) {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	client, err := sarama.NewClient(strings.Split(cluster.Bootstrap(), ","), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	parts, err := client.Partitions("__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	p := gate.GroupPartition(group, len(parts))
	var key, value []byte
	var last diag.GroupMetadata
	records := 0
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kafkalog.ReadAll(ctx, client, "__consumer_offsets", p, func(r kafkalog.Record) error {
		if len(r.Key) < 2 || r.Key[1] != 2 {
			return nil
		}
		gm, err := diag.DecodeGroupMetadata(r.Key, r.Value)
		if err != nil {
			return fmt.Errorf("offset %d: %w", r.Offset, err)
		}
		if gm.Group == group {
			key, value, last, records = r.Key, r.Value, gm, records+1
		}
		return nil
	}); err != nil {
		t.Fatalf("read __consumer_offsets/%d: %v", p, err)
	}
	t.Logf("MEASURE %d group metadata records of %s in __consumer_offsets/%d; the last: version %d, generation %d, %d members, protocol %s/%s",
		records, group, p, last.Version, last.Generation, last.Members, last.ProtocolType, last.Protocol)
	if int(last.Generation) != gen || last.Members != members || last.ProtocolType != "connect" {
		t.Errorf("the group's last record decodes to %+v, want generation %d with %d members of protocol type connect", last, gen, members)
	}
	dir := os.Getenv("CITEST_DUMP_GROUP_METADATA")
	if dir == "" {
		return
	}
	want := fmt.Sprintf("%s %d %d %s %s", last.Group, last.Generation, last.Members, last.ProtocolType, last.Protocol)
	out := fmt.Sprintf("# a group metadata record of __consumer_offsets written by Kafka %s for a group of %d real Connect workers (TestDoctorWatchCountsGenerations)\nkey=%s\nvalue=%s\nwant=%s\n",
		cluster.Dist.Version, members, hex.EncodeToString(key), hex.EncodeToString(value), want)
	name := filepath.Join(dir, fmt.Sprintf("groupmeta-kafka-%s-v%d.txt", cluster.Dist.Version, last.Version))
	if err := os.WriteFile(name, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", name)
}

package doctor

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/lock"
	"github.com/connect-init/connect-init/metrics"
)

// look builds a watcher look from a snapshot, as TakeLook does.
func look(s *Snapshot, lk *LockLook, failed string) *Look {
	return &Look{Snapshot: s, Document: NewDocument(s, Diagnose(s), "test", time.Unix(100, 0)), Lock: lk,
		Started: time.Unix(100, 0), Duration: 1500 * time.Millisecond, KafkaRequests: 42, Failed: failed}
}

// An unhealthy cluster's look is served as the metrics the shipped alert
// rules read, lints clean, and a finding that clears goes to 0 rather than
// vanishing.
func TestMetricsOfALook(t *testing.T) {
	reg := metrics.NewRegistry()
	m := NewMetrics(reg, "connect-cluster")
	s := healthy()
	s.Topics.Topics[0].Partitions = 2
	s.Topics.Topics[0].MinISR = 3
	s.Topics.Topics[1].Offline = []int32{4}
	s.Topics.Topics[1].MinISR = 0
	s.Topics.Topics[2].CleanupPolicy = "delete"
	s.Coordinator.ISR = []int32{2}
	s.Group.Window = &gate.GroupWindow{Samples: 20, Span: 5 * time.Second, Rebalances: 5}
	s.Group.Foreign = []gate.ForeignMember{{MemberID: "b1"}}
	m.Observe(look(s, &LockLook{Topic: "_connect-init-lock", Exists: true, Writable: true, Holders: 1, Waiters: 2, HolderAge: 4 * time.Minute, HoldLease: 3 * time.Minute}, ""))

	problems, err := testutil.GatherAndLint(reg)
	if err != nil || len(problems) > 0 {
		t.Fatalf("promlint: %v %+v", err, problems)
	}
	want := `
# HELP connect_init_coordinator_partition_in_sync_replicas In-sync replicas of the group's __consumer_offsets partition.
# TYPE connect_init_coordinator_partition_in_sync_replicas gauge
connect_init_coordinator_partition_in_sync_replicas{group_id="connect-cluster",partition="13"} 1
# HELP connect_init_group_rebalances_total Rebalances of the worker group: the generation's increments when the watcher may read the group's __consumer_offsets partition (exact), else what the looks' windows counted (a lower bound); connect_init_group_rebalances_source says which. Rules read increase() of it.
# TYPE connect_init_group_rebalances_total counter
connect_init_group_rebalances_total{group_id="connect-cluster"} 5
# HELP connect_init_coordinator_partition_leader_info The broker leading the group's __consumer_offsets partition, as the label broker_id (absent: none).
# TYPE connect_init_coordinator_partition_leader_info gauge
connect_init_coordinator_partition_leader_info{broker_id="2",group_id="connect-cluster",partition="13"} 1
# HELP connect_init_group_foreign_members Members a group-identity rule proved foreign (another Connect cluster or a stale worker).
# TYPE connect_init_group_foreign_members gauge
connect_init_group_foreign_members{group_id="connect-cluster"} 1
# HELP connect_init_internal_topic_leaderless_partitions Partitions of the internal topic without a leader.
# TYPE connect_init_internal_topic_leaderless_partitions gauge
connect_init_internal_topic_leaderless_partitions{group_id="connect-cluster",role="config",topic="c"} 0
connect_init_internal_topic_leaderless_partitions{group_id="connect-cluster",role="offset",topic="o"} 1
connect_init_internal_topic_leaderless_partitions{group_id="connect-cluster",role="status",topic="s"} 0
# HELP connect_init_internal_topic_compacted Whether the internal topic's cleanup.policy is exactly compact (absent when unreadable).
# TYPE connect_init_internal_topic_compacted gauge
connect_init_internal_topic_compacted{group_id="connect-cluster",role="config",topic="c"} 1
connect_init_internal_topic_compacted{group_id="connect-cluster",role="offset",topic="o"} 1
connect_init_internal_topic_compacted{group_id="connect-cluster",role="status",topic="s"} 0
# HELP connect_init_lock_holder_age_seconds How long the oldest holder of the startup lock has held it (0: none).
# TYPE connect_init_lock_holder_age_seconds gauge
connect_init_lock_holder_age_seconds{group_id="connect-cluster",topic="_connect-init-lock"} 240
# HELP connect_init_lock_queue_length Live holders and waiters in the worker group's startup lock queue.
# TYPE connect_init_lock_queue_length gauge
connect_init_lock_queue_length{group_id="connect-cluster",topic="_connect-init-lock"} 3
# HELP connect_init_doctor_look_kafka_requests Kafka requests the last look sent, over every connection.
# TYPE connect_init_doctor_look_kafka_requests gauge
connect_init_doctor_look_kafka_requests{group_id="connect-cluster"} 42
`
	names := []string{"connect_init_coordinator_partition_in_sync_replicas", "connect_init_group_rebalances_total", "connect_init_coordinator_partition_leader_info", "connect_init_group_foreign_members",
		"connect_init_internal_topic_leaderless_partitions", "connect_init_internal_topic_compacted", "connect_init_lock_holder_age_seconds",
		"connect_init_lock_queue_length", "connect_init_doctor_look_kafka_requests"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	finding := func(id, sev string) float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "connect_init_doctor_findings" {
				continue
			}
			for _, mm := range mf.GetMetric() {
				l := map[string]string{}
				for _, lp := range mm.GetLabel() {
					l[lp.GetName()] = lp.GetValue()
				}
				if l["check"] == id && l["finding_severity"] == sev {
					return mm.GetGauge().GetValue()
				}
			}
		}
		t.Fatalf("no findings series for %s/%s", id, sev)
		return 0
	}
	for _, c := range []struct {
		id, sev string
		want    float64
	}{{checks.IDConfigTopicPartitions, "error", 1}, {checks.IDTopicNotCompacted, "error", 1}, {checks.IDTopicUnderReplicated, "error", 1},
		{checks.IDConsumerOffsetsSingle, "warning", 1}, {checks.IDGroupRebalanceStorm, "error", 1}, {checks.IDCoordinatorNotAvailable, "error", 0}} {
		if got := finding(c.id, c.sev); got != c.want {
			t.Errorf("findings{check=%q,finding_severity=%q} = %v, want %v", c.id, c.sev, got, c.want)
		}
	}

	// The cluster healed; then a look that fails is counted and said.
	m.Observe(look(healthy(), nil, ""))
	if got := finding(checks.IDTopicNotCompacted, "error"); got != 0 {
		t.Errorf("a cleared finding reads %v, want 0", got)
	}
	// The coordinator is lost and a foreign member joined; then every
	// broker stops: the failed look keeps what it could not see, so the
	// alerts on them stay firing, and says since when.
	lost := healthy()
	lost.Coordinator = &gate.CoordinatorReport{GroupID: "connect-cluster", CoordinatorID: -1, Partition: -1, FindError: "coordinator not available"}
	lost.Group.Foreign = []gate.ForeignMember{{MemberID: "b1"}}
	bad := look(lost, nil, "")
	bad.Started = time.Unix(200, 0)
	m.Observe(bad)
	down := look(&Snapshot{GroupID: "connect-cluster", Brokers: &gate.BrokerReport{BootstrapErrs: map[string]string{"k1:9092": "refused"}}}, nil, "no bootstrap server answered")
	down.Started = time.Unix(300, 0)
	m.Observe(down)
	want = `
# HELP connect_init_doctor_look_success Whether the last look saw the whole cluster (1) or failed (0): no broker answered, a describe failed, or it ran out of time.
# TYPE connect_init_doctor_look_success gauge
connect_init_doctor_look_success{group_id="connect-cluster"} 0
# HELP connect_init_doctor_looks_total Looks the watcher took, failed ones included.
# TYPE connect_init_doctor_looks_total counter
connect_init_doctor_looks_total{group_id="connect-cluster"} 4
# HELP connect_init_doctor_look_failures_total Looks that did not see the whole cluster: no broker answered, a describe failed, or the look ran out of time.
# TYPE connect_init_doctor_look_failures_total counter
connect_init_doctor_look_failures_total{group_id="connect-cluster"} 1
# HELP connect_init_doctor_last_successful_look_timestamp_seconds When the last look that saw the whole cluster began (Unix time; 0: none yet): how old the values a failed look kept are.
# TYPE connect_init_doctor_last_successful_look_timestamp_seconds gauge
connect_init_doctor_last_successful_look_timestamp_seconds{group_id="connect-cluster"} 200
# HELP connect_init_doctor_last_look_timestamp_seconds When the last look began (Unix time).
# TYPE connect_init_doctor_last_look_timestamp_seconds gauge
connect_init_doctor_last_look_timestamp_seconds{group_id="connect-cluster"} 300
# HELP connect_init_coordinator_available Whether FindCoordinator found the worker group's coordinator.
# TYPE connect_init_coordinator_available gauge
connect_init_coordinator_available{group_id="connect-cluster"} 0
# HELP connect_init_group_foreign_members Members a group-identity rule proved foreign (another Connect cluster or a stale worker).
# TYPE connect_init_group_foreign_members gauge
connect_init_group_foreign_members{group_id="connect-cluster"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "connect_init_doctor_look_success", "connect_init_doctor_looks_total",
		"connect_init_doctor_look_failures_total", "connect_init_doctor_last_successful_look_timestamp_seconds", "connect_init_doctor_last_look_timestamp_seconds",
		"connect_init_coordinator_available", "connect_init_group_foreign_members"); err != nil {
		t.Error(err)
	}
	if got := finding(IDBrokerUnreachable, "error"); got != 1 {
		t.Errorf("broker-unreachable after a failed look = %v, want 1", got)
	}
	for _, id := range []string{checks.IDForeignGroupMember, checks.IDCoordinatorNotAvailable} {
		if got := finding(id, "error"); got != 1 {
			t.Errorf("%s after a failed look = %v, want the last successful look's 1", id, got)
		}
	}
	// A look that sees the cluster again replaces every kept value.
	m.Observe(look(healthy(), nil, ""))
	if got := finding(checks.IDForeignGroupMember, "error"); got != 0 {
		t.Errorf("foreign-group-member after the cluster healed = %v, want 0", got)
	}
}

// The metrics' catalog of finding ids and severities is doc.go's table, so
// that every finding doctor documents has its series from the first look.
func TestFindingCatalog(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^//\t([a-z][a-z0-9-]+(?: / [a-z0-9-]+)?)\s+((?:error|warning|info)(?:\|(?:error|warning|info))*)\s`)
	documented := map[string][]checks.Severity{}
	for _, m := range row.FindAllStringSubmatch(string(src), -1) {
		for _, sev := range strings.Split(m[2], "|") {
			documented[m[1]] = append(documented[m[1]], checks.Severity(sev))
		}
	}
	if len(documented) < 20 {
		t.Fatalf("read only %d rows of doc.go's table", len(documented))
	}
	cat := findingSeverities()
	for id, sevs := range documented {
		got := cat[id]
		for _, s := range sevs {
			if !slices.Contains(got, s) {
				t.Errorf("doc.go documents %s at %s; the metrics' catalog has %v", id, s, got)
			}
		}
	}
	for id := range cat {
		if _, ok := documented[id]; !ok {
			t.Errorf("the metrics' catalog has %s, which doc.go's table does not document", id)
		}
	}
}

// The lock's figures: live holders and waiters are counted; the holder's
// age is the oldest unreleased hold by the watcher's clock (the queue's own
// time is its newest record), an expired hold included: that is the stuck
// one; released and dead members count for nothing.
func TestLockLookFromQueue(t *testing.T) {
	now := time.Unix(1000, 0)
	ll := &LockLook{}
	ll.fromQueue(lock.Snapshot{Now: now.Add(-time.Minute), Entries: []lock.Entry{
		{State: lock.StateHolding, LastSeen: now.Add(-90 * time.Second)},
		{State: lock.StateWaiting, LastSeen: now},
		{State: lock.StateWaiting, LastSeen: now},
		{State: lock.StateExpired, LastSeen: now.Add(-5 * time.Minute)},
		{State: lock.StateReleased, LastSeen: now.Add(-time.Hour)},
		{State: lock.StateDead, LastSeen: now.Add(-time.Hour)},
	}}, now)
	if ll.Holders != 1 || ll.Waiters != 2 || ll.HolderAge != 5*time.Minute {
		t.Errorf("holders %d, waiters %d, age %s; want 1, 2, 5m0s", ll.Holders, ll.Waiters, ll.HolderAge)
	}
}

package checks

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func goodTopic() Topic {
	return Topic{Role: "config", Name: "c", TopicEnv: "CONNECT_CONFIG_STORAGE_TOPIC", ReplicationEnv: "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR",
		Exists: true, Partitions: 1, ReplicationFactor: 3, ConfiguredReplicationFactor: 3, CleanupPolicy: "compact", MinInsyncReplicas: "2"}
}

func ids(rs []Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID+"/"+string(r.Severity))
	}
	return out
}

func TestTopicChecks(t *testing.T) {
	cases := []struct {
		name     string
		mutate   func(*Topic)
		want     []string
		evidence string
	}{
		{"healthy", func(*Topic) {}, nil, ""},
		{"missing, fresh cluster", func(t *Topic) { *t = Topic{Role: "status", Name: "s", TopicEnv: "CONNECT_STATUS_STORAGE_TOPIC"} },
			[]string{"internal-topic-missing/warning"}, "CONNECT_STATUS_STORAGE_TOPIC=s"},
		{"missing under running workers", func(t *Topic) { *t = Topic{Name: "s", WorkersRunning: true} },
			[]string{"internal-topic-missing/error"}, "yet the worker group has members"},
		{"configs unreadable: only that, no policy verdict", func(t *Topic) { t.ConfigError, t.CleanupPolicy = "TOPIC_AUTHORIZATION_FAILED", "" },
			[]string{"topic-configs-unreadable/error"}, "TOPIC_AUTHORIZATION_FAILED"},
		{"config topic partitions", func(t *Topic) { t.Partitions = 3 }, []string{"config-topic-partitions/error"}, "c has 3 partitions"},
		{"offset topic may have many partitions", func(t *Topic) { t.Role, t.Partitions = "offset", 25 }, nil, ""},
		{"delete policy", func(t *Topic) { t.CleanupPolicy = "delete" }, []string{"topic-not-compacted/error"}, "cleanup.policy=delete"},
		{"compact,delete policy", func(t *Topic) { t.CleanupPolicy = "compact,delete" }, []string{"topic-not-compacted/error"}, "cleanup.policy=compact,delete"},
		{"empty policy", func(t *Topic) { t.CleanupPolicy = "" }, []string{"topic-not-compacted/error"}, "cleanup.policy is empty"},
		{"offline", func(t *Topic) { t.Offline = []int32{0} }, []string{"topic-under-replicated/error"}, "offline partitions [0]"},
		{"under-replicated", func(t *Topic) { t.UnderReplicated = []int32{4} }, []string{"topic-under-replicated/warning"}, "under-replicated partitions [4]"},
		{"replication below configured", func(t *Topic) { t.ReplicationFactor, t.MinInsyncReplicas = 1, "1" },
			[]string{"topic-replication-below-configured/warning"}, "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR=3"},
		{"broker default replication is not compared", func(t *Topic) { t.ConfiguredReplicationFactor, t.ReplicationFactor, t.MinInsyncReplicas = -1, 1, "1" }, nil, ""},
		{"min ISR = RF", func(t *Topic) { t.MinInsyncReplicas = "3" }, []string{"topic-min-insync-too-high/warning"}, "single broker down"},
		{"min ISR on RF 1 is fine", func(t *Topic) { t.ReplicationFactor, t.ConfiguredReplicationFactor, t.MinInsyncReplicas = 1, 1, "1" }, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp := goodTopic()
			c.mutate(&tp)
			rs := Run(TopicChecks(), tp)
			if got := ids(rs); !slices.Equal(got, c.want) {
				t.Fatalf("results %v, want %v", got, c.want)
			}
			if c.evidence != "" && !strings.Contains(rs[0].Evidence, c.evidence) {
				t.Errorf("evidence %q lacks %q", rs[0].Evidence, c.evidence)
			}
			for _, r := range rs {
				if r.Subject == "" || r.Summary == "" || r.Fix == "" {
					t.Errorf("incomplete result %+v", r)
				}
			}
		})
	}
}

func TestOfflineIsTransient(t *testing.T) {
	tp := goodTopic()
	tp.Offline = []int32{0}
	rs := Run(TopicChecks(), tp)
	if !OnlyTransient(rs) {
		t.Fatalf("offline alone should be transient: %+v", rs)
	}
	tp.Partitions = 2
	if OnlyTransient(Run(TopicChecks(), tp)) {
		t.Fatal("a wrong partition count is not transient")
	}
	if OnlyTransient(nil) {
		t.Fatal("no errors is not 'only transient errors'")
	}
}

func TestCoordinatorChecks(t *testing.T) {
	good := Coordinator{GroupID: "g", Found: true, Partition: 13, Partitions: 50, Leader: 2, Replicas: []int32{2, 3, 1}, ISR: []int32{2, 3, 1}, Brokers: 3, OffsetsTopicReplicationFactor: "3"}
	cases := []struct {
		name   string
		mutate func(*Coordinator)
		want   []string
		text   string
	}{
		{"healthy", func(*Coordinator) {}, nil, ""},
		{"single replica", func(c *Coordinator) { c.Replicas, c.ISR, c.OffsetsTopicReplicationFactor = []int32{1}, []int32{1}, "1" },
			[]string{"consumer-offsets-single-replica/warning"}, "lives in __consumer_offsets partition 13, which has replicas [1] and in-sync replicas [1]"},
		{"single replica, strict", func(c *Coordinator) { c.ISR, c.Strict = []int32{1}, true }, []string{"consumer-offsets-single-replica/error"}, ""},
		{"shrunk ISR counts, not replicas", func(c *Coordinator) { c.ISR = []int32{2} }, []string{"consumer-offsets-single-replica/warning"}, "broker 2 stops"},
		{"one-broker cluster is not warned", func(c *Coordinator) { c.Brokers, c.Replicas, c.ISR = 1, []int32{1}, []int32{1} }, nil, ""},
		{"not found", func(c *Coordinator) {
			*c = Coordinator{GroupID: "g", Partition: 13, FindError: "coordinator not available"}
		},
			[]string{"coordinator-not-available/error"}, "partition 13 (with the default 50"},
		{"offsets topic missing", func(c *Coordinator) { *c = Coordinator{GroupID: "g", ConsumerOffsetsMissing: true} },
			[]string{"consumer-offsets-missing/info"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			co := good
			c.mutate(&co)
			rs := Run(CoordinatorChecks(), co)
			if got := ids(rs); !slices.Equal(got, c.want) {
				t.Fatalf("results %v, want %v", got, c.want)
			}
			if c.text != "" && !strings.Contains(rs[0].String(), c.text) {
				t.Errorf("%q lacks %q", rs[0].String(), c.text)
			}
		})
	}
}

func TestResultString(t *testing.T) {
	r := Result{Summary: "s", Evidence: "e", Fix: "f"}
	if got := r.String(); got != "s (e); fix: f" {
		t.Fatalf("String = %q", got)
	}
	if got := Join([]Result{r, {Summary: "t"}}); got != "s (e); fix: f; t" {
		t.Fatalf("Join = %q", got)
	}
	if Error.Rank() >= Warning.Rank() || Warning.Rank() >= Info.Rank() {
		t.Fatal("ranks out of order")
	}
}

// The single-replica and below-configured findings point at repair with the
// exact command.
func TestFixesPointAtRepair(t *testing.T) {
	single := Run(CoordinatorChecks(), Coordinator{GroupID: "g", Found: true, Partitions: 50, Partition: 3, Brokers: 3, Replicas: []int32{1}, ISR: []int32{1}})
	lost := Run(CoordinatorChecks(), Coordinator{GroupID: "g", FindError: "COORDINATOR_NOT_AVAILABLE", Partition: 3})
	below := Run(TopicChecks(), Topic{Role: "offset", Name: "o", Exists: true, Partitions: 5, ReplicationFactor: 1, ConfiguredReplicationFactor: 3, CleanupPolicy: "compact"})
	for _, c := range []struct {
		rs   []Result
		id   string
		want string
	}{
		{single, IDConsumerOffsetsSingle, "connect-init repair --topics=offsets --execute"},
		{lost, IDCoordinatorNotAvailable, "connect-init repair --topics=offsets --execute"},
		{below, IDTopicReplicationBelowConf, "connect-init repair --topics=internal --execute"},
	} {
		found := false
		for _, r := range c.rs {
			if r.ID == c.id {
				found = true
				if !strings.Contains(r.Fix, c.want) {
					t.Errorf("%s: fix %q does not name %q", c.id, r.Fix, c.want)
				}
			}
		}
		if !found {
			t.Errorf("no %s result in %+v", c.id, c.rs)
		}
	}
}

// A handover naming the claiming cluster takes the group over only once no
// foreign member is left: until then the claim is an error whose fix says
// so; afterwards it is context.
func TestGroupClaimAndHandover(t *testing.T) {
	claim := &GroupClaim{ConfigTopic: "f-configs"}
	cases := []struct {
		name     string
		g        Group
		want     []string
		fixNames string
	}{
		{"claimed", Group{GroupID: "g", State: "Empty", StableSeen: true, Claim: claim},
			[]string{"group-registered-to-another-cluster/error", "group-empty/info"}, "CONNECT_INIT_GROUP_HANDOVER=f-configs on this cluster's workers"},
		{"claimed, another handover", Group{GroupID: "g", State: "Empty", StableSeen: true, Claim: claim, Handover: "x-configs"},
			[]string{"group-registered-to-another-cluster/error", "group-empty/info"}, "CONNECT_INIT_GROUP_HANDOVER=f-configs on this cluster's workers"},
		{"handed over", Group{GroupID: "g", State: "Empty", StableSeen: true, Claim: claim, Handover: "f-configs"},
			[]string{"group-registered-to-another-cluster/info", "group-empty/info"}, "unset CONNECT_INIT_GROUP_HANDOVER"},
		{"handover with a foreign member left", Group{GroupID: "g", State: "Stable", StableSeen: true, Claim: claim, Handover: "f-configs", ForeignMembers: 1},
			[]string{"group-registered-to-another-cluster/error"}, "hands the group over only once no worker of that cluster is in the group"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := Run(GroupChecks(), c.g)
			if got := ids(rs); !slices.Equal(got, c.want) {
				t.Fatalf("results %v, want %v", got, c.want)
			}
			if !strings.Contains(rs[0].Fix, c.fixNames) {
				t.Errorf("fix %q lacks %q", rs[0].Fix, c.fixNames)
			}
		})
	}
}

// Under CONNECT_INIT_STRICT what is only unproven is refused, and its fix
// says how to start anyway instead of offering the setting already on.
func TestUnprovenFixesFollowStrict(t *testing.T) {
	for _, strict := range []bool{false, true} {
		reg := Run(GroupChecks(), Group{GroupID: "g", State: "Empty", StableSeen: true, RegistryError: "TOPIC_AUTHORIZATION_FAILED", Strict: strict})
		mem := Run(MemberChecks(), GroupMember{MemberID: "m", Unverified: true, Strict: strict})
		for _, r := range []Result{reg[0], mem[0]} {
			wantSev, want, not := Warning, "CONNECT_INIT_STRICT=true", "unset CONNECT_INIT_STRICT"
			if strict {
				wantSev, want, not = Error, "unset CONNECT_INIT_STRICT to start with a warning", "CONNECT_INIT_STRICT=true"
			}
			if r.Severity != wantSev || !strings.Contains(r.Fix, want) || strings.Contains(r.Fix, not) {
				t.Errorf("strict %v: %s %s, fix %q", strict, r.ID, r.Severity, r.Fix)
			}
		}
	}
}

func TestRebalanceChecks(t *testing.T) {
	for _, c := range []struct {
		name string
		r    Rebalance
		want []string
		evid string
	}{
		{"unset: Connect's default", Rebalance{GroupID: "g"}, []string{"rebalance-delay-default/warning"}, "not set: Connect's default, 300000 ms (5m0s)"},
		{"set to the default", Rebalance{GroupID: "g", Delay: "300000"}, []string{"rebalance-delay-default/warning"}, "scheduled.rebalance.max.delay.ms=300000 (5m0s)"},
		{"tuned", Rebalance{GroupID: "g", Delay: "90000"}, nil, ""},
		{"eager: no delay", Rebalance{GroupID: "g", Protocol: "eager"}, nil, ""},
		{"unreadable value", Rebalance{GroupID: "g", Delay: "soon"}, nil, ""},
		{"below the measured rejoin", Rebalance{GroupID: "g", Delay: "30000", Rejoin: 45 * time.Second, RejoinAtMost: 72 * time.Second, RejoinWorker: "http://10.0.1.7:8083"},
			[]string{"rebalance-delay-below-rejoin/warning"}, "30000 (30s), below the longest recent rejoin measured by doctor --watch (http://10.0.1.7:8083): away at least 45s, at most 1m12s"},
		{"above the measured rejoin", Rebalance{GroupID: "g", Delay: "90000", Rejoin: 45 * time.Second, RejoinAtMost: 72 * time.Second}, nil, ""},
		// Only the lower bound counts: the watcher's interval blurs the upper.
		{"between the bounds", Rebalance{GroupID: "g", Delay: "60000", Rejoin: 45 * time.Second, RejoinAtMost: 72 * time.Second}, nil, ""},
		{"default, and the group does roll", Rebalance{GroupID: "g", Rejoin: 20 * time.Second, RejoinAtMost: 50 * time.Second},
			[]string{"rebalance-delay-default/warning"}, "this group's workers do restart: the longest recent rejoin measured by doctor --watch: away at least 20s, at most 50s"},
	} {
		rs := Run(RebalanceChecks(), c.r)
		var got []string
		for _, r := range rs {
			got = append(got, r.ID+"/"+string(r.Severity))
			if r.Fix == "" || r.Subject != "group g" {
				t.Errorf("%s: %+v lacks a fix or its subject", c.name, r)
			}
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if c.evid != "" && (len(rs) == 0 || !strings.Contains(rs[0].Evidence, c.evid)) {
			t.Errorf("%s: evidence %+v lacks %q", c.name, rs, c.evid)
		}
		// A measured rejoin names the value: its upper bound plus 30 s,
		// rounded up to 10 s (72 s: 110000; 50 s: 80000).
		if len(rs) > 0 && c.r.RejoinAtMost > 0 {
			want := map[time.Duration]string{72 * time.Second: "to at least 110000 (1m50s", 50 * time.Second: "to at least 80000 (1m20s"}[c.r.RejoinAtMost]
			if !strings.Contains(rs[0].Fix, want) {
				t.Errorf("%s: fix %q lacks %q", c.name, rs[0].Fix, want)
			}
		}
	}
}

package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/connect/registry"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/settings"
)

func i64(v int64) *int64 { return &v }

// healthy returns the snapshot of a fine 3-broker cluster with one worker.
func healthy() *Snapshot {
	return &Snapshot{
		GroupID: "connect-cluster", BootstrapServers: []string{"k1:9092"}, ExpectedBrokers: 3,
		Specs: []settings.TopicSpec{
			{Role: "config", Name: "c", Partitions: 1, ReplicationFactor: 3},
			{Role: "offset", Name: "o", Partitions: 25, ReplicationFactor: 3},
			{Role: "status", Name: "s", Partitions: 5, ReplicationFactor: 3},
		},
		Brokers: &gate.BrokerReport{Expected: 3, ControllerID: 1, Ready: true, Brokers: []gate.BrokerStatus{
			{ID: 1, Addr: "k1:9092", Up: true}, {ID: 2, Addr: "k2:9092", Up: true}, {ID: 3, Addr: "k3:9092", Up: true}}},
		Topics: &gate.TopicReport{Topics: []gate.TopicResult{
			{Role: "config", Name: "c", Outcome: gate.TopicExistedOK, Partitions: 1, ReplicationFactor: 3, CleanupPolicy: "compact", MinInsyncReplicas: "2"},
			{Role: "offset", Name: "o", Outcome: gate.TopicExistedOK, Partitions: 25, ReplicationFactor: 3, CleanupPolicy: "compact", MinInsyncReplicas: "1"},
			{Role: "status", Name: "s", Outcome: gate.TopicExistedOK, Partitions: 5, ReplicationFactor: 3, CleanupPolicy: "compact", MinInsyncReplicas: "1"},
		}},
		Coordinator: &gate.CoordinatorReport{GroupID: "connect-cluster", CoordinatorID: 2, CoordinatorAddr: "k2:9092", Partition: 13, Partitions: 50,
			Leader: 2, Replicas: []int32{2, 3, 1}, ISR: []int32{2, 3, 1}, Brokers: 3},
		Group: &gate.GroupReport{GroupID: "connect-cluster", State: "Stable", ProtocolType: "connect", Protocol: "sessioned", StableSeen: true,
			LeaderID: "w1", LeaderURL: "http://w1:8083/", AssignmentOffset: i64(7), ConfigTopic: "c", ConfigEndOffset: 7, ConfigStableOffset: 7,
			Members: []gate.GroupMember{{MemberID: "w1", URL: "http://w1:8083/", ClientHost: "/10.0.0.1", ConfigOffset: i64(7), Leader: true,
				Assignment: &gate.MemberAssignment{LeaderID: "w1", LeaderURL: "http://w1:8083/", ConfigOffset: 7}}},
			Foreign: []gate.ForeignMember{}},
		Peers: []PeerCheck{{URL: "http://w1:8083/", Leader: true, Members: []string{"w1"}, Resolved: true, Reachable: true}},
	}
}

func ids(fs []checks.Result) map[string]checks.Severity {
	m := map[string]checks.Severity{}
	for _, f := range fs {
		if prev, ok := m[f.ID]; !ok || f.Severity.Rank() < prev.Rank() {
			m[f.ID] = f.Severity
		}
	}
	return m
}

func TestHealthyHasNoFindings(t *testing.T) {
	fs := Diagnose(healthy())
	if len(fs) != 0 {
		t.Fatalf("findings on a healthy cluster: %+v", fs)
	}
	doc := NewDocument(healthy(), fs, "v1", time.Unix(0, 0))
	if doc.ExitCode != 0 || doc.Counts != (Counts{}) {
		t.Fatalf("doc: %+v", doc)
	}
}

func TestFindingDerivation(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(s *Snapshot)
		want   map[string]checks.Severity
		text   []string // must appear in some finding's evidence
	}{
		{"no bootstrap server", func(s *Snapshot) {
			s.Brokers = &gate.BrokerReport{Expected: 3, ControllerID: -1, BootstrapErrs: map[string]string{"k1:9092": "connection refused"}}
			s.Topics, s.Coordinator, s.Group, s.Peers = nil, nil, nil, nil
		}, map[string]checks.Severity{IDBrokerUnreachable: checks.Error}, []string{"k1:9092: connection refused"}},
		{"quorum lost", func(s *Snapshot) {
			s.Brokers.Quorum = &gate.QuorumReport{Lost: true, LeaderID: -1, Error: "the broker at k2:9092 forwarded DescribeQuorum to the active controller and got no answer within 3s"}
		}, map[string]checks.Severity{IDControllerQuorumLost: checks.Error}, []string{"no answer within 3s"}},
		{"broker down and missing", func(s *Snapshot) {
			s.Brokers.Brokers = s.Brokers.Brokers[:2]
			s.Brokers.Brokers[1].Up, s.Brokers.Brokers[1].Err = false, "host name k2 does not resolve from here"
			s.Brokers.ControllerID = -1
		}, map[string]checks.Severity{IDBrokerUnreachable: checks.Error, IDBrokerCountBelowExpected: checks.Error, IDControllerUnknown: checks.Error},
			[]string{"k2 does not resolve"}},
		{"broker fenced, fewer live than expected", func(s *Snapshot) {
			s.Brokers.Brokers = s.Brokers.Brokers[:2]
			s.Brokers.Absent = []gate.AbsentBroker{{ID: 3, Addr: "k3:9092", State: gate.StateFenced}}
		}, map[string]checks.Severity{IDBrokerNotLive: checks.Warning, IDBrokerCountBelowExpected: checks.Error},
			[]string{"last known address k3:9092", "missing: broker 3 (registered but fenced, last at k3:9092)"}},
		{"fresh cluster", func(s *Snapshot) {
			for i := range s.Topics.Topics {
				s.Topics.Topics[i] = gate.TopicResult{Role: s.Topics.Topics[i].Role, Name: s.Topics.Topics[i].Name, Outcome: gate.TopicMissing}
			}
			s.Coordinator, s.Group, s.Peers, s.ConsumerOffsetsMissing = nil, nil, nil, true
		}, map[string]checks.Severity{checks.IDInternalTopicMissing: checks.Warning, checks.IDConsumerOffsetsMissing: checks.Info}, nil},
		{"topic missing under running workers", func(s *Snapshot) {
			s.Topics.Topics[2] = gate.TopicResult{Role: "status", Name: "s", Outcome: gate.TopicMissing}
		}, map[string]checks.Severity{checks.IDInternalTopicMissing: checks.Error}, []string{"CONNECT_STATUS_STORAGE_TOPIC=s"}},
		{"wrong layout", func(s *Snapshot) {
			s.Topics.Topics[0].Partitions = 3
			s.Topics.Topics[2].CleanupPolicy = "delete"
			s.Topics.Topics[1].ReplicationFactor = 1
			s.Topics.Topics[1].MinInsyncReplicas = "1"
		}, map[string]checks.Severity{checks.IDConfigTopicPartitions: checks.Error, checks.IDTopicNotCompacted: checks.Error, checks.IDTopicReplicationBelowConf: checks.Warning},
			[]string{"c has 3 partitions", "s cleanup.policy=delete"}},
		{"replicas", func(s *Snapshot) {
			s.Topics.Topics[1].UnderReplicated = []int32{4}
			s.Topics.Topics[2].Offline = []int32{0}
			s.Topics.Topics[0].MinInsyncReplicas = "3"
		}, map[string]checks.Severity{checks.IDTopicUnderReplicated: checks.Error, checks.IDTopicMinISRTooHigh: checks.Warning}, []string{"offline partitions [0]", "under-replicated partitions [4]"}},
		{"single replica coordinator partition", func(s *Snapshot) {
			s.Coordinator.Replicas, s.Coordinator.ISR = []int32{1}, []int32{1}
		}, map[string]checks.Severity{checks.IDConsumerOffsetsSingle: checks.Warning}, []string{"partition 13", "replicas [1]"}},
		{"single replica strict", func(s *Snapshot) {
			s.Coordinator.ISR, s.Strict = []int32{2}, true
		}, map[string]checks.Severity{checks.IDConsumerOffsetsSingle: checks.Error}, nil},
		{"coordinator not available", func(s *Snapshot) {
			s.Coordinator = &gate.CoordinatorReport{GroupID: "connect-cluster", CoordinatorID: -1, Partition: -1,
				FindError: `find coordinator of group "connect-cluster": kafka server: coordinator not available`}
			s.CoordinatorErr = "coordinator gate: find coordinator: kafka server: coordinator not available"
			s.Group, s.Peers = nil, nil
		}, map[string]checks.Severity{checks.IDCoordinatorNotAvailable: checks.Error}, []string{"coordinator not available", "partition 13 (with the default 50"}},
		{"incident 1 seen from the short topic", func(s *Snapshot) {
			g := s.Group
			g.ConfigEndOffset, g.ConfigStableOffset = 0, 0
			g.Members[0].ConfigOffset = i64(819)
			g.AssignmentOffset = i64(819)
			g.Foreign = []gate.ForeignMember{{MemberID: "w1", URL: "http://w1:8083/", ClientHost: "/10.0.0.1", ConfigOffset: i64(819), OurEndOffset: 0,
				Reasons: []string{"config-offset-ahead"}, Message: `group member "w1" (... reported config offset 819 vs our config topic's end offset 0) reports ...`}}
		}, map[string]checks.Severity{checks.IDForeignGroupMember: checks.Error}, []string{"reported config offset 819 vs our config topic's end offset 0", "config-offset-ahead"}},
		{"incident 1 seen from the long topic", func(s *Snapshot) {
			g := s.Group
			g.Members = append(g.Members, gate.GroupMember{MemberID: "a1", URL: "http://a1:8083/", ClientHost: "/10.0.0.2", ConfigOffset: i64(-1),
				Assignment: &gate.MemberAssignment{LeaderID: "w1", ConfigOffset: 7}})
		}, map[string]checks.Severity{IDMemberConfigOffsetBehind: checks.Warning}, []string{"Current config state offset -1 does not match group assignment 7"}},
		{"config mismatch", func(s *Snapshot) {
			s.Group.Members[0].Assignment.Error = proto.AssignmentConfigMismatch
		}, map[string]checks.Severity{IDAssignmentConfigMismatch: checks.Error}, nil},
		{"duplicate URL", func(s *Snapshot) {
			s.Group.Members = append(s.Group.Members, gate.GroupMember{MemberID: "w2", URL: "http://w1:8083/", ClientHost: "/10.0.0.3", ConfigOffset: i64(7)})
		}, map[string]checks.Severity{IDDuplicateAdvertisedURL: checks.Error}, []string{`"w2" (client host /10.0.0.3)`}},
		{"peers", func(s *Snapshot) {
			s.Peers = []PeerCheck{
				{URL: "http://w1:8083/", Leader: true, Members: []string{"w1"}, Error: "resolve w1: host name w1 does not resolve from here"},
				{URL: "http://w2:8083/", Members: []string{"w2"}, Resolved: true, Addresses: []string{"10.0.0.3"}, Error: "connect to w2:8083: connection refused"},
			}
		}, map[string]checks.Severity{IDAdvertisedURLUnresolvable: checks.Warning, IDAdvertisedURLUnreachable: checks.Warning}, []string{"the group leader", "connection refused"}},
		{"open transaction, hanging", func(s *Snapshot) {
			s.Group.ConfigEndOffset, s.Group.ConfigStableOffset = 9, 7
			s.Recheck = &OffsetsRecheck{After: 5 * time.Second, EndOffset: 9, StableOffset: 7}
		}, map[string]checks.Severity{IDConfigTopicOpenTxn: checks.Error}, []string{"end offset 9 (read_uncommitted) but last stable offset 7", "5s later"}},
		{"open transaction, finished", func(s *Snapshot) {
			s.Group.ConfigEndOffset, s.Group.ConfigStableOffset = 9, 7
			s.Recheck = &OffsetsRecheck{After: 5 * time.Second, EndOffset: 10, StableOffset: 10}
		}, map[string]checks.Severity{}, nil},
		{"open transaction, not rechecked", func(s *Snapshot) {
			s.Group.ConfigEndOffset, s.Group.ConfigStableOffset = 9, 7
		}, map[string]checks.Severity{IDConfigTopicOpenTxn: checks.Warning}, nil},
		{"group rebalancing, empty", func(s *Snapshot) {
			s.Group = &gate.GroupReport{GroupID: "connect-cluster", State: "Empty", StableSeen: true, ConfigEndOffset: 7, ConfigStableOffset: 7}
			s.Peers = nil
		}, map[string]checks.Severity{checks.IDGroupEmpty: checks.Info}, nil},
		{"group never stable", func(s *Snapshot) {
			s.Group.State, s.Group.StableSeen, s.Group.Note = "PreparingRebalance", false, "no Stable snapshot of the group within 5s"
			s.Group.Members[0].ConfigOffset, s.Group.Members[0].Assignment = nil, nil
		}, map[string]checks.Severity{checks.IDGroupNotStable: checks.Warning}, []string{"no Stable snapshot"}},
		{"describe failures", func(s *Snapshot) {
			s.TopicsErr = "topics gate: describe internal topics: not authorized"
			s.Topics = nil
			s.GroupErr = "group gate: describe worker group: not authorized"
			s.Group, s.Peers = nil, nil
		}, map[string]checks.Severity{IDCheckFailed: checks.Warning}, []string{"not authorized"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := healthy()
			c.mutate(s)
			fs := Diagnose(s)
			got := ids(fs)
			if len(got) != len(c.want) {
				t.Errorf("ids = %v, want %v", got, c.want)
			}
			for id, sev := range c.want {
				if got[id] != sev {
					t.Errorf("%s: severity %q, want %q (all: %v)", id, got[id], sev, got)
				}
			}
			var all strings.Builder
			for i, f := range fs {
				if f.Summary == "" || f.Evidence == "" || f.Fix == "" || f.Subject == "" {
					t.Errorf("finding %s lacks a field: %+v", f.ID, f)
				}
				if i > 0 && fs[i-1].Severity.Rank() > f.Severity.Rank() {
					t.Errorf("findings not sorted by severity: %v before %v", fs[i-1].Severity, f.Severity)
				}
				all.WriteString(f.Evidence + "\n")
			}
			for _, want := range c.text {
				if !strings.Contains(all.String(), want) {
					t.Errorf("no evidence contains %q:\n%s", want, all.String())
				}
			}
			wantExit := 0
			for _, sev := range c.want {
				if sev == checks.Error {
					wantExit = 1
				}
			}
			if doc := NewDocument(s, fs, "v1", time.Now()); doc.ExitCode != wantExit {
				t.Errorf("exit code %d, want %d", doc.ExitCode, wantExit)
			}
		})
	}
}

func TestDocumentRendering(t *testing.T) {
	s := healthy()
	s.Group.Foreign = []gate.ForeignMember{{MemberID: "w1", URL: "http://w1:8083/", Reasons: []string{"config-offset-ahead"}, Message: "m"}}
	s.Topics.Topics[1].UnderReplicated = []int32{3}
	doc := NewDocument(s, Diagnose(s), "v9", time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))

	var js bytes.Buffer
	if err := doc.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := json.Unmarshal(js.Bytes(), &generic); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, js.String())
	}
	for _, key := range []string{"schema_version", "connect_init_version", "generated_at", "group_id", "bootstrap_servers", "cluster", "findings", "counts", "exit_code"} {
		if _, ok := generic[key]; !ok {
			t.Errorf("JSON lacks %q", key)
		}
	}
	cluster := generic["cluster"].(map[string]any)
	for _, key := range []string{"brokers", "topics", "coordinator", "group", "peers", "skipped"} {
		if _, ok := cluster[key]; !ok {
			t.Errorf("JSON cluster lacks %q", key)
		}
	}
	var back Document
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.ExitCode != 1 || back.Counts.Error != 1 || back.Counts.Warning != 1 || back.Findings[0].ID != checks.IDForeignGroupMember ||
		back.Cluster.Group.Members[0].ConfigOffset == nil || *back.Cluster.Group.Members[0].ConfigOffset != 7 {
		t.Errorf("round trip: %+v", back)
	}

	var txt bytes.Buffer
	if err := doc.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	out := txt.String()
	for _, want := range []string{"Brokers      3/3 reachable", "controller 1", "Coordinator  broker 2", "Group        Stable, protocol connect/sessioned",
		"w1 [leader]", "config offset 7", "Findings: 1 error(s), 1 warning(s)", "ERROR\n  [foreign-group-member]", "WARNING\n  [topic-under-replicated]"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "ERROR") > strings.Index(out, "WARNING") {
		t.Errorf("errors must come before warnings:\n%s", out)
	}
}

func TestCheckPeer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ctx := context.Background()
	if pc := CheckPeer(ctx, "http://"+addr+"/", time.Second); !pc.Resolved || !pc.Reachable || pc.Address != addr {
		t.Errorf("listening peer: %+v", pc)
	}
	l.Close()
	if pc := CheckPeer(ctx, "http://"+addr+"/", time.Second); !pc.Resolved || pc.Reachable || pc.Error == "" {
		t.Errorf("closed peer: %+v", pc)
	}
	if pc := CheckPeer(ctx, "http://no-such-host.invalid:8083/", time.Second); pc.Resolved || pc.Error == "" {
		t.Errorf("unresolvable peer: %+v", pc)
	}
	if pc := CheckPeer(ctx, "https://127.0.0.1/", time.Second); pc.Address != "127.0.0.1:443" {
		t.Errorf("default port: %+v", pc)
	}
	// Connect advertises a bare IPv6 listener host percent-encoded.
	if pc := CheckPeer(ctx, "http://%3A%3A1:1/", time.Second); !pc.Resolved || pc.Address != "[::1]:1" || pc.Addresses[0] != "::1" {
		t.Errorf("percent-encoded IPv6: %+v", pc)
	}
	if pc := CheckPeer(ctx, "::not a url", time.Second); pc.Resolved || pc.Error == "" {
		t.Errorf("bad URL: %+v", pc)
	}
}

func TestIdentityFindingsAndRegistrySection(t *testing.T) {
	s := healthy()
	seen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f := registry.Cluster{KafkaClusterID: "kc", GroupID: s.GroupID, ConfigTopic: "f-configs", OffsetTopic: "f-offsets", StatusTopic: "f-status"}
	claim := registry.Claim{Cluster: f, Offset: 3, FirstSeen: seen, URL: "http://f:8083/", Host: "fhost"}
	s.Group.Identity = &gate.IdentityReport{KafkaClusterID: "kc", ClaimedBy: &claim,
		Registry: &registry.View{Topic: "_connect-init-registry", Exists: true, Claims: []registry.Claim{claim},
			Workers: []registry.Worker{{Cluster: f, URL: "http://f:8083/", Host: "fhost", FirstSeen: seen, LastSeen: seen}}}}
	s.Group.Verdicts = []gate.MemberVerdict{{MemberID: s.Group.Members[0].MemberID, URL: "http://w1:8083/", Verdict: gate.VerdictUnverified,
		Evidence: "not proven ours or foreign: its URL is not in the cluster registry"}}
	fs := Diagnose(s)
	got := map[string]checks.Result{}
	for _, x := range fs {
		got[x.ID] = x
	}
	if c := got[checks.IDGroupRegisteredElsewhere]; c.Severity != checks.Error || !strings.Contains(c.Evidence, "http://f:8083/") ||
		!strings.Contains(c.Fix, "CONNECT_INIT_GROUP_HANDOVER=f-configs") {
		t.Errorf("claim finding: %+v", c)
	}
	if u := got[checks.IDUnverifiedGroupMember]; u.Severity != checks.Warning || !strings.Contains(u.Evidence, "not in the cluster registry") {
		t.Errorf("unverified finding: %+v", u)
	}
	var txt bytes.Buffer
	if err := NewDocument(s, fs, "v9", seen).WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Registry     topic _connect-init-registry, Kafka cluster kc: group owned by config topic f-configs",
		"http://f:8083/  host fhost  config topic f-configs", "unverified"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
}

// The rebalance delay is judged from the worker's settings, and rendered
// from checks (one home per rule).
func TestRebalanceDelayFinding(t *testing.T) {
	s := healthy()
	s.Rebalance = &checks.Rebalance{GroupID: s.GroupID}
	fs := Diagnose(s)
	if len(fs) != 1 || fs[0].ID != checks.IDRebalanceDelayDefault || fs[0].Severity != checks.Warning ||
		!strings.Contains(fs[0].Evidence, "300000 ms") || !strings.Contains(fs[0].Fix, "CONNECT_SCHEDULED_REBALANCE_MAX_DELAY_MS") {
		t.Fatalf("default delay: %+v", fs)
	}
	s.Rebalance.Delay = "90000"
	if fs := Diagnose(s); len(fs) != 0 {
		t.Errorf("a tuned delay: %+v", fs)
	}
}

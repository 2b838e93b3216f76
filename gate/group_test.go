package gate

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/connect/proto"
)

// fakeClock advances by the requested duration whenever After is called,
// so polling loops run instantly and deterministically.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- now
	return ch
}

// connectMember builds a DescribeGroups member of a Connect worker.
func connectMember(id, url string, offset int64, leader, leaderURL string, assignOffset int64) *sarama.GroupMemberDescription {
	md := proto.MemberMetadata{Version: 2, URL: url, ConfigOffset: offset}
	a := proto.Assignment{Version: 2, Leader: leader, LeaderURL: leaderURL, ConfigOffset: assignOffset, Connectors: []string{"c1"},
		Tasks: []proto.TaskID{{Connector: "c1", Task: 0}}}
	return &sarama.GroupMemberDescription{MemberId: id, ClientId: "connect-" + url, ClientHost: "/10.0.0.9",
		MemberMetadata: md.Encode(), MemberAssignment: a.Encode()}
}

func stableGroup(members ...*sarama.GroupMemberDescription) *sarama.GroupDescription {
	d := &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupStable, ProtocolType: "connect", Protocol: "sessioned",
		Members: map[string]*sarama.GroupMemberDescription{}}
	for _, m := range members {
		d.Members[m.MemberId] = m
	}
	return d
}

func gate(descs []*sarama.GroupDescription, hw, lso int64) (*GroupGate, *int) {
	calls := 0
	g := &GroupGate{GroupID: "connect-cluster", ConfigTopic: "_connect-configs", Clock: &fakeClock{now: time.Unix(0, 0)},
		StableWait: 2 * time.Second}
	g.describeFn = func(context.Context) (*sarama.GroupDescription, error) {
		d := descs[min(calls, len(descs)-1)]
		calls++
		return d, nil
	}
	g.offsetsFn = func(context.Context) (int64, int64, error) { return hw, lso, nil }
	return g, &calls
}

func TestGroupGateRefusesForeignMember(t *testing.T) {
	// Incident 1: the other cluster's worker reports 819, our topic ends at 0.
	b := connectMember("connect-1-b", "http://10.0.50.95:8083/", 819, "connect-1-b", "http://10.0.50.95:8083/", 819)
	g, _ := gate([]*sarama.GroupDescription{stableGroup(b)}, 0, 0)
	rep, err := g.Check(context.Background())
	var ge *GateError
	if !errors.As(err, &ge) || ge.Gate != "group" {
		t.Fatalf("want a group GateError, got %v", err)
	}
	for _, want := range []string{"connect-1-b", "http://10.0.50.95:8083/", "/10.0.0.9", "819", "end offset 0", "CONNECT_GROUP_ID"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %s", want, err)
		}
	}
	if rep == nil || len(rep.Foreign) != 1 || !rep.StableSeen || rep.LeaderURL != "http://10.0.50.95:8083/" || *rep.AssignmentOffset != 819 {
		t.Fatalf("report: %+v", rep)
	}
	f := rep.Foreign[0]
	if *f.ConfigOffset != 819 || *f.AssignmentOffset != 819 || f.OurEndOffset != 0 ||
		strings.Join(f.Reasons, ",") != "config-offset-ahead,assignment-offset-ahead" {
		t.Errorf("foreign: %+v", f)
	}
	if !rep.Members[0].Leader || rep.Members[0].Assignment.Tasks[0] != "c1-0" {
		t.Errorf("member: %+v", rep.Members[0])
	}
}

func TestGroupGateAcceptsOwnWorkers(t *testing.T) {
	// A caught-up worker reports the end offset; one that joined earlier
	// reports less. Neither is foreign.
	a1 := connectMember("a1", "http://w1:8083/", 12, "a1", "http://w1:8083/", 12)
	a2 := connectMember("a2", "http://w2:8083/", 9, "a1", "http://w1:8083/", 12)
	g, _ := gate([]*sarama.GroupDescription{stableGroup(a1, a2)}, 12, 12)
	rep, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Members) != 2 || rep.Members[0].MemberID != "a1" || !rep.Members[0].Leader || rep.Members[1].Leader {
		t.Errorf("members: %+v", rep.Members)
	}
	if rep.ConfigEndOffset != 12 || rep.ConfigStableOffset != 12 || len(rep.Foreign) != 0 || rep.Note != "" {
		t.Errorf("report: %+v", rep)
	}
}

func TestGroupGateWaitsForStable(t *testing.T) {
	b := connectMember("b", "http://b:8083/", 30, "b", "http://b:8083/", 30)
	rebalancing := &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupPreparingRebalance, ProtocolType: "connect",
		Members: map[string]*sarama.GroupMemberDescription{"b": {MemberId: "b", ClientHost: "/10.0.0.9"}}}
	g, calls := gate([]*sarama.GroupDescription{rebalancing, rebalancing, rebalancing, stableGroup(b)}, 3, 3)
	rep, err := g.Check(context.Background())
	// Four looks to the first Stable snapshot, and one more that confirms it.
	if err == nil || *calls != 5 || !rep.StableSeen || rep.Snapshots != 5 || rep.Window == nil || !rep.Window.Calm {
		t.Fatalf("err=%v calls=%d rep=%+v", err, *calls, rep)
	}
}

func TestGroupGateDecidesOnLatestWithoutStable(t *testing.T) {
	rebalancing := &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupCompletingRebalance, ProtocolType: "connect",
		Members: map[string]*sarama.GroupMemberDescription{"b": {MemberId: "b", ClientHost: "/10.0.0.9"}}}
	g, calls := gate([]*sarama.GroupDescription{rebalancing}, 3, 3)
	rep, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.StableSeen || !strings.Contains(rep.Note, "no Stable snapshot") || rep.Waited < 2*time.Second || *calls < 10 {
		t.Fatalf("calls=%d rep=%+v", *calls, rep)
	}
	if rep.Members[0].ConfigOffset != nil || rep.Members[0].MetadataError != "" {
		t.Errorf("empty bytes must read as unknown, not as an error: %+v", rep.Members[0])
	}
}

func TestGroupGateRefusesConsumerGroup(t *testing.T) {
	d := &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupStable, ProtocolType: "consumer", Protocol: "range",
		Members: map[string]*sarama.GroupMemberDescription{"c": {MemberId: "c", ClientId: "app", ClientHost: "/10.1.1.1", MemberMetadata: []byte{0, 1}}}}
	g, _ := gate([]*sarama.GroupDescription{d}, 0, 0)
	rep, err := g.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), `protocol type "consumer"`) || rep.Foreign[0].Reasons[0] != "protocol-type" {
		t.Fatalf("err=%v rep=%+v", err, rep)
	}
}

func TestGroupGateEmptyAndUnknownGroups(t *testing.T) {
	for _, state := range []string{GroupEmpty, GroupDead, GroupNotFound} {
		g, calls := gate([]*sarama.GroupDescription{{GroupId: "connect-cluster", State: state}}, 0, 0)
		rep, err := g.Check(context.Background())
		if err != nil || *calls != 1 || !rep.StableSeen || len(rep.Members) != 0 {
			t.Errorf("%s: err=%v calls=%d rep=%+v", state, err, *calls, rep)
		}
	}
}

func TestGroupGateUnknownEndOffsetDisablesOffsetChecks(t *testing.T) {
	b := connectMember("b", "http://b:8083/", 30, "b", "http://b:8083/", 30)
	g, _ := gate([]*sarama.GroupDescription{stableGroup(b)}, 0, 0)
	g.offsetsFn = func(context.Context) (int64, int64, error) { return -1, -1, errors.New("topic does not exist") }
	rep, err := g.Check(context.Background())
	if err != nil || rep.ConfigEndOffset != -1 || rep.ConfigOffsetsError == "" {
		t.Fatalf("err=%v rep=%+v", err, rep)
	}
}

func TestGroupGateDescribeErrorsUntilContextEnds(t *testing.T) {
	g, _ := gate(nil, 0, 0)
	g.describeFn = func(context.Context) (*sarama.GroupDescription, error) {
		return nil, sarama.ErrConsumerCoordinatorNotAvailable
	}
	_, err := g.Check(context.Background())
	var ge *GateError
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "describe worker group") {
		t.Fatalf("err=%v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Check(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err=%v", err)
	}
}

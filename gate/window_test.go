package gate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/connect/store"
)

// loop returns the answers of a group caught in the foreign-member loop:
// Stable moments between rebalances, n times.
func loop(n int, stable *sarama.GroupDescription) []*sarama.GroupDescription {
	rebalancing := &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupPreparingRebalance, ProtocolType: "connect",
		Members: map[string]*sarama.GroupMemberDescription{}}
	var out []*sarama.GroupDescription
	for range n {
		out = append(out, stable, rebalancing)
	}
	return append(out, stable)
}

// A calm group costs one look more than the first Stable snapshot, and the
// window says it was calm.
func TestWindowCalmGroupOneMoreLook(t *testing.T) {
	a1 := connectMember("a1", "http://w1:8083/", 12, "a1", "http://w1:8083/", 12)
	g, calls := gate([]*sarama.GroupDescription{stableGroup(a1)}, 12, 12)
	rep, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if *calls != 2 || rep.Window == nil || !rep.Window.Calm || rep.Window.Rebalances != 0 || rep.Window.Span != DefaultConfirmEvery {
		t.Fatalf("calls %d, window %+v", *calls, rep.Window)
	}
	if rs := checks.Errors(GroupResults(rep, "", false)); len(rs) != 0 {
		t.Errorf("a calm group has errors: %+v", rs)
	}
}

// The foreign-member loop in progress, our config topic longer: the other
// cluster's worker reports offset 4 in every Stable moment while the
// assignment is at 16. One snapshot calls it unverified at most; the window
// proves it foreign and names the storm.
func TestWindowStormNamesTheStuckMember(t *testing.T) {
	ours := connectMember("p1", "http://p1:8083/", 16, "p1", "http://p1:8083/", 16)
	foreign := connectMember("q1", "http://q1:8083/", 4, "p1", "http://p1:8083/", 16)
	g, _ := gate(loop(6, stableGroup(ours, foreign)), 16, 16)
	rep, err := g.Check(context.Background())
	var ge *GateError
	if !errors.As(err, &ge) || ge.Gate != "group" {
		t.Fatalf("want a group GateError, got %v", err)
	}
	for _, want := range []string{"q1", "config offset 4", RuleStuckBehind, "readConfigToEnd"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q: %s", want, err)
		}
	}
	w := rep.Window
	if w == nil || !w.Storm() || len(w.StuckBehind) != 1 || w.StuckBehind[0].MemberID != "q1" || w.StuckBehind[0].Rebalances < stuckRebalances {
		t.Fatalf("window %+v", w)
	}
	if len(rep.Foreign) != 1 || rep.Foreign[0].MemberID != "q1" || rep.Foreign[0].Reasons[0] != RuleStuckBehind {
		t.Fatalf("foreign %+v", rep.Foreign)
	}
	storm := findResult(GroupResults(rep, "", false), checks.IDGroupRebalanceStorm)
	if storm == nil || storm.Severity != checks.Error || !strings.Contains(storm.Evidence, "q1") || !strings.Contains(storm.Evidence, "config offset 4") {
		t.Fatalf("storm finding %+v", storm)
	}
}

// Our config topic the shorter: the assignment comes from the foreign
// member's offset (CONFIG_MISMATCH), and our own leader is the one behind it
// across the rebalances. It is not foreign; the member ahead is.
func TestWindowOursBehindAForeignAssignmentIsNotForeign(t *testing.T) {
	mismatch := func(id string, offset int64) *sarama.GroupMemberDescription {
		md := proto.MemberMetadata{Version: 2, URL: "http://" + id + ":8083/", ConfigOffset: offset}
		a := proto.Assignment{Version: 2, Error: proto.AssignmentConfigMismatch, Leader: "p1", LeaderURL: "http://p1:8083/", ConfigOffset: 16}
		return &sarama.GroupMemberDescription{MemberId: id, ClientId: "connect-" + id, ClientHost: "/10.0.0.9", MemberMetadata: md.Encode(), MemberAssignment: a.Encode()}
	}
	ours, foreign := mismatch("p1", 4), mismatch("q1", 16)
	g, _ := gate(loop(6, stableGroup(ours, foreign)), 4, 4)
	rep, err := g.Check(context.Background())
	if err == nil || len(rep.Foreign) != 1 || rep.Foreign[0].MemberID != "q1" {
		t.Fatalf("err %v; foreign %+v", err, rep.Foreign)
	}
	storm := findResult(GroupResults(rep, "", false), checks.IDGroupRebalanceStorm)
	if storm == nil || !strings.Contains(storm.Evidence, "q1") || strings.Contains(storm.Evidence, `"p1"`) {
		t.Fatalf("storm %+v", storm)
	}
}

// A member of ours that is behind once and caught up after the next
// rebalance is not stuck: it read our config topic.
func TestWindowMemberThatCatchesUpIsNotStuck(t *testing.T) {
	leader := connectMember("p1", "http://p1:8083/", 16, "p1", "http://p1:8083/", 16)
	behind := connectMember("p2", "http://p2:8083/", 14, "p1", "http://p1:8083/", 16)
	caughtUp := connectMember("p2", "http://p2:8083/", 16, "p1", "http://p1:8083/", 16)
	rebalancing := &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupPreparingRebalance, ProtocolType: "connect",
		Members: map[string]*sarama.GroupMemberDescription{}}
	g, _ := gate([]*sarama.GroupDescription{stableGroup(leader, behind), rebalancing, stableGroup(leader, caughtUp)}, 16, 16)
	rep, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if w := rep.Window; w == nil || !w.Calm || len(w.StuckBehind) != 0 || w.Storm() {
		t.Fatalf("window %+v", rep.Window)
	}
}

// A Stable, unchanging group with a member behind (it joined before it read
// the latest record) is watched for BehindFor only: not a storm.
func TestWindowBehindWithoutChurnIsShort(t *testing.T) {
	leader := connectMember("p1", "http://p1:8083/", 16, "p1", "http://p1:8083/", 16)
	behind := connectMember("p2", "http://p2:8083/", 15, "p1", "http://p1:8083/", 16)
	g, _ := gate([]*sarama.GroupDescription{stableGroup(leader, behind)}, 16, 16)
	rep, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w := rep.Window
	if w == nil || w.Calm || w.Storm() || w.Rebalances != 0 || w.Span < BehindFor || w.Span > BehindFor+DefaultConfirmEvery {
		t.Fatalf("window %+v", w)
	}
}

// A storm with no member to blame: doctor (one window) reports it; run
// (UntilCalm) waits it out and passes once the group holds still.
func TestWindowStormWithoutCulprit(t *testing.T) {
	at := func(off int64) *sarama.GroupDescription {
		return stableGroup(connectMember("p1", "http://p1:8083/", off, "p1", "http://p1:8083/", off))
	}
	var churn []*sarama.GroupDescription
	for i := range 80 {
		churn = append(churn, at(int64(10+i%2)))
	}
	g, _ := gate(churn, 11, 11)
	rep, err := g.Check(context.Background())
	var ge *GateError
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "did not settle") || !rep.Window.Storm() || len(rep.Window.StuckBehind) != 0 {
		t.Fatalf("err %v, window %+v", err, rep.Window)
	}
	if !strings.Contains(ge.Fix, "Forcing rebalance") {
		t.Errorf("fix %q", ge.Fix)
	}

	g, _ = gate(append(churn, at(11)), 11, 11)
	g.UntilCalm = true
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer cancel()
	rep, err = g.Check(ctx)
	if err != nil || !rep.Window.Calm || rep.Window.Rebalances < StormRebalances {
		t.Fatalf("err %v, window %+v", err, rep.Window)
	}
}

// A loop so fast that no look is ever Stable still shows as a storm.
func TestWindowStormNeverStable(t *testing.T) {
	state := func(s string) *sarama.GroupDescription {
		return &sarama.GroupDescription{GroupId: "connect-cluster", State: s, ProtocolType: "connect", Members: map[string]*sarama.GroupMemberDescription{}}
	}
	var looks []*sarama.GroupDescription
	for range 40 {
		looks = append(looks, state(GroupPreparingRebalance), state(GroupCompletingRebalance))
	}
	g, _ := gate(looks, 3, 3)
	rep, err := g.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "did not settle") || rep.StableSeen || !rep.Window.Storm() {
		t.Fatalf("err %v, report %+v, window %+v", err, rep, rep.Window)
	}
}

// assignedMember is connectMember with the connectors its assignment holds.
func assignedMember(id, url string, offset int64, leader, leaderURL string, assignOffset int64, connectors ...string) *sarama.GroupMemberDescription {
	md := proto.MemberMetadata{Version: 2, URL: url, ConfigOffset: offset}
	a := proto.Assignment{Version: 2, Leader: leader, LeaderURL: leaderURL, ConfigOffset: assignOffset, Connectors: connectors}
	return &sarama.GroupMemberDescription{MemberId: id, ClientId: "connect-" + url, ClientHost: "/10.0.0.9",
		MemberMetadata: md.Encode(), MemberAssignment: a.Encode()}
}

// The loop as real Kafka 4.3.1 shows it (storm_integration_test): the
// foreign worker rejoins again and again with the same metadata, the
// coordinator answers with the same generation, and every look shows the
// same Stable group. The member stuck at offset 4 below commit records of
// our config topic does not read it.
func TestStuckBehindInAStableGroup(t *testing.T) {
	cfg := configLog("a", "b", "c", "d", "e") // 16 records; commits at 3, 6, 9, 12, 15
	p1 := assignedMember("p1", "http://p1:8083/", 16, "p1", "http://p1:8083/", 16, "c", "d", "e")
	q1 := assignedMember("q1", "http://q1:8083/", 4, "p1", "http://p1:8083/", 16, "a", "b")
	g, _, _ := identityGate(identityCase{in: &identityInputs{config: cfg}}, p1, q1)
	rep, err := g.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), RuleStuckBehind) || !strings.Contains(err.Error(), "q1") || !strings.Contains(err.Error(), "at offset 4 a connector record of connector \"b\"") {
		t.Fatalf("err %v", err)
	}
	if v := verdictOf(rep, "q1"); v.Verdict != VerdictForeign || v.Rule != RuleStuckBehind {
		t.Errorf("q1: %+v", v)
	}
	if w := rep.Window; w == nil || w.Span < BehindFor || len(w.Behind) != 1 || w.Behind[0].For < BehindFor {
		t.Errorf("window %+v", rep.Window)
	}
}

// A member of ours behind only records that make no worker rejoin (a
// connector's config updated in place) is not foreign.
func TestBehindWithoutRejoinRecordIsNotForeign(t *testing.T) {
	cfg := configLog("a")
	cfg.Records = append(cfg.Records, store.ConfigRecord{Offset: 4, Kind: store.KindConnector, Connector: "a", Task: -1})
	cfg.End = 5
	p1 := assignedMember("p1", "http://p1:8083/", 5, "p1", "http://p1:8083/", 5, "a")
	p2 := assignedMember("p2", "http://p2:8083/", 4, "p1", "http://p1:8083/", 5)
	g, _, _ := identityGate(identityCase{in: &identityInputs{config: cfg}}, p1, p2)
	rep, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v := verdictOf(rep, "p2"); v.Verdict == VerdictForeign {
		t.Errorf("p2 judged foreign: %+v", v)
	}
}

func findResult(rs []checks.Result, id string) *checks.Result {
	for i := range rs {
		if rs[i].ID == id {
			return &rs[i]
		}
	}
	return nil
}

package gate

import (
	"context"
	"testing"

	"github.com/IBM/sarama"
)

// rebalancingWith is a look at a group between two generations: its
// members listed without metadata, as DescribeGroups lists them then.
func rebalancingWith(state string, ids ...string) *sarama.GroupDescription {
	d := &sarama.GroupDescription{GroupId: "connect-cluster", State: state, ProtocolType: "connect", Members: map[string]*sarama.GroupMemberDescription{}}
	for _, id := range ids {
		d.Members[id] = &sarama.GroupMemberDescription{MemberId: id, ClientHost: "/10.0.0.9"}
	}
	return d
}

// A restart seen from the starting worker's group gate: the worker it
// replaces (or one whose session expired) leaves while the gate looks, and
// the member left rejoins. This start cannot change that rebalance, and
// every member still listed was seen Stable: the window ends at the
// departure's first look instead of waiting calmFor after it (before:
// one rebalance counted, churn, the window held for at least 1 s).
func TestWindowDepartureIsNotChurn(t *testing.T) {
	a := connectMember("a", "http://10.0.0.7:8083/", 12, "a", "http://10.0.0.7:8083/", 12)
	b := connectMember("b", "http://10.0.0.8:8083/", 12, "a", "http://10.0.0.7:8083/", 12)
	a2 := connectMember("a", "http://10.0.0.7:8083/", 12, "a", "http://10.0.0.7:8083/", 12)
	a2.MemberAssignment = append([]byte(nil), a2.MemberAssignment...)
	looks := []*sarama.GroupDescription{
		stableGroup(a, b),
		rebalancingWith(GroupPreparingRebalance, "a"),
		rebalancingWith(GroupCompletingRebalance, "a"),
		stableGroup(a2),
	}
	g, calls := gate(looks, 12, 12)
	g.UntilCalm = true
	rep, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w := rep.Window
	if w == nil || !w.Calm || w.Rebalances != 0 || w.Departures != 1 || w.Span != DefaultConfirmEvery || *calls != 2 {
		t.Fatalf("calls %d, window %+v; want calm after one look, the departure not counted as a rebalance", *calls, w)
	}
	// Judged on the last Stable look, which has both members' metadata:
	// the peers step then finds b gone (peers.Gate.Left).
	if len(rep.Members) != 2 || rep.countVerdict(VerdictForeign) != 0 {
		t.Errorf("members %+v", rep.Members)
	}
}

// Members leaving one after the other, each departure's rebalance
// completing: still no churn, the window closes calm on the last look.
func TestWindowDeparturesCompletingStayCalm(t *testing.T) {
	a := connectMember("a", "http://10.0.0.7:8083/", 12, "a", "http://10.0.0.7:8083/", 12)
	b := connectMember("b", "http://10.0.0.8:8083/", 12, "a", "http://10.0.0.7:8083/", 12)
	c := connectMember("c", "http://10.0.0.9:8083/", 12, "a", "http://10.0.0.7:8083/", 12)
	looks := []*sarama.GroupDescription{stableGroup(a, b, c), stableGroup(a, b)}
	g, _ := gate(looks, 12, 12)
	rep, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if w := rep.Window; !w.Calm || w.Rebalances != 0 || w.Departures != 1 || w.Span != DefaultConfirmEvery {
		t.Fatalf("window %+v", w)
	}
}

// What a start can change is still watched: a member that joins (here
// in the same look as another leaves: a replacement, or a foreign worker)
// is churn, and a group whose unchanged members
// rebalance again and again (incident 1's forced rejoins, members listed
// in every look) is still a storm.
func TestWindowJoinsAndForcedRejoinsStillCount(t *testing.T) {
	a := connectMember("a", "http://10.0.0.7:8083/", 12, "a", "http://10.0.0.7:8083/", 12)
	b := connectMember("b", "http://10.0.0.8:8083/", 12, "a", "http://10.0.0.7:8083/", 12)
	c := connectMember("c", "http://10.0.0.9:8083/", 12, "a", "http://10.0.0.7:8083/", 12)
	g, _ := gate([]*sarama.GroupDescription{
		stableGroup(a, b),
		rebalancingWith(GroupPreparingRebalance, "a", "c"),
		stableGroup(a, c),
	}, 12, 12)
	rep, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if w := rep.Window; w.Departures != 0 || w.Rebalances != 1 || w.Span < calmFor || len(rep.Members) != 2 || rep.Members[1].MemberID != "c" {
		t.Fatalf("a join: window %+v, want churn (calm only after calmFor)", w)
	}

	var storm []*sarama.GroupDescription
	for range 20 {
		storm = append(storm, stableGroup(a, b), rebalancingWith(GroupPreparingRebalance, "a", "b"), rebalancingWith(GroupCompletingRebalance, "a", "b"))
	}
	g, _ = gate(storm, 12, 12)
	rep, err = g.Check(context.Background())
	if err == nil || !rep.Window.Storm() || rep.Window.Departures != 0 {
		t.Fatalf("forced rejoins of unchanged members: err %v, window %+v; want a storm", err, rep.Window)
	}
}

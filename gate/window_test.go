package gate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
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
// the latest record) is watched for behindFor only: not a storm.
func TestWindowBehindWithoutChurnIsShort(t *testing.T) {
	leader := connectMember("p1", "http://p1:8083/", 16, "p1", "http://p1:8083/", 16)
	behind := connectMember("p2", "http://p2:8083/", 15, "p1", "http://p1:8083/", 16)
	g, _ := gate([]*sarama.GroupDescription{stableGroup(leader, behind)}, 16, 16)
	rep, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w := rep.Window
	if w == nil || w.Calm || w.Storm() || w.Rebalances != 0 || w.Span < behindFor || w.Span > behindFor+DefaultConfirmEvery {
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

func findResult(rs []checks.Result, id string) *checks.Result {
	for i := range rs {
		if rs[i].ID == id {
			return &rs[i]
		}
	}
	return nil
}

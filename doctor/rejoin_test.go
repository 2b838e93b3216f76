package doctor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/metrics"
)

// member is a worker of a scripted group: url/member id.
func member(url, id string) gate.GroupMember {
	return gate.GroupMember{MemberID: id, ClientID: "connect-1", ClientHost: "/10.0.1.9", URL: url}
}

func group(state string, ms ...gate.GroupMember) *gate.GroupReport {
	return &gate.GroupReport{State: state, Members: ms}
}

func TestRejoinTracker(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	a, b, c := "http://10.0.1.5:8083", "http://10.0.1.6:8083", "http://10.0.1.7:8083"
	tr := NewRejoinTracker()
	tr.Observe(at(0), group("Stable", member(a, "a1"), member(b, "b1"), member(c, "c1")))
	if _, ok := tr.Longest(); ok {
		t.Fatal("a rejoin after one look")
	}
	// b leaves; a rebalance's partial member list proves nothing.
	tr.Observe(at(30), group("PreparingRebalance", member(a, "a1")))
	tr.Observe(at(60), group("Stable", member(a, "a1"), member(c, "c1")))
	tr.Observe(at(90), group("Stable", member(a, "a1"), member(c, "c1")))
	// ... and comes back under its URL with a new member id: away from
	// the first look without it (60) to the last (90) at least, from the
	// last look with it (0) to this one (120) at most.
	tr.Observe(at(120), group("Stable", member(a, "a1"), member(b, "b2"), member(c, "c1")))
	r, ok := tr.Longest()
	if !ok || r.Worker != b || r.AtLeast != 30*time.Second || r.AtMost != 120*time.Second || r.Replaced != "" {
		t.Fatalf("b's rejoin: %+v %v; want at least 30s, at most 2m0s", r, ok)
	}
	// a restarts between two looks: a new member id under the same URL,
	// never seen away.
	tr.Observe(at(150), group("Stable", member(a, "a2"), member(b, "b2"), member(c, "c1")))
	// c is replaced by a task at a new address (a Swarm task advertising
	// its overlay IP): the new URL is c's replacement.
	d := "http://10.0.1.8:8083"
	tr.Observe(at(180), group("Stable", member(a, "a2"), member(b, "b2")))
	tr.Observe(at(210), group("Stable", member(a, "a2"), member(b, "b2"), member(d, "d1")))
	// A fourth worker (the group grew) is no one's replacement.
	tr.Observe(at(240), group("Stable", member(a, "a2"), member(b, "b2"), member(d, "d1"), member("http://10.0.1.10:8083", "e1")))
	if got := tr.Total(); got != 3 {
		t.Fatalf("%d rejoins, want 3 (b, a, c)", got)
	}
	tr.mu.Lock()
	got := append([]Rejoin(nil), tr.rejoins...)
	tr.mu.Unlock()
	want := []Rejoin{
		{Worker: b, Left: at(0), Back: at(120), AtLeast: 30 * time.Second, AtMost: 120 * time.Second},
		{Worker: a, Left: at(120), Back: at(150), AtMost: 30 * time.Second},
		{Worker: c, Replaced: d, Left: at(150), Back: at(210), AtMost: 60 * time.Second},
	}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("rejoin %d: got %+v, want %+v", i, got, want[i])
		}
	}
	if r, _ := tr.Longest(); r.Worker != b {
		t.Errorf("longest: %+v, want b's (the longest lower bound)", r)
	}
	// A week later b's rejoin is forgotten; a worker scaled away for good
	// is not paired with a newcomer weeks later.
	tr.Observe(at(300), group("Stable", member(a, "a2"), member(b, "b2"), member(d, "d1")))
	late := at(300).Add(DefaultRejoinMemory + time.Hour)
	tr.Observe(late, group("Stable", member(a, "a2"), member(b, "b2"), member(d, "d1"), member("http://10.0.1.11:8083", "f1")))
	if r, ok := tr.Longest(); ok {
		t.Errorf("a rejoin older than the memory is still the longest: %+v", r)
	}
	if got := tr.Total(); got != 3 {
		t.Errorf("total %d after forgetting, want 3 (a count since the start)", got)
	}
	var nilTracker *RejoinTracker
	nilTracker.Observe(at(0), group("Stable", member(a, "a1")))
	if _, ok := nilTracker.Longest(); ok || nilTracker.Total() != 0 {
		t.Error("a nil tracker measured something")
	}
}

// A member without a URL (metadata that did not decode) is known by its
// client id and host.
func TestRejoinIdentityWithoutURL(t *testing.T) {
	if got := memberIdentity(gate.GroupMember{ClientID: "connect-1", ClientHost: "/10.0.1.5", URL: "http://w1:8083/"}); got != "http://w1:8083" {
		t.Errorf("identity %q", got)
	}
	if got := memberIdentity(gate.GroupMember{ClientID: "connect-1", ClientHost: "/10.0.1.5"}); got != "client connect-1 host /10.0.1.5" {
		t.Errorf("identity %q", got)
	}
}

// doctor --watch end to end on the injected clock: a rolling restart of
// one worker seen by the looks feeds rebalance-delay-below-rejoin, with
// both numbers and the value to set, and the metrics carry the rejoin.
func TestWatchMeasuresRejoin(t *testing.T) {
	clk := clock.NewStepping(time.Unix(5000, 0))
	tr := NewRejoinTracker()
	a, b := "http://w1:8083", "http://w2:8083"
	// Looks every 10 s: w2 is away from the 2nd to the 9th look (70 s
	// between the first and last look that saw it away).
	script := []*gate.GroupReport{group("Stable", member(a, "a1"), member(b, "b1"))}
	for range 8 {
		script = append(script, group("Stable", member(a, "a1")))
	}
	script = append(script, group("Stable", member(a, "a1"), member(b, "b2")), group("Stable", member(a, "a1"), member(b, "b2")))
	reg := metrics.NewRegistry()
	m := NewMetrics(reg, "g")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	look := func(context.Context) *Document {
		s := healthy()
		s.GroupID = "g"
		s.Group.Members = script[n].Members
		s.Group.State = script[n].State
		s.Rebalance = &checks.Rebalance{GroupID: "g", Delay: "60000"}
		l := &looks{ctx: ctx, opts: Options{Clock: clk, Rejoins: tr}.withDefaults(), s: s}
		l.rejoins()
		doc := NewDocument(s, Diagnose(s), "test", clk.Now())
		lk := &Look{Snapshot: s, Document: doc, Started: clk.Now(), Rejoins: tr.Total()}
		if r, ok := tr.Longest(); ok {
			lk.Rejoin = &r
		}
		m.Observe(lk)
		n++
		if n == len(script) {
			cancel()
		}
		return doc
	}
	var appeared []checks.Result
	emit := func(_ *Document, c *Change) error {
		appeared = append(appeared, c.Appeared...)
		return nil
	}
	if err := Watch(ctx, 10*time.Second, clk, look, emit); err != nil {
		t.Fatal(err)
	}
	var f *checks.Result
	for i := range appeared {
		if appeared[i].ID == checks.IDRebalanceDelayBelowRejoin {
			f = &appeared[i]
		}
	}
	if f == nil {
		t.Fatalf("no %s finding; appeared: %+v", checks.IDRebalanceDelayBelowRejoin, appeared)
	}
	for _, want := range []string{"scheduled.rebalance.max.delay.ms=60000 (1m0s)", "(http://w2:8083): away at least 1m10s, at most 1m30s"} {
		if !strings.Contains(f.Evidence, want) {
			t.Errorf("evidence %q lacks %q", f.Evidence, want)
		}
	}
	if !strings.Contains(f.Fix, "to at least 120000 (2m0s") {
		t.Errorf("fix %q does not name 120000 (1m30s + 30s)", f.Fix)
	}
	want := `
# HELP connect_init_group_rejoin_longest_seconds The longest recent time a restarted or replaced worker was away from the group, between two bounds (bound: at_least, at_most) set by the looks' interval; absent until the watcher has seen a worker leave and come back. scheduled.rebalance.max.delay.ms should exceed it.
# TYPE connect_init_group_rejoin_longest_seconds gauge
connect_init_group_rejoin_longest_seconds{bound="at_least",group_id="g"} 70
connect_init_group_rejoin_longest_seconds{bound="at_most",group_id="g"} 90
# HELP connect_init_group_rejoins_total Workers the watcher saw leave the group and come back (or be replaced) since it started.
# TYPE connect_init_group_rejoins_total counter
connect_init_group_rejoins_total{group_id="g"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "connect_init_group_rejoin_longest_seconds", "connect_init_group_rejoins_total"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %+v", err, problems)
	}
}

package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/connect/registry"
	"github.com/connect-init/connect-init/connect/store"
)

// Issue 47: the verdict on a member behind the assignment must not depend
// on where in the group's rebalance cycle the look starts. These tests
// drive the gate on its own fake clock through a simulated group whose
// answers are a function of that clock, and start the look at every phase
// of the cycle in steps of 0.5 s.

// groupSim answers DescribeGroups as a group whose state is a function of
// the fake clock: rebalances begin at the instants rebalanceAt gives, each
// PreparingRebalance then CompletingRebalance for rebalancing, Stable
// between; stable gives the Stable answer of the generation gen (the
// number of rebalances begun so far).
type groupSim struct {
	clk         *fakeClock
	t0          time.Time
	rebalancing time.Duration
	// rebalanceAt reports, for an instant t after t0, how many rebalances
	// have begun by then and when the latest began (zero when none).
	rebalanceAt func(t time.Duration) (gen int, began time.Duration)
	stable      func(gen int) *sarama.GroupDescription
}

func (s *groupSim) describe(context.Context) (*sarama.GroupDescription, error) {
	t := s.clk.Now().Sub(s.t0)
	gen, began := s.rebalanceAt(t)
	d := s.stable(gen)
	if gen == 0 || t-began >= s.rebalancing {
		return d, nil
	}
	// What the coordinator shows while it rebalances: the members without
	// metadata or assignment (GroupMetadata.summary, not Stable).
	state := GroupPreparingRebalance
	if t-began >= s.rebalancing*2/3 {
		state = GroupCompletingRebalance
	}
	r := &sarama.GroupDescription{GroupId: d.GroupId, State: state, ProtocolType: "connect", Members: map[string]*sarama.GroupMemberDescription{}}
	for id, m := range d.Members {
		r.Members[id] = &sarama.GroupMemberDescription{MemberId: id, ClientId: m.ClientId, ClientHost: m.ClientHost}
	}
	return r, nil
}

// every is a storm's cadence: a rebalance begins every period.
func every(period time.Duration) func(time.Duration) (int, time.Duration) {
	return func(t time.Duration) (int, time.Duration) {
		n := int(t / period)
		return n, time.Duration(n) * period
	}
}

// simGate is a gate with the identity rules over sim, starting its look at
// t0+start; view is the cluster registry it reads.
func simGate(sim *groupSim, start time.Duration, view *registry.View) *GroupGate {
	clk := &fakeClock{now: sim.t0.Add(start)}
	sim.clk = clk
	cfg := configLog("a", "b", "c", "d", "e") // 16 records; commits at 3, 6, 9, 12, 15
	g := &GroupGate{GroupID: "connect-cluster", ConfigTopic: "_connect-configs", Clock: clk, StableWait: 30 * time.Second, UntilCalm: true}
	g.describeFn = sim.describe
	g.offsetsFn = func(context.Context) (int64, int64, error) { return 16, 16, nil }
	g.configFn = func(context.Context) (*store.ConfigLog, error) { return cfg, nil }
	g.Identity = &Identity{Cluster: us, OwnURL: "http://me:8083/", Host: "me", Register: true}
	g.identityFn = func(context.Context, *GroupReport) *identityInputs {
		return &identityInputs{clusterID: "kc", config: cfg, view: view}
	}
	g.registerFn = func(context.Context, registry.Cluster, bool) (*registry.Registration, error) {
		return &registry.Registration{Claimed: true}, nil
	}
	return g
}

// phases are the look's start instants: every 0.5 s over two cycles.
func phases(cycle time.Duration) []time.Duration {
	var out []time.Duration
	for p := time.Duration(0); p < 2*cycle; p += 500 * time.Millisecond {
		out = append(out, p)
	}
	return out
}

// The foreign member of incident 1 in a slow storm: the other cluster's
// worker q1 (its own, shorter config topic) reports offset 4 while our
// leader p1 assigns at 16, and the group rebalances every 3, 6, 12 or 30 s.
// Between rebalances the group is Stable (q1's forced rejoins with
// unchanged metadata do not change the generation). Whatever the phase the
// look starts at, the gate names q1 foreign and refuses; the same when q1
// comes back under a new member id at every rebalance (a worker that left
// the group and joined again).
func TestPhaseSweepForeignMemberInASlowStorm(t *testing.T) {
	for _, newIDs := range []bool{false, true} {
		for _, period := range []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second, 30 * time.Second} {
			rebalancing := min(period/3, 3*time.Second) // p1 rejoins at its next heartbeat: 3 s at most
			sim := &groupSim{t0: time.Unix(1000, 0), rebalancing: rebalancing, rebalanceAt: every(period),
				stable: func(gen int) *sarama.GroupDescription {
					id := "q1"
					if newIDs {
						id = fmt.Sprintf("q1-%d", gen)
					}
					p1 := assignedMember("p1", "http://p1:8083/", 16, "p1", "http://p1:8083/", 16, "c", "d", "e")
					q1 := assignedMember(id, "http://q1:8083/", 4, "p1", "http://p1:8083/", 16, "a", "b")
					return stableGroup(p1, q1)
				}}
			for _, start := range phases(period) {
				name := fmt.Sprintf("every %s, new ids %v, start %s", period, newIDs, start)
				g := simGate(sim, start, &registry.View{Exists: true})
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				rep, err := g.Check(ctx)
				cancel()
				if err == nil || rep == nil {
					t.Errorf("%s: admitted (err %v)", name, err)
					continue
				}
				if !strings.Contains(err.Error(), "http://q1:8083/") {
					t.Errorf("%s: the refusal does not name q1: %v", name, err)
				}
				foreign := false
				for _, f := range rep.Foreign {
					foreign = foreign || f.URL == "http://q1:8083/"
				}
				if !foreign {
					t.Errorf("%s: q1 not foreign; foreign %+v; window %+v", name, rep.Foreign, rep.Window)
				}
			}
		}
	}
}

// A worker of ours that joins behind the assignment and is slow to read
// our config topic (2.5 s, inside Connect's worker.sync.timeout.ms of 3 s)
// reads a commit record, so it rejoins with the assignment's offset
// (DistributedHerder.handleRebalanceCompleted, readConfigToEnd; the commit
// sets needsReconfigRebalance). Wherever the look starts, from before it
// joins to the moment it rejoins, the gate lets this worker in: the member
// behind is watched until it catches up, never judged on a moment.
func TestPhaseSweepOwnWorkerThatCatchesUpLate(t *testing.T) {
	for _, background := range []time.Duration{0, 12 * time.Second, 30 * time.Second} {
		for _, refused := range ownWorkerSweep(t, 2500*time.Millisecond, 0, background) {
			t.Error(refused)
		}
	}
}

// A group whose workers have a longer worker.sync.timeout.ms (8 s) gives a
// worker that joined behind that long to read: one of ours that reads for
// 7.5 s is let in wherever the look starts, since the gate takes this
// worker's setting for the group's (BehindForSync). With Connect's default
// 3 s taken instead, the same worker is judged foreign at some phases:
// the setting is what decides, not the phase.
func TestPhaseSweepOwnWorkerWithALongerSyncTimeout(t *testing.T) {
	const reading = 7500 * time.Millisecond
	for _, refused := range ownWorkerSweep(t, reading, 8*time.Second, 0) {
		t.Error(refused)
	}
	if refused := ownWorkerSweep(t, reading, 0, 0); len(refused) == 0 {
		t.Error("with the default sync timeout taken for the group's, a worker reading for 7.5 s was admitted at every phase: the sweep does not exercise BehindForSync")
	}
}

// ownWorkerSweep runs the group gate at every phase of a worker of ours,
// p2, that joins at 10 s behind the assignment and reads our config topic
// for reading before it rejoins caught up, in a group whose rebalances
// also come every background (0: none); the gate's SyncTimeout is sync.
// It returns, per phase, why the gate refused or judged a member foreign.
func ownWorkerSweep(t *testing.T, reading, sync, background time.Duration) []string {
	t.Helper()
	const joined = 10 * time.Second
	sim := &groupSim{t0: time.Unix(1000, 0), rebalancing: time.Second,
		rebalanceAt: func(t time.Duration) (int, time.Duration) {
			// p2's join at 10 s and its rejoin once read, plus a
			// background cadence when set (other members restarting).
			var at []time.Duration
			if background > 0 {
				for b := background; b <= t; b += background {
					at = append(at, b)
				}
			}
			for _, b := range []time.Duration{joined, joined + time.Second + reading} {
				if b <= t {
					at = append(at, b)
				}
			}
			latest := time.Duration(0)
			for _, b := range at {
				latest = max(latest, b)
			}
			return len(at), latest
		},
		stable: nil}
	sim.stable = func(int) *sarama.GroupDescription {
		now := sim.clk.Now().Sub(sim.t0)
		p1 := assignedMember("p1", "http://p1:8083/", 16, "p1", "http://p1:8083/", 16, "c", "d", "e")
		switch {
		case now < joined:
			return stableGroup(p1)
		case now < joined+time.Second+reading:
			return stableGroup(p1, assignedMember("p2", "http://p2:8083/", 14, "p1", "http://p1:8083/", 16, "a", "b"))
		default:
			return stableGroup(p1, assignedMember("p2", "http://p2:8083/", 16, "p1", "http://p1:8083/", 16, "a", "b"))
		}
	}
	view := &registry.View{Exists: true, Workers: []registry.Worker{
		{Cluster: us, URL: "http://p1:8083/"}, {Cluster: us, URL: "http://p2:8083/"}}}
	var refused []string
	for start := joined - time.Second; start <= joined+time.Second+reading; start += 500 * time.Millisecond {
		name := fmt.Sprintf("reading %s, sync timeout %s, background %s, start %s", reading, sync, background, start)
		g := simGate(sim, start, view)
		g.SyncTimeout = sync
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		rep, err := g.Check(ctx)
		cancel()
		if err != nil {
			refused = append(refused, fmt.Sprintf("%s: refused: %v", name, err))
			continue
		}
		for _, v := range rep.Verdicts {
			if v.Verdict == VerdictForeign {
				refused = append(refused, fmt.Sprintf("%s: %s judged foreign: %s", name, v.MemberID, v.Evidence))
			}
		}
	}
	return refused
}

// Where the evidence never comes in (a member seen behind once, then a
// rebalance that never completes), the window looks until the timeout,
// says every 5 s what it waits for, and the gate refuses naming the
// member and the fix: never a warning and a join.
func TestUnjudgedAtTheTimeoutIsARefusal(t *testing.T) {
	sim := &groupSim{t0: time.Unix(1000, 0), rebalancing: time.Hour, rebalanceAt: func(t time.Duration) (int, time.Duration) {
		if t < time.Second {
			return 0, 0
		}
		return 1, time.Second
	}, stable: func(int) *sarama.GroupDescription {
		p1 := assignedMember("p1", "http://p1:8083/", 16, "p1", "http://p1:8083/", 16, "c", "d", "e")
		return stableGroup(p1, assignedMember("s1", "http://s1:8083/", 14, "p1", "http://p1:8083/", 16))
	}}
	view := &registry.View{Exists: true, Workers: []registry.Worker{{Cluster: us, URL: "http://p1:8083/"}, {Cluster: us, URL: "http://s1:8083/"}}}
	g := simGate(sim, 0, view)
	var logs strings.Builder
	g.Log = slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := g.Check(ctx)
	var ge *GateError
	if !errors.As(err, &ge) || rep == nil || len(rep.Window.Unjudged) != 1 {
		t.Fatalf("want a refusal with one unjudged member, got %v; report %+v", err, rep)
	}
	for _, want := range []string{"s1", "http://s1:8083/", "config offset 14", "could not be judged", "CONNECT_INIT_TIMEOUT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q: %v", want, err)
		}
	}
	if n := strings.Count(logs.String(), "a member behind the assignment is not judged yet"); n < 20 || !strings.Contains(logs.String(), "waiting_for") {
		t.Errorf("%d wait lines over two minutes; want one every 5 s saying what it waits for:\n%s", n, logs.String())
	}
	if span := rep.Window.Span; span < 110*time.Second || span > 2*time.Minute {
		t.Errorf("window span %s: want it to reach the timeout (2m) and not pass it", span)
	}
}

// A first bring-up: a worker that joined before its leader wrote the
// session key reports offset -1 under an assignment at 1, and stays there
// until the next rebalance, since a session key makes no worker rejoin.
// Our config topic, read once the window meets it, says so: the window
// closes at its next look instead of watching BehindFor, and the worker
// is not foreign.
func TestBehindOnlyASessionKeyClosesAtOnce(t *testing.T) {
	cfg := &store.ConfigLog{Topic: us.ConfigTopic, End: 1, Records: []store.ConfigRecord{{Offset: 0, Kind: store.KindSessionKey, Task: -1}}}
	first := stableGroup(assignedMember("p1", "http://p1:8083/", 1, "p1", "http://p1:8083/", 1),
		assignedMember("p2", "http://p2:8083/", -1, "p1", "http://p1:8083/", 1))
	g, _, _ := identityGate(identityCase{in: &identityInputs{config: cfg}}, first.Members["p1"], first.Members["p2"])
	g.offsetsFn = func(context.Context) (int64, int64, error) { return 1, 1, nil }
	reads := 0
	g.configFn = func(context.Context) (*store.ConfigLog, error) { reads++; return cfg, nil }
	rep, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if w := rep.Window; w == nil || w.Span > DefaultConfirmEvery || len(w.Unjudged) != 0 || len(w.Behind) != 1 {
		t.Fatalf("window %+v: want it closed at the next look, p2 behind and judged", rep.Window)
	}
	if reads != 1 {
		t.Errorf("the config topic was read %d times in the window, want once", reads)
	}
	if v := verdictOf(rep, "p2"); v.Verdict == VerdictForeign {
		t.Errorf("p2 judged foreign: %+v", v)
	}
}

// A calm start reads nothing more: no member behind, no config read in
// the window.
func TestCalmStartReadsNoConfigInTheWindow(t *testing.T) {
	a1 := connectMember("a1", "http://w1:8083/", 12, "a1", "http://w1:8083/", 12)
	g, _ := gate([]*sarama.GroupDescription{stableGroup(a1)}, 12, 12)
	g.configFn = func(context.Context) (*store.ConfigLog, error) {
		t.Error("the window read the config topic on a calm start")
		return nil, errors.New("unexpected")
	}
	if _, err := g.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
}

package gate

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/connect/registry"
	"github.com/connect-init/connect-init/connect/store"
)

var us = registry.Cluster{KafkaClusterID: "kc", GroupID: "connect-cluster", ConfigTopic: "_connect-configs",
	OffsetTopic: "_connect-offsets", StatusTopic: "_connect-status"}

// worker builds a sessioned member running connectors (its allocation,
// reported at join) and newly assigned ones, at assignment offset off.
func worker(id, url string, off int64, running, assigned []string, mutate func(*proto.Assignment)) *sarama.GroupMemberDescription {
	var alloc *proto.Assignment
	if running != nil {
		alloc = &proto.Assignment{Version: 2, Leader: "l", LeaderURL: "http://l:8083/", ConfigOffset: off, Connectors: running}
	}
	md := proto.MemberMetadata{Version: 2, URL: url, ConfigOffset: off, Allocation: alloc}
	a := proto.Assignment{Version: 2, Leader: "l", LeaderURL: "http://l:8083/", ConfigOffset: off, Connectors: assigned}
	if mutate != nil {
		mutate(&a)
	}
	return &sarama.GroupMemberDescription{MemberId: id, ClientId: "connect-" + url, ClientHost: "/10.0.0.9",
		MemberMetadata: md.Encode(), MemberAssignment: a.Encode()}
}

// configLog builds our config topic: a session key at 0, then per
// connector its connector-, task- and commit- records (16 records for 5).
func configLog(connectors ...string) *store.ConfigLog {
	l := &store.ConfigLog{Topic: us.ConfigTopic}
	add := func(kind store.Kind, c string) {
		l.Records = append(l.Records, store.ConfigRecord{Offset: int64(len(l.Records)), Kind: kind, Connector: c, Task: -1})
	}
	add(store.KindSessionKey, "")
	for _, c := range connectors {
		add(store.KindConnector, c)
		add(store.KindTask, c)
		add(store.KindCommit, c)
	}
	l.End = int64(len(l.Records))
	return l
}

type identityCase struct {
	in       *identityInputs
	strict   bool
	handover string
	regErr   error
}

// identityGate returns a gate over one Stable snapshot (served for every
// describe) with the identity inputs given; *registered counts writes.
func identityGate(c identityCase, members ...*sarama.GroupMemberDescription) (*GroupGate, *int, *bytes.Buffer) {
	in := c.in
	if in.clusterID == "" {
		in.clusterID = "kc"
	}
	end := int64(0)
	if in.config != nil {
		end = in.config.End
	}
	g, _ := gate([]*sarama.GroupDescription{stableGroup(members...)}, end, end)
	g.Identity = &Identity{Cluster: us, OwnURL: "http://me:8083/", Host: "me", Register: true, Strict: c.strict, Handover: c.handover}
	g.identityFn = func(context.Context, *GroupReport) *identityInputs { return in }
	registered := 0
	g.registerFn = func(context.Context, registry.Cluster, bool) (*registry.Registration, error) {
		registered++
		if c.regErr != nil {
			return nil, c.regErr
		}
		return &registry.Registration{Claimed: true}, nil
	}
	var logs bytes.Buffer
	g.Log = slog.New(slog.NewTextHandler(&logs, nil))
	return g, &registered, &logs
}

func verdictOf(rep *GroupReport, id string) MemberVerdict {
	for _, v := range rep.Verdicts {
		if v.MemberID == id {
			return v
		}
	}
	return MemberVerdict{}
}

func TestIdentityUnknownConnectorIsForeign(t *testing.T) {
	// Issue 13: F at assignment offset 4 with connector f-1; our topic has
	// 16 records and 5 connectors. Offsets pass; the connector does not.
	f := worker("f", "http://f:8083/", 4, []string{"f-1"}, nil, nil)
	g, registered, _ := identityGate(identityCase{in: &identityInputs{config: configLog("a", "b", "c", "d", "e")}}, f)
	rep, err := g.Check(context.Background())
	var ge *GateError
	if !errors.As(err, &ge) || ge.Gate != "group" {
		t.Fatalf("want a group refusal, got %v", err)
	}
	v := verdictOf(rep, "f")
	if v.Verdict != VerdictForeign || v.Rule != RuleUnknownConnector {
		t.Fatalf("verdict: %+v", v)
	}
	for _, want := range []string{"f-1", "http://f:8083/", "/10.0.0.9", "16 records", "assignment offset 4", "rule unknown-connector", "CONNECT_GROUP_ID"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q: %s", want, err)
		}
	}
	if *registered != 0 {
		t.Errorf("a refusing gate wrote the registry %d times", *registered)
	}
}

func TestIdentityUnassignedConnectorsBelowOffset(t *testing.T) {
	// Our topic defined a and b below offset 7; the Stable group at 7 runs
	// neither: its leader does not read our topic.
	f := worker("f", "http://f:8083/", 7, []string{}, nil, nil)
	g, _, _ := identityGate(identityCase{in: &identityInputs{config: configLog("a", "b")}}, f)
	rep, err := g.Check(context.Background())
	if err == nil || verdictOf(rep, "f").Rule != RuleUnassignedConnectors || !strings.Contains(err.Error(), "a, b") {
		t.Fatalf("want unassigned-connectors, got %v (%+v)", err, rep.Verdicts)
	}
}

func TestIdentityUnassignedConnectorsAfterOffsetNeedSettling(t *testing.T) {
	// F at offset 1 (its session key only); our 5 connectors come after.
	// Foreign only once the group is seen unchanged a settle time later.
	f := worker("f", "http://f:8083/", 1, []string{}, nil, nil)
	g, _, logs := identityGate(identityCase{in: &identityInputs{config: configLog("a", "b", "c", "d", "e")}}, f)
	rep, err := g.Check(context.Background())
	if err == nil || verdictOf(rep, "f").Rule != RuleUnassignedConnectors {
		t.Fatalf("want unassigned-connectors after settling, got %v (%+v)", err, rep.Verdicts)
	}
	if !strings.Contains(logs.String(), "watching the worker group") {
		t.Errorf("no settle wait logged: %s", logs.String())
	}

	// The group reacts (a new assignment offset) during the settle wait:
	// not evidence.
	moved := worker("f", "http://f:8083/", 16, []string{"a", "b", "c", "d", "e"}, nil, nil)
	g2, _, _ := identityGate(identityCase{in: &identityInputs{config: configLog("a", "b", "c", "d", "e")}}, f)
	calls := 0
	g2.describeFn = func(context.Context) (*sarama.GroupDescription, error) {
		calls++
		if calls == 1 {
			return stableGroup(f), nil
		}
		return stableGroup(moved), nil
	}
	rep, err = g2.Check(context.Background())
	if err != nil || verdictOf(rep, "f").Verdict != VerdictUnverified {
		t.Fatalf("a group that moved on must stay unverified, got %v (%+v)", err, rep.Verdicts)
	}
}

func TestIdentityUnassignedRulePreconditions(t *testing.T) {
	// Delays and pending revocations hold connectors back in our own
	// cluster: the rule must not apply.
	cases := map[string]func(*proto.Assignment){
		"delay":   func(a *proto.Assignment) { a.Delay = 10000 },
		"revoked": func(a *proto.Assignment) { a.RevokedConnectors = []string{"b"} },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			w := worker("w", "http://w:8083/", 7, []string{"a"}, nil, mutate)
			g, registered, _ := identityGate(identityCase{in: &identityInputs{config: configLog("a", "b")}}, w)
			rep, err := g.Check(context.Background())
			if err != nil || verdictOf(rep, "w").Verdict != VerdictUnverified {
				t.Fatalf("got %v (%+v)", err, rep.Verdicts)
			}
			if *registered != 1 {
				t.Errorf("registered %d times, want 1", *registered)
			}
		})
	}
}

func TestIdentityRegistry(t *testing.T) {
	now := time.Unix(1700000000, 0)
	other := us
	other.ConfigTopic = "f-configs"
	view := &registry.View{Exists: true, Workers: []registry.Worker{
		{Cluster: us, URL: "http://mine:8083/", FirstSeen: now, LastSeen: now},
		{Cluster: other, URL: "http://f:8083/", FirstSeen: now, LastSeen: now, Host: "fhost"},
	}}
	cfg := configLog("a")
	mine := worker("mine", "http://mine:8083/", 4, []string{"a"}, nil, nil)
	t.Run("our registered worker is ours", func(t *testing.T) {
		g, _, _ := identityGate(identityCase{in: &identityInputs{config: cfg, view: view}}, mine)
		rep, err := g.Check(context.Background())
		if err != nil || verdictOf(rep, "mine").Verdict != VerdictOurs || verdictOf(rep, "mine").Rule != RuleRegistryWorker {
			t.Fatalf("got %v (%+v)", err, rep.Verdicts)
		}
	})
	t.Run("a URL registered for another cluster is foreign", func(t *testing.T) {
		// Same connector name and offsets: only the registry can tell.
		f := worker("f", "http://f:8083/", 4, []string{"a"}, nil, nil)
		g, registered, _ := identityGate(identityCase{in: &identityInputs{config: cfg, view: view}}, f)
		rep, err := g.Check(context.Background())
		if err == nil || verdictOf(rep, "f").Rule != RuleRegistryWorker || !strings.Contains(err.Error(), "f-configs") || *registered != 0 {
			t.Fatalf("got %v (%+v), %d writes", err, rep.Verdicts, *registered)
		}
	})
	claimed := &registry.View{Exists: true, Claims: []registry.Claim{{Cluster: other, Offset: 3, FirstSeen: now, URL: "http://f:8083/"}}}
	t.Run("a group claimed by another config topic is refused, even empty", func(t *testing.T) {
		g, registered, _ := identityGate(identityCase{in: &identityInputs{view: claimed}})
		g.describeFn = func(context.Context) (*sarama.GroupDescription, error) {
			return &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupEmpty}, nil
		}
		_, err := g.Check(context.Background())
		if err == nil || !strings.Contains(err.Error(), "registered to another Connect cluster") ||
			!strings.Contains(err.Error(), "CONNECT_INIT_GROUP_HANDOVER=f-configs") || *registered != 0 {
			t.Fatalf("got %v, %d writes", err, *registered)
		}
	})
	t.Run("a handover naming the owner registers", func(t *testing.T) {
		g, registered, _ := identityGate(identityCase{in: &identityInputs{view: claimed}, handover: "f-configs"})
		g.describeFn = func(context.Context) (*sarama.GroupDescription, error) {
			return &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupEmpty}, nil
		}
		if _, err := g.Check(context.Background()); err != nil || *registered != 1 {
			t.Fatalf("got %v, %d writes", err, *registered)
		}
	})
	t.Run("a lost registration race refuses", func(t *testing.T) {
		g, _, _ := identityGate(identityCase{in: &identityInputs{config: cfg}, regErr: &registry.ClaimedError{Owner: claimed.Claims[0], LostRace: true}}, mine)
		rep, err := g.Check(context.Background())
		var ge *GateError
		if !errors.As(err, &ge) || !strings.Contains(err.Error(), "landed first") {
			t.Fatalf("got %v", err)
		}
		// The fix is the claim check's, as doctor gives it.
		if want := fixOf(GroupResults(rep, "", false), checks.IDGroupRegisteredElsewhere); want == "" || ge.Fix != want {
			t.Errorf("fix %q, want the check's %q", ge.Fix, want)
		}
	})
}

// A registration that fails (no WRITE on the registry topic) is told with
// the registry-unreadable check's fix, as doctor gives it: refused under
// CONNECT_INIT_STRICT, a warning otherwise.
func TestIdentityRegisterFailureFix(t *testing.T) {
	cfg := configLog("a")
	mine := worker("mine", "http://mine:8083/", 4, []string{"a"}, nil, nil)
	denied := errors.New("kafka server: TOPIC_AUTHORIZATION_FAILED")
	for _, strict := range []bool{true, false} {
		want := fixOf(checks.Run(checks.GroupChecks(), checks.Group{GroupID: "connect-cluster", RegistryError: denied.Error(), Strict: strict}), checks.IDRegistryUnreadable)
		if want == "" {
			t.Fatal("the registry-unreadable check gave no fix")
		}
		g, _, logs := identityGate(identityCase{in: &identityInputs{config: cfg}, strict: strict, regErr: denied}, mine)
		g.describeFn = func(context.Context) (*sarama.GroupDescription, error) { // a new group: nothing to refuse before registering
			return &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupEmpty}, nil
		}
		_, err := g.Check(context.Background())
		var ge *GateError
		switch {
		case strict && (!errors.As(err, &ge) || ge.Fix != want):
			t.Errorf("strict: got %v (fix %q), want a refusal with the check's fix %q", err, fixOfGateError(ge), want)
		case !strict && err != nil:
			t.Errorf("not strict: got %v, want a start with a warning", err)
		case !strict && !strings.Contains(logs.String(), "not registered in the cluster registry") || !strict && !strings.Contains(logs.String(), "CONNECT_INIT_STRICT=true refuses"):
			t.Errorf("not strict: no warning with the check's fix in:\n%s", logs.String())
		}
	}
}

func fixOfGateError(ge *GateError) string {
	if ge == nil {
		return ""
	}
	return ge.Fix
}

func TestIdentityStatusTopicAndUnverified(t *testing.T) {
	cfg := configLog("a")
	w := worker("w", "http://w:8083/", 4, []string{"a"}, nil, nil)
	t.Run("status worker id", func(t *testing.T) {
		st := &store.StatusLog{Topic: us.StatusTopic, ByWorker: map[string][]string{"w:8083": {"status-connector-a"}}}
		g, _, _ := identityGate(identityCase{in: &identityInputs{config: cfg, status: st}}, w)
		rep, err := g.Check(context.Background())
		if err != nil || verdictOf(rep, "w").Rule != RuleStatusWorkerID || verdictOf(rep, "w").Verdict != VerdictOurs {
			t.Fatalf("got %v (%+v)", err, rep.Verdicts)
		}
	})
	t.Run("unverified warns and does not claim", func(t *testing.T) {
		g, registered, logs := identityGate(identityCase{in: &identityInputs{config: cfg, view: &registry.View{}, status: &store.StatusLog{ByWorker: map[string][]string{}}}}, w)
		claims := []bool{}
		g.registerFn = func(_ context.Context, _ registry.Cluster, claim bool) (*registry.Registration, error) {
			*registered++
			claims = append(claims, claim)
			return &registry.Registration{}, nil
		}
		rep, err := g.Check(context.Background())
		if err != nil || verdictOf(rep, "w").Verdict != VerdictUnverified {
			t.Fatalf("got %v (%+v)", err, rep.Verdicts)
		}
		for _, want := range []string{"group member not verified", "all named in our config topic", "not in the cluster registry", "w:8083 wrote no latest status",
			fixOf(GroupResults(rep, "", false), checks.IDUnverifiedGroupMember)} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("warning lacks %q: %s", want, logs.String())
			}
		}
		if len(claims) != 1 || claims[0] {
			t.Errorf("register calls (claim flags): %v", claims)
		}
	})
	t.Run("strict refuses unverified", func(t *testing.T) {
		g, registered, _ := identityGate(identityCase{in: &identityInputs{config: cfg}, strict: true}, w)
		_, err := g.Check(context.Background())
		if err == nil || !strings.Contains(err.Error(), "CONNECT_INIT_STRICT") || *registered != 0 {
			t.Fatalf("got %v, %d writes", err, *registered)
		}
	})
}

// A caller's rule that refuses before the registration (run's settings
// parity) leaves no record in the registry: the refused worker writes
// nothing.
func TestBeforeRegisterRefusalWritesNothing(t *testing.T) {
	mine := worker("mine", "http://mine:8083/", 4, []string{"a"}, nil, nil)
	view := &registry.View{Exists: true, Workers: []registry.Worker{{Cluster: us, URL: "http://mine:8083/"}}}
	g, registered, _ := identityGate(identityCase{in: &identityInputs{config: configLog("a"), view: view}}, mine)
	called := 0
	g.BeforeRegister = func(_ context.Context, rep *GroupReport) error {
		called++
		if rep == nil || len(rep.Verdicts) != 1 {
			t.Errorf("BeforeRegister got report %+v", rep)
		}
		return errors.New("settings drifted")
	}
	if _, err := g.Check(context.Background()); err == nil || err.Error() != "settings drifted" {
		t.Fatalf("want the caller's refusal, got %v", err)
	}
	if called != 1 || *registered != 0 {
		t.Errorf("BeforeRegister called %d times, registrations written %d; want 1 and 0", called, *registered)
	}
}

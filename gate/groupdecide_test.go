package gate

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/registry"
)

// Every group check that can be an error is in the gate's ordered list of
// refusals, so none is refused out of order.
func TestGroupRefusalsNameEveryErrorCheck(t *testing.T) {
	listed := map[string]bool{}
	for _, ref := range groupRefusals() {
		for _, id := range ref.ids {
			if listed[id] {
				t.Errorf("%s listed twice", id)
			}
			listed[id] = true
		}
	}
	for _, id := range errorCheckIDs() {
		if !listed[id] {
			t.Errorf("check %s is in no refusal", id)
		}
	}
}

// errorCheckIDs lists the ids of the group and member checks that can be
// an error (by severity, or escalated under CONNECT_INIT_STRICT): the
// ones the group gate can refuse on.
func errorCheckIDs() []string {
	var ids []string
	for _, c := range checks.GroupChecks() {
		if c.Severity == checks.Error || c.Escalate != nil {
			ids = append(ids, c.ID)
		}
	}
	for _, c := range checks.MemberChecks() {
		if c.Severity == checks.Error || c.Escalate != nil {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// TestGroupRefusalOrder: with every refusal holding at once (another
// cluster's claim, a foreign member, a storm, and under CONNECT_INIT_STRICT
// the registry unreadable and an unverified member), the gate refuses in
// the documented order (groupRefusals): the claim with the foreign member,
// then the foreign member, then the storm, then what is only unproven.
// Each row takes the previous refusal's cause away; the fix is always the
// refusing checks' own.
func TestGroupRefusalOrder(t *testing.T) {
	other := us
	other.ConfigTopic = "f-configs"
	rep := &GroupReport{GroupID: "connect-cluster", ConfigTopic: "_connect-configs", State: GroupStable, StableSeen: true, ConfigEndOffset: 16,
		Identity: &IdentityReport{RegistryError: "TOPIC_AUTHORIZATION_FAILED",
			ClaimedBy: &registry.Claim{Cluster: other, Offset: 3, FirstSeen: time.Unix(1700000000, 0), URL: "http://f:8083/"}},
		Foreign: []ForeignMember{{MemberID: "q1", URL: "http://q1:8083/", Reasons: []string{RuleStuckBehind},
			Message: `group member "q1" reads another config topic`}},
		Window:   &GroupWindow{Rebalances: 7, Span: 5 * time.Second, Samples: 40},
		Verdicts: []MemberVerdict{{MemberID: "w", URL: "http://w:8083/", Verdict: VerdictUnverified, Evidence: "not proven ours or foreign"}},
	}
	rows := []struct {
		name   string
		remove func(*GroupReport)
		ids    []string
		says   []string
	}{
		{"all at once", func(*GroupReport) {},
			[]string{checks.IDGroupRegisteredElsewhere, checks.IDForeignGroupMember}, []string{"registered to another Connect cluster", `"q1"`}},
		{"no claim", func(r *GroupReport) { r.Identity.ClaimedBy = nil },
			[]string{checks.IDForeignGroupMember}, []string{"1 foreign member(s)", `"q1"`, RuleStuckBehind}},
		{"no foreign member", func(r *GroupReport) { r.Foreign = nil },
			[]string{checks.IDGroupRebalanceStorm}, []string{"rebalanced 7 times", "does not join a group that does not settle"}},
		{"no storm", func(r *GroupReport) { r.Window = nil },
			[]string{checks.IDRegistryUnreadable, checks.IDUnverifiedGroupMember}, []string{"CONNECT_INIT_STRICT=true", "TOPIC_AUTHORIZATION_FAILED", `member "w"`}},
		{"registry readable", func(r *GroupReport) { r.Identity.RegistryError = "" },
			[]string{checks.IDUnverifiedGroupMember}, []string{"1 member(s) not verified"}},
		{"every member verified", func(r *GroupReport) { r.Verdicts = nil }, nil, nil},
	}
	for _, row := range rows {
		row.remove(rep)
		rs := GroupResults(rep, "", true)
		err := decideGroup(rep, rs)
		if row.ids == nil {
			if err != nil {
				t.Errorf("%s: refused: %v", row.name, err)
			}
			continue
		}
		var ge *GateError
		if !errors.As(err, &ge) || ge.Gate != "group" {
			t.Fatalf("%s: want a group refusal, got %v", row.name, err)
		}
		var want []checks.Result
		for _, id := range row.ids {
			for _, r := range checks.Errors(rs) {
				if r.ID == id {
					want = append(want, r)
				}
			}
		}
		if len(want) == 0 {
			t.Fatalf("%s: no %v error in %+v", row.name, row.ids, rs)
		}
		if ge.Fix != joinFixes(want) {
			t.Errorf("%s: fix %q, want the fix of %v: %q", row.name, ge.Fix, row.ids, joinFixes(want))
		}
		for _, s := range row.says {
			if !strings.Contains(ge.Err.Error(), s) {
				t.Errorf("%s: refusal lacks %q: %v", row.name, s, ge.Err)
			}
		}
		// What a later refusal would say is not in this one.
		if slices.Contains(row.ids, checks.IDForeignGroupMember) && strings.Contains(ge.Err.Error(), "did not settle") {
			t.Errorf("%s: the storm told beside the foreign member: %v", row.name, ge.Err)
		}
	}
}

// Several fixes are each named by their check id, in the refusal's order;
// one fix is given as it is.
func TestJoinFixes(t *testing.T) {
	a := checks.Result{ID: "a", Fix: "do a"}
	b := checks.Result{ID: "b", Fix: "do b"}
	if got := joinFixes([]checks.Result{a, a}); got != "do a" {
		t.Errorf("one fix: %q", got)
	}
	if got := joinFixes([]checks.Result{a, b, a}); got != "[a] do a; [b] do b" {
		t.Errorf("two fixes: %q", got)
	}
}

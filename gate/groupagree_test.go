package gate_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/doctor"
	"github.com/connect-init/connect-init/gate"
)

// groupRuleIDs are the ids of the group rules (checks.GroupChecks() and
// checks.MemberChecks()).
func groupRuleIDs() map[string]bool {
	m := map[string]bool{}
	for _, c := range checks.GroupChecks() {
		m[c.ID] = true
	}
	for _, c := range checks.MemberChecks() {
		m[c.ID] = true
	}
	return m
}

// TestGroupGateAndDoctorAgree: over the same worker group, the group gate
// refuses exactly when doctor reports an error of a group rule, with and
// without CONNECT_INIT_STRICT, and doctor's group findings are the rules'
// results (same id, subject and severity) for the report the gate made.
func TestGroupGateAndDoctorAgree(t *testing.T) {
	want := map[string][2]bool{ // refused without, with CONNECT_INIT_STRICT
		"our registered worker":                                   {false, false},
		"a connector our config topic does not define":            {true, true},
		"a URL registered for another cluster":                    {true, true},
		"claimed by another cluster":                              {true, true},
		"claimed, and handed over":                                {false, false},
		"an unverified member":                                    {false, true},
		"the registry unreadable":                                 {false, true},
		"a group that never settles":                              {false, false},
		"claimed, handed over, the old cluster's worker still in": {true, true},
		"a group that rebalances without settling":                {true, true},
		"a member behind that no rule judges before the timeout":  {true, true},
	}
	ids := groupRuleIDs()
	scenarios := gate.GroupScenarios()
	if len(scenarios) != len(want) {
		t.Fatalf("%d scenarios, %d expectations", len(scenarios), len(want))
	}
	for _, sc := range scenarios {
		for i, strict := range []bool{false, true} {
			rep, err := sc.Gate(strict).Check(context.Background())
			if rep == nil {
				t.Fatalf("%s (strict %v): no report: %v", sc.Name, strict, err)
			}
			if refused := err != nil; refused != want[sc.Name][i] {
				t.Errorf("%s (strict %v): gate refused=%v (%v), want %v", sc.Name, strict, refused, err, want[sc.Name][i])
			}
			var docErrs, docAll []string
			for _, f := range doctor.Diagnose(&doctor.Snapshot{GroupID: rep.GroupID, Group: rep, Strict: strict, Handover: sc.Handover}) {
				if !ids[f.ID] {
					continue
				}
				docAll = append(docAll, f.ID+" "+f.Subject+" "+string(f.Severity))
				if f.Severity == checks.Error {
					docErrs = append(docErrs, f.ID)
				}
			}
			if (err != nil) != (len(docErrs) > 0) {
				t.Errorf("%s (strict %v): gate error %v, doctor's group errors %v", sc.Name, strict, err, docErrs)
			}
			var rules []string
			for _, r := range gate.GroupResults(rep, sc.Handover, strict) {
				rules = append(rules, r.ID+" "+r.Subject+" "+string(r.Severity))
			}
			slices.Sort(docAll)
			slices.Sort(rules)
			if !slices.Equal(docAll, rules) {
				t.Errorf("%s (strict %v): doctor %v, rules %v", sc.Name, strict, docAll, rules)
			}
		}
	}
}

// TestGroupRefusalFixIsDoctors: for each group check id the gate refuses
// on, the refusal's fix is the fix doctor reports for that id over the
// same group (the same checks.Check definitions), word for word.
func TestGroupRefusalFixIsDoctors(t *testing.T) {
	cases := []struct {
		id, scenario string
		strict       bool
	}{
		{checks.IDGroupRegisteredElsewhere, "claimed by another cluster", false},
		{checks.IDGroupRegisteredElsewhere, "claimed, handed over, the old cluster's worker still in", false},
		{checks.IDForeignGroupMember, "a connector our config topic does not define", false},
		{checks.IDForeignGroupMember, "a URL registered for another cluster", true},
		{checks.IDForeignGroupMember, "claimed, handed over, the old cluster's worker still in", false},
		{checks.IDGroupRebalanceStorm, "a group that rebalances without settling", false},
		{checks.IDMemberBehindUnjudged, "a member behind that no rule judges before the timeout", false},
		{checks.IDRegistryUnreadable, "the registry unreadable", true},
		{checks.IDUnverifiedGroupMember, "an unverified member", true},
	}
	// Every group check that can be an error has a case.
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.id] = true
	}
	for _, id := range gate.ErrorCheckIDs() {
		if !covered[id] {
			t.Errorf("no case for check %s", id)
		}
	}
	scenarios := map[string]gate.GroupScenario{}
	for _, sc := range gate.GroupScenarios() {
		scenarios[sc.Name] = sc
	}
	ids := groupRuleIDs()
	for _, c := range cases {
		t.Run(c.id+"/"+c.scenario, func(t *testing.T) {
			sc, ok := scenarios[c.scenario]
			if !ok {
				t.Fatalf("no scenario %q", c.scenario)
			}
			rep, err := sc.Gate(c.strict).Check(context.Background())
			var ge *gate.GateError
			if !errors.As(err, &ge) || ge.Gate != "group" || rep == nil {
				t.Fatalf("want a group refusal, got %v", err)
			}
			var fixes []string // doctor's distinct fixes of the group rules' errors
			found := false
			for _, f := range doctor.Diagnose(&doctor.Snapshot{GroupID: rep.GroupID, Group: rep, Strict: c.strict, Handover: sc.Handover}) {
				if !ids[f.ID] || f.Severity != checks.Error {
					continue
				}
				if !slices.Contains(fixes, f.Fix) {
					fixes = append(fixes, f.Fix)
				}
				if f.ID != c.id {
					continue
				}
				found = true
				if f.Fix == "" || !strings.Contains(ge.Fix, f.Fix) {
					t.Errorf("doctor's fix for %s:\n  %s\nis not the refusal's:\n  %s", c.id, f.Fix, ge.Fix)
				}
				if !strings.Contains(err.Error(), "; fix: "+ge.Fix) {
					t.Errorf("the refusal's text does not end on its fix: %s", err)
				}
			}
			if !found {
				t.Fatalf("doctor reports no %s error", c.id)
			}
			if len(fixes) == 1 && ge.Fix != fixes[0] {
				t.Errorf("refusal fix %q, doctor's %q", ge.Fix, fixes[0])
			}
		})
	}
}

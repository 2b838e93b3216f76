package gate_test

import (
	"context"
	"slices"
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
		"our registered worker":                        {false, false},
		"a connector our config topic does not define": {true, true},
		"a URL registered for another cluster":         {true, true},
		"claimed by another cluster":                   {true, true},
		"claimed, and handed over":                     {false, false},
		"an unverified member":                         {false, true},
		"the registry unreadable":                      {false, true},
		"a group that never settles":                   {false, false},
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

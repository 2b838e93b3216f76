package doctor

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/checks"
)

var update = flag.Bool("update", false, "rewrite examples/monitoring/connect-init.rules.yml from AlertRules")

const rulesPath = "../examples/monitoring/connect-init.rules.yml"

// The shipped rules file is AlertRules rendered: a fix changed in package
// checks changes the alert's summary, or this test fails until the file is
// regenerated.
func TestRulesFile(t *testing.T) {
	want, err := RulesFile()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(rulesPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(rulesPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Errorf("%s differs from doctor.AlertRules: run go test ./doctor -run TestRulesFile -update and review the change", rulesPath)
	}
}

// Each rule that names a check carries that check's fix, as doctor prints
// it for the same condition.
func TestAlertFixesAreTheChecks(t *testing.T) {
	s := healthy()
	s.Topics.Topics[2].CleanupPolicy = "delete"
	s.Coordinator.ISR = []int32{2}
	fixes := map[string]string{}
	for _, f := range Diagnose(s) {
		fixes[f.ID] = f.Fix
	}
	byCheck := map[string]AlertRule{}
	for _, r := range AlertRules() {
		if r.Check != "" {
			byCheck[r.Check+"/"+r.Severity] = r
		}
	}
	if got, want := byCheck[checks.IDConsumerOffsetsSingle+"/warning"].Fix, fixes[checks.IDConsumerOffsetsSingle]; got != want || want == "" {
		t.Errorf("coordinator alert fix %q, doctor's %q", got, want)
	}
	nc := byCheck[checks.IDTopicNotCompacted+"/critical"].Fix
	if want := strings.ReplaceAll(fixes[checks.IDTopicNotCompacted], " s ", " {{ $labels.topic }} "); nc != want {
		t.Errorf("not-compacted alert fix %q, doctor's (with the topic templated) %q", nc, want)
	}
	for _, r := range AlertRules() {
		if r.Fix == "" || r.Summary == "" || r.For == 0 {
			t.Errorf("%s: summary, fix and for are all needed: %+v", r.Alert, r)
		}
	}
}

package doctor

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/metrics"
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
	nc := byCheck[checks.IDTopicNotCompacted+"/warning"].Fix
	if want := strings.ReplaceAll(fixes[checks.IDTopicNotCompacted], " s ", " {{ $labels.topic }} "); nc != want {
		t.Errorf("not-compacted alert fix %q, doctor's (with the topic templated) %q", nc, want)
	}
	for _, r := range AlertRules() {
		if r.Fix == "" || r.Summary == "" || r.For == 0 {
			t.Errorf("%s: summary, fix and for are all needed: %+v", r.Alert, r)
		}
	}
}

const rulesTestPath = "../examples/monitoring/connect-init.rules.test.yml"

// Every generated rule, the catch-alls and the watcher's own included,
// has a promtool test that expects it to fire: a rule added without one
// fails here.
func TestEveryRuleIsTested(t *testing.T) {
	tests, err := os.ReadFile(rulesTestPath)
	if err != nil {
		t.Fatal(err)
	}
	missing, err := metrics.UntestedRules(AlertRules(), tests)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range missing {
		t.Errorf("%s: no test of %s expects it to fire: add one", a, rulesTestPath)
	}
}

// The catch-alls leave every check that has a rule of its own to that
// rule (one page per incident), and cover every other check of the
// catalog, a check added later included, with no edit of the rules.
func TestCatchAllsLeaveOwnRules(t *testing.T) {
	rules := AlertRules()
	own := map[string]bool{}
	var catchAlls []AlertRule
	for _, r := range rules {
		if r.Check != "" {
			own[r.Check] = true
		}
		if strings.HasPrefix(r.Alert, "ConnectInitDoctor") {
			catchAlls = append(catchAlls, r)
		}
	}
	if len(catchAlls) != 2 {
		t.Fatalf("%d catch-all rules, want the error and the warning one", len(catchAlls))
	}
	matcher := regexp.MustCompile(`check!~"([^"]*)"`)
	for _, r := range catchAlls {
		m := matcher.FindStringSubmatch(r.Expr)
		if m == nil {
			t.Fatalf("%s: no check!~ matcher in %s", r.Alert, r.Expr)
		}
		excluded := regexp.MustCompile("^(?:" + m[1] + ")$")
		for id := range findingSeverities() {
			if got := excluded.MatchString(id); got != own[id] {
				t.Errorf("%s: check %s excluded %v, has a rule of its own %v", r.Alert, id, got, own[id])
			}
		}
		if excluded.MatchString("settings-parity-new-check") {
			t.Errorf("%s: a new check id would be left out: %s", r.Alert, m[1])
		}
	}
}

// Standing misconfigurations warn; what stops Connect now pages.
func TestRuleSeverities(t *testing.T) {
	want := map[string]string{"ConnectInitConfigTopicPartitions": "warning", "ConnectInitInternalTopicNotCompacted": "warning",
		"ConnectInitRebalanceStorm": "critical", "ConnectInitForeignGroupMember": "critical", "ConnectInitCoordinatorNotAvailable": "critical",
		"ConnectInitLooksFailing": "critical", "ConnectInitWatcherAbsent": "warning"}
	for _, r := range AlertRules() {
		if w, ok := want[r.Alert]; ok && r.Severity != w {
			t.Errorf("%s: severity %s, want %s", r.Alert, r.Severity, w)
		}
		delete(want, r.Alert)
	}
	for a := range want {
		t.Errorf("no rule %s", a)
	}
}

// The watcher's job is named in one place: every rule that reads up or
// absent() uses the selector given.
func TestWatcherSelector(t *testing.T) {
	const sel = `job="monitoring/connect-init-doctor"`
	n := 0
	for _, r := range AlertRulesFor(sel) {
		if strings.Contains(r.Expr, "up{") || strings.Contains(r.Expr, "absent(") {
			n++
			if !strings.Contains(r.Expr, sel) || strings.Contains(r.Expr, WatcherSelector) {
				t.Errorf("%s: %s does not use the selector %s", r.Alert, r.Expr, sel)
			}
		}
	}
	if n < 2 {
		t.Errorf("%d rules read the watcher's job, want the absent and the down rule", n)
	}
}

// Every rule's runbook_url points to a section of docs/runbooks.md.
func TestRunbooks(t *testing.T) {
	md, err := os.ReadFile("../docs/runbooks.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range metrics.MissingRunbooks(AlertRules(), md) {
		t.Errorf("%s: docs/runbooks.md has no section ## %s (its runbook_url's anchor)", a, a)
	}
}

const prometheusRulePath = "../examples/kubernetes/prometheus-operator/prometheusrule.yaml"

// The Kubernetes example's PrometheusRule is AlertRules rendered for the
// PodMonitor's job.
func TestPrometheusRuleFile(t *testing.T) {
	want, err := PrometheusRuleFile(KubernetesNamespace, KubernetesWatcher)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(prometheusRulePath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(prometheusRulePath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(prometheusRulePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Errorf("%s differs from doctor.AlertRulesFor: run go test ./doctor -run TestPrometheusRuleFile -update and review the change", prometheusRulePath)
	}
	if !strings.Contains(string(want), `absent(connect_init_doctor_look_success{job="kafka-connect/connect-init-doctor"})`) {
		t.Errorf("the PrometheusRule does not select the PodMonitor's job:\n%s", want)
	}
}

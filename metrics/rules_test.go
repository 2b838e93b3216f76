package metrics

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// A rule renders with its summary, a description ending in the fix, its
// runbook_url and the doctor check; the severity is a label.
func TestRulesFileAnnotations(t *testing.T) {
	out, err := RulesFile("g", "line one\nline two", []Rule{{Alert: "ConnectInitX", Expr: "up == 0", For: 90 * time.Second, Severity: Warning,
		Check: "x-check", Summary: "x is {{ $value }}", Fix: "do y"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# line one\n# line two\n", "alert: ConnectInitX", "for: 90s", "severity: warning", "summary: x is {{ $value }}",
		"description: 'x is {{ $value }}; fix: do y'", "runbook_url: " + RunbookBase + "#connectinitx", "doctor_check: x-check"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("rules file lacks %q:\n%s", want, out)
		}
	}
}

// A rule no test expects to fire is named; an empty expectation (the
// rule stays quiet) does not count as its test.
func TestUntestedRules(t *testing.T) {
	tests := []byte(`
tests:
  - alert_rule_test:
      - alertname: A
        exp_alerts:
          - exp_labels: {severity: critical}
      - alertname: B
        exp_alerts: []
`)
	got, err := UntestedRules([]Rule{{Alert: "A"}, {Alert: "B"}, {Alert: "C"}}, tests)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"B", "C"}) {
		t.Errorf("untested %v, want [B C]", got)
	}
	if _, err := UntestedRules(nil, []byte("tests: [")); err == nil {
		t.Error("a broken test file was read")
	}
}

// A runbook section is found by GitHub's heading id.
func TestMissingRunbooks(t *testing.T) {
	md := []byte("# Runbooks\n\n## ConnectInitA\ntext ## ConnectInitB\n### ConnectInitC\n")
	got := MissingRunbooks([]Rule{{Alert: "ConnectInitA"}, {Alert: "ConnectInitB"}, {Alert: "ConnectInitC"}}, md)
	if !slices.Equal(got, []string{"ConnectInitB"}) {
		t.Errorf("missing %v, want [ConnectInitB]", got)
	}
}

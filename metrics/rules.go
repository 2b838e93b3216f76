package metrics

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Rule is one Prometheus alerting rule over connect-init's metrics. The
// watchers' rules (doctor.AlertRules, apply.AlertRules) are written as
// Rules and rendered by RulesFile, so that every rule carries the same
// annotations: a summary (the condition), a description (the condition and
// its fix), and a runbook_url into docs/runbooks.md.
type Rule struct {
	Alert string
	Expr  string
	For   time.Duration
	// Severity is the rule's severity label: critical (pages: Connect
	// stops, or will at the next start) or warning (a risk, or a gap in
	// what is watched).
	Severity string
	// Check is the doctor check whose fix the rule carries, and which the
	// catch-all rules leave to it ("" for the others).
	Check string
	// Summary is the condition, with Prometheus templates; Fix what to do.
	Summary string
	Fix     string
}

// RunbookBase is where docs/runbooks.md is read; each rule's runbook_url
// is its section there (Runbook).
const RunbookBase = "https://github.com/connect-init/connect-init/blob/main/docs/runbooks.md"

// Anchor is the rule's section id in docs/runbooks.md: its alert name in
// lower case, the id GitHub gives the heading "## AlertName".
func (r Rule) Anchor() string { return strings.ToLower(r.Alert) }

// Runbook is the rule's runbook_url.
func (r Rule) Runbook() string { return RunbookBase + "#" + r.Anchor() }

// Severities are the rules' severity labels.
const (
	Critical = "critical"
	Warning  = "warning"
)

// RuleGroup is a rule group as Prometheus' rules files and the
// Prometheus operator's PrometheusRule spell it.
type RuleGroup struct {
	Name  string         `yaml:"name"`
	Rules []renderedRule `yaml:"rules"`
}

type renderedRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for,omitempty"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// Group renders rules as the group name.
func Group(name string, rules []Rule) RuleGroup {
	g := RuleGroup{Name: name}
	for _, r := range rules {
		ann := map[string]string{"summary": r.Summary, "description": r.Summary + "; fix: " + r.Fix, "runbook_url": r.Runbook()}
		if r.Check != "" {
			ann["doctor_check"] = r.Check
		}
		g.Rules = append(g.Rules, renderedRule{Alert: r.Alert, Expr: r.Expr, For: PromDuration(r.For), Labels: map[string]string{"severity": r.Severity}, Annotations: ann})
	}
	return g
}

// RulesFile renders rules as a Prometheus rules file of one group named
// group, after the comment lines of header.
func RulesFile(group, header string, rules []Rule) ([]byte, error) {
	return YAML(header, map[string]any{"groups": []RuleGroup{Group(group, rules)}})
}

// YAML is doc in YAML (two-space indent) after the comment lines of
// header: the form of every generated file of examples/.
func YAML(header string, doc any) ([]byte, error) {
	var b bytes.Buffer
	for _, l := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		b.WriteString("# " + l + "\n")
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("render the rules: %w", err)
	}
	return b.Bytes(), nil
}

// PromDuration is d as Prometheus writes it (1m, 30s, 5m).
func PromDuration(d time.Duration) string {
	switch {
	case d == 0:
		return ""
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}

// UntestedRules lists the rules that no test of testFile (a promtool
// test rules file) expects to fire: each rule needs an alert_rule_test
// with at least one expected alert, so a rule added without its test is
// named here (and the examples' tests fail).
func UntestedRules(rules []Rule, testFile []byte) ([]string, error) {
	var doc struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string           `yaml:"alertname"`
				ExpAlerts []map[string]any `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	if err := yaml.Unmarshal(testFile, &doc); err != nil {
		return nil, fmt.Errorf("read the rule tests: %w", err)
	}
	fires := map[string]bool{}
	for _, t := range doc.Tests {
		for _, a := range t.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			}
		}
	}
	var missing []string
	for _, r := range rules {
		if !fires[r.Alert] {
			missing = append(missing, r.Alert)
		}
	}
	sort.Strings(missing)
	return missing, nil
}

// MissingRunbooks lists the rules whose runbook section (Anchor) is not a
// heading of markdown (docs/runbooks.md), by the ids GitHub gives
// headings: lower case, punctuation but hyphens dropped, spaces as hyphens.
func MissingRunbooks(rules []Rule, markdown []byte) []string {
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(markdown), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#"))) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	var missing []string
	for _, r := range rules {
		if !anchors[r.Anchor()] {
			missing = append(missing, r.Alert)
		}
	}
	return missing
}

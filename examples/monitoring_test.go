package examples

import (
	"os/exec"
	"strings"
	"testing"
)

// promtool is Debian's prometheus package's tool; .ci/install-prometheus
// installs it (make deps), so a machine without it fails here rather than
// passing with the shipped rules untested.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool is not installed: run bash .ci/install-prometheus (make deps): %v", err)
	}
	return p
}

// The shipped alert rules are valid, and their unit tests (which alert
// fires after how long on which series, with which summary) pass; the
// example Prometheus configuration loads them.
func TestMonitoringRules(t *testing.T) {
	tool := promtool(t)
	for _, args := range [][]string{
		{"check", "rules", "monitoring/connect-init.rules.yml"},
		{"test", "rules", "monitoring/connect-init.rules.test.yml"},
		{"check", "config", "monitoring/prometheus.yml"},
	} {
		out, err := exec.Command(tool, args...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

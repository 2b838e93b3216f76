package examples

import (
	"os/exec"
	"slices"
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

// The shipped alert rules, doctor's and apply's, are valid, and their unit
// tests (which alert fires after how long on which series, with which
// annotations) pass; the example Prometheus configuration loads them.
func TestMonitoringRules(t *testing.T) {
	tool := promtool(t)
	for _, args := range [][]string{
		{"check", "rules", "monitoring/connect-init.rules.yml"},
		{"test", "rules", "monitoring/connect-init.rules.test.yml"},
		{"check", "rules", "monitoring/connect-init-apply.rules.yml"},
		{"test", "rules", "monitoring/connect-init-apply.rules.test.yml"},
		{"check", "config", "monitoring/prometheus.yml"},
	} {
		out, err := exec.Command(tool, args...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// The watcher of the Compose and Swarm examples: one service per Connect
// cluster running connect-init doctor --watch --metrics-addr on the port
// the scrape config names, one replica, no lock and no exec (it is not a
// worker), with the workers' Connect cluster settings.
func TestWatcherService(t *testing.T) {
	prom := loadYAML(t, "monitoring/prometheus.yml")[0]
	var targets []string
	for _, sc := range asList(prom["scrape_configs"]) {
		if asString(asMap(sc)["job_name"]) != "connect-init-doctor" {
			continue
		}
		for _, st := range asList(asMap(sc)["static_configs"]) {
			targets = append(targets, stringList(asMap(st)["targets"])...)
		}
	}
	for _, file := range []string{"compose/docker-compose.yml", "swarm/stack.yml"} {
		doc := loadYAML(t, file)[0]
		svcs := composeServices(t, file, doc, loadDockerfile(t))
		watchers := servicesByRole(svcs, "doctor")
		if len(watchers) != 1 {
			t.Fatalf("%s: %d services run connect-init doctor, want one watcher", file, len(watchers))
		}
		w := watchers[0]
		args := strings.Join(invocations(w.argv)[0], " ")
		for _, want := range []string{"--watch", "--metrics-addr=:9465"} {
			if !strings.Contains(args, want) {
				t.Errorf("%s: connect-init %s lacks %s", w, args, want)
			}
		}
		if strings.Contains(args, " -- ") {
			t.Errorf("%s: the watcher execs nothing, yet runs %q", w, args)
		}
		if !slices.Contains(targets, w.name+":9465") {
			t.Errorf("%s: the scrape config's targets %v do not name %s:9465", w, targets, w.name)
		}
		spec := asMap(asMap(doc["services"])[w.name])
		if n, ok := asInt(dig(spec, "deploy", "replicas")); ok && n != 1 {
			t.Errorf("%s: %d replicas, want 1 (one watcher per Connect cluster)", w, n)
		}
		if w.env["CONNECT_INIT_LOCK"] == "false" {
			t.Errorf("%s: CONNECT_INIT_LOCK=false hides the startup lock's queue from the watcher", w)
		}
		workers := servicesByRole(svcs, "run")
		if len(workers) == 0 || w.env["CONNECT_GROUP_ID"] != workers[0].env["CONNECT_GROUP_ID"] {
			t.Errorf("%s: watches group %q, the workers are in %q", w, w.env["CONNECT_GROUP_ID"], workers[0].env["CONNECT_GROUP_ID"])
		}
	}
}

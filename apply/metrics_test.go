package apply

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/connect-init/connect-init/metrics"
)

// The watcher's metrics show a FAILED task and count its restart, and the
// exposition passes Prometheus' own lint.
func TestWatchMetrics(t *testing.T) {
	d := conn("a", "", "connector.class", "C")
	failed := func(string) *Status {
		st := running("a")
		st.Tasks[0].State = "FAILED"
		return st
	}
	f := &fakeConnect{configs: map[string]map[string]string{"a": d.Config}, status: failed}
	m := NewMetrics()
	m.SetGroupID("g1")
	watchFake(t, f, []Connector{d}, WatchOptions{Interval: time.Second, RestartUnit: time.Hour, MaxRestarts: 3, Metrics: m},
		func(l string) bool { return strings.Contains(l, "watch: restarted") })
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", err, problems)
	}
	want := `
# HELP connect_init_apply_restarts_total Restarts the watcher made of a connector's failed instances (POST /connectors/<name>/restart).
# TYPE connect_init_apply_restarts_total counter
connect_init_apply_restarts_total{connector="a",group_id="g1"} 1
# HELP connect_init_apply_last_look_success Whether the active watcher's last read of the connectors succeeded (1) or failed (0).
# TYPE connect_init_apply_last_look_success gauge
connect_init_apply_last_look_success{group_id="g1"} 1
# HELP connect_init_apply_active Whether this watcher is the one that acts (1) or stands by (0).
# TYPE connect_init_apply_active gauge
connect_init_apply_active{group_id="g1"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "connect_init_apply_restarts_total", "connect_init_apply_last_look_success", "connect_init_apply_active"); err != nil {
		t.Error(err)
	}
	// Served over HTTP: the task's FAILED series is 1, its RUNNING 0.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := ServeMetrics(ctx, "127.0.0.1:0", m)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range []string{`connect_init_apply_task_state{connector="a",group_id="g1",state="FAILED",task="0"} 1`, `connect_init_apply_task_state{connector="a",group_id="g1",state="RUNNING",task="0"} 0`,
		`connect_init_apply_connector_state{connector="a",group_id="g1",state="RUNNING"} 1`} {
		if !strings.Contains(string(body), line) {
			t.Errorf("scrape lacks %s:\n%s", line, body)
		}
	}
	if _, err := ServeMetrics(ctx, addr.String(), m); err == nil {
		t.Error("a second server on the same address did not fail")
	}
}

// A watcher that acted and then stands by (its worker is no longer the
// group's leader) shows only that it stands by, and its counters: the
// FAILED task it saw is the new leader's watcher's to tell, which may have
// restarted it.
func TestStandbyWatcherExportsNoState(t *testing.T) {
	d := conn("a", "", "connector.class", "C")
	failed := func(string) *Status {
		st := running("a")
		st.Tasks[0].State = "FAILED"
		return st
	}
	f := &fakeConnect{configs: map[string]map[string]string{"a": d.Config}, status: failed}
	m := NewMetrics()
	m.SetGroupID("g1")
	var mu sync.Mutex
	asked := 0
	active := func(context.Context) (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		asked++
		if asked <= 2 {
			return true, "this worker is the group's leader"
		}
		return false, "the group's leader is another worker"
	}
	watchFake(t, f, []Connector{d}, WatchOptions{Interval: time.Second, RestartUnit: time.Hour, MaxRestarts: 3, Active: active, Metrics: m},
		func(l string) bool { return strings.Contains(l, "watch: standing by") })
	want := `
# HELP connect_init_apply_active Whether this watcher is the one that acts (1) or stands by (0).
# TYPE connect_init_apply_active gauge
connect_init_apply_active{group_id="g1"} 0
# HELP connect_init_apply_restarts_total Restarts the watcher made of a connector's failed instances (POST /connectors/<name>/restart).
# TYPE connect_init_apply_restarts_total counter
connect_init_apply_restarts_total{connector="a",group_id="g1"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "connect_init_apply_active", "connect_init_apply_restarts_total"); err != nil {
		t.Error(err)
	}
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if n := mf.GetName(); strings.HasPrefix(n, "connect_init_apply_") && n != "connect_init_apply_active" && n != "connect_init_apply_restarts_total" {
			t.Errorf("a watcher standing by exports %s", n)
		}
	}
}

var update = flag.Bool("update", false, "rewrite examples/monitoring/connect-init-apply.rules.yml from AlertRules")

const (
	rulesPath     = "../examples/monitoring/connect-init-apply.rules.yml"
	rulesTestPath = "../examples/monitoring/connect-init-apply.rules.test.yml"
)

// The shipped rules file is AlertRules rendered.
func TestRulesFile(t *testing.T) {
	want, err := RulesFile()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(rulesPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Errorf("%s differs from apply.AlertRules: run go test ./apply -run TestRulesFile -update and review the change", rulesPath)
	}
}

// Every generated rule has a promtool test that expects it to fire.
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
	for _, r := range AlertRules() {
		if r.Summary == "" || r.Fix == "" || r.For == 0 || r.Severity == "" {
			t.Errorf("%s: summary, fix, for and severity are all needed", r.Alert)
		}
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

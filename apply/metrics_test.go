package apply

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
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
	watchFake(t, f, []Connector{d}, WatchOptions{Interval: time.Second, RestartUnit: time.Hour, MaxRestarts: 3, Metrics: m},
		func(l string) bool { return strings.Contains(l, "watch: restarted") })
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", err, problems)
	}
	want := `
# HELP connect_init_watch_restarts_total Restarts the watcher made of a connector's failed instances (POST /connectors/<name>/restart).
# TYPE connect_init_watch_restarts_total counter
connect_init_watch_restarts_total{connector="a"} 1
# HELP connect_init_watch_last_look_success Whether the watcher's last read of the connectors succeeded (1) or failed (0).
# TYPE connect_init_watch_last_look_success gauge
connect_init_watch_last_look_success 1
# HELP connect_init_watch_active Whether this watcher is the one that acts (1) or stands by (0).
# TYPE connect_init_watch_active gauge
connect_init_watch_active 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "connect_init_watch_restarts_total", "connect_init_watch_last_look_success", "connect_init_watch_active"); err != nil {
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
	for _, line := range []string{`connect_init_watch_task_state{connector="a",state="FAILED",task="0"} 1`, `connect_init_watch_task_state{connector="a",state="RUNNING",task="0"} 0`,
		`connect_init_watch_connector_state{connector="a",state="RUNNING"} 1`} {
		if !strings.Contains(string(body), line) {
			t.Errorf("scrape lacks %s:\n%s", line, body)
		}
	}
	if _, err := ServeMetrics(ctx, addr.String(), m); err == nil {
		t.Error("a second server on the same address did not fail")
	}
}

//go:build integration

package monitoring

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
)

// TestDashboardQueries runs every query of the shipped Grafana dashboard
// (examples/monitoring/connect-init.dashboard.json) against a real
// Prometheus scraping a real watcher and a real apply --watch: a worker
// of the group runs, the startup lock's topic exists, apply keeps a sink
// whose task fails (so it restarts it). Each query, with the dashboard's
// variables at their "All" value, must return series: a panel that reads
// a metric under a wrong name, or a label no series carries, fails here.
func TestDashboardQueries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	g, _ := groupOn(t, "dash", 2)
	props := topicsOf(g, "d")
	w := startWorker(ctx, t, "d", props)
	// A lock topic of this test's own: the package's other tests expect
	// the default one not to exist.
	lockTopic := g + "-lock"
	createLockTopic(t, lockTopic)
	watcher := startWatcher(t, g, append(watcherEnv(t, props), "CONNECT_INIT_LOCK_TOPIC="+lockTopic), time.Second)

	dir := filepath.Join(t.TempDir(), "connectors")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sink := fmt.Sprintf(`{"name": "dash-broken", "config": {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "topics": %q, "file": "/nonexistent-dir-dashboard-itest/out.txt"}}`, g+"-in")
	if err := os.WriteFile(filepath.Join(dir, "dash-broken.json"), []byte(sink), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := testbed.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	applyAddr := fmt.Sprintf("127.0.0.1:%d", port)
	ap, err := testbed.StartProcess("apply-dashboard", []string{binary, "apply", "--url", w.Spec.RESTURL, "--dir", dir, "--wait=20s", "--watch",
		"--watch-interval=1s", "--restart-backoff=1s", "--max-restarts=2", "--metrics-addr=" + applyAddr}, testbed.BaseEnv(), t.TempDir(), filepath.Join(t.TempDir(), "apply.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ap.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("apply log:\n%s", testbed.Tail(ap.Log(), 4000))
		}
	})

	p := startPrometheusJobs(t, map[string]string{
		"connect-init-doctor": strings.TrimSuffix(strings.TrimPrefix(watcher.url, "http://"), "/metrics"),
		"connect-init-apply":  applyAddr,
	})
	queries := dashboardQueries(t)
	start := time.Now()
	var empty []string
	for {
		empty = empty[:0]
		for title, qs := range queries {
			for _, q := range qs {
				if p.series(t, q) == 0 {
					empty = append(empty, title+": "+q)
				}
			}
		}
		if len(empty) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d dashboard queries return no series on the real scrape:\n%s", len(empty), strings.Join(empty, "\n"))
		case <-time.After(time.Second):
		}
	}
	n := 0
	for _, qs := range queries {
		n += len(qs)
	}
	t.Logf("all %d queries of %d panels return series, %s after Prometheus started", n, len(queries), time.Since(start).Round(100*time.Millisecond))
}

// dashboardQueries are the shipped dashboard's queries by panel title,
// with its variables at their "All" value and $__rate_interval a minute.
func dashboardQueries(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile("../../examples/monitoring/connect-init.dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, p := range doc.Panels {
		if p.Type == "row" {
			continue
		}
		for _, tg := range p.Targets {
			q := strings.NewReplacer(`"$group_id"`, `".*"`, "$__rate_interval", "1m").Replace(tg.Expr)
			if strings.Contains(q, "$") {
				t.Fatalf("panel %s: a variable the test does not know in %s", p.Title, q)
			}
			out[p.Title] = append(out[p.Title], q)
		}
	}
	if len(out) < 10 {
		t.Fatalf("read only %d panels", len(out))
	}
	return out
}

// series is how many series an instant query returns (an error fails the
// test: a query Prometheus refuses is a broken panel).
func (p *prometheus) series(t *testing.T, q string) int {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/query?query=" + urlQuery(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.Status != "success" {
		t.Fatalf("query %s: %s", q, doc.Error)
	}
	return len(doc.Data.Result)
}

// createLockTopic creates the startup lock's topic as the lock would (one
// partition, compacted, the broker's time), so that the watcher reads its
// queue; one that exists already is fine.
func createLockTopic(t *testing.T, topic string) {
	t.Helper()
	admin, err := sarama.NewClusterAdmin(strings.Split(cluster.Bootstrap(), ","), saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	compact, logAppend := "compact", "LogAppendTime"
	err = admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 3,
		ConfigEntries: map[string]*string{"cleanup.policy": &compact, "message.timestamp.type": &logAppend}}, false)
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
}

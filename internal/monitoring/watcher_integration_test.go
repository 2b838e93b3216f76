//go:build integration

package monitoring

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/connect-init/connect-init/internal/testbed"
)

func urlQuery(q string) string { return url.QueryEscape(q) }

// TestWatcherScrape is the watcher against the real cluster, short enough
// for CI (about a minute with the cluster): connect-init prepare creates a
// Connect cluster's topics, doctor --watch --metrics-addr serves the looks,
// promlint finds nothing on a real scrape, the figures are the cluster's,
// each look's Kafka requests are counted, and a real Prometheus scraping it
// with the shipped rules puts the single-replica coordinator partition of
// this cluster (offsets.topic.replication.factor=1) in the pending state
// of its rule: the rule reads the watcher's series as they are served.
func TestWatcherScrape(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	g, partition := groupOn(t, "scrape", 2)
	env := watcherEnv(t, topicsOf(g, "a"))
	if code, out, err := testbed.Run(ctx, binary, []string{"prepare"}, env); err != nil || code != 0 {
		t.Fatalf("connect-init prepare: exit %d, %v:\n%s", code, err, out)
	}
	w := startWatcher(t, g, env, time.Second)

	// Wait for the second look: the first may have found the coordinator
	// still loading.
	var body string
	for looks := 0.0; looks < 2; {
		b, parsed := w.scrape(t)
		body = b
		looks = okLooks(parsed)
		select {
		case <-ctx.Done():
			t.Fatalf("no two successful looks: %v; /metrics:\n%s", ctx.Err(), body)
		case <-time.After(250 * time.Millisecond):
		}
	}
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	_, mfs := w.scrape(t)
	grp := map[string]string{"group_id": g}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"connect_init_doctor_look_success", grp, 1},
		{"connect_init_brokers_reachable", grp, 3},
		{"connect_init_internal_topic_partitions", map[string]string{"role": "config"}, 1},
		{"connect_init_internal_topic_compacted", map[string]string{"role": "offset"}, 1},
		{"connect_init_internal_topic_in_sync_replicas", map[string]string{"role": "status"}, 3},
		{"connect_init_internal_topic_leaderless_partitions", map[string]string{"role": "offset"}, 0},
		{"connect_init_coordinator_available", grp, 1},
		{"connect_init_coordinator_partition_in_sync_replicas", map[string]string{"partition": itoa(partition)}, 1},
		{"connect_init_group_members", grp, 0},
		{"connect_init_doctor_findings", map[string]string{"check": "consumer-offsets-single-replica", "finding_severity": "warning"}, 1},
		{"connect_init_doctor_findings", map[string]string{"check": "group-rebalance-storm", "finding_severity": "error"}, 0},
		{"connect_init_lock_topic_exists", grp, 0},
		// No member ever joined: the group's partition holds no record
		// of it, generation 0, read (no authorizer on this cluster).
		{"connect_init_group_generation", grp, 0},
		{"connect_init_group_rebalances_source", map[string]string{"source": "generation"}, 1},
		{"connect_init_group_rebalances_source", map[string]string{"source": "window"}, 0},
		{"connect_init_build_info", map[string]string{"version": "v0.0.0-monitoring"}, 1},
	} {
		got, ok := value(mfs, c.name, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	reqs, _ := value(mfs, "connect_init_doctor_look_kafka_requests", grp)
	dur, _ := value(mfs, "connect_init_doctor_look_duration_seconds", grp)
	rss, _ := value(mfs, "process_resident_memory_bytes", nil)
	t.Logf("one look: %.0f Kafka requests, %.3f s; watcher RSS %.1f MiB", reqs, dur, rss/(1<<20))
	if reqs < 10 || reqs > 200 {
		t.Errorf("a look sent %.0f Kafka requests: the count is broken or the look is not bounded", reqs)
	}

	p := startPrometheus(t, strings.TrimSuffix(strings.TrimPrefix(w.url, "http://"), "/metrics"))
	start := time.Now()
	at, a := p.waitAlert(ctx, t, "ConnectInitCoordinatorPartitionUnderReplicated", "pending")
	t.Logf("ConnectInitCoordinatorPartitionUnderReplicated %s %s after Prometheus started; labels %v", a.State, at.Sub(start).Round(100*time.Millisecond), a.Labels)
	if a.Labels["group_id"] != g || a.Labels["partition"] != itoa(partition) {
		t.Errorf("alert labels %v, want group %s partition %d", a.Labels, g, partition)
	}
	if v, ok := p.query(t, `up{job="connect-init-doctor"}`); !ok || v != 1 {
		t.Errorf("Prometheus sees the watcher up = %v (%v)", v, ok)
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

//go:build integration && monitoring

package monitoring

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
)

// TestAlertsFireOnIncidents proves the shipped rules on the two incidents,
// with the watcher (one look every 2 s) scraped every second by a real
// Prometheus evaluating the rules every second, and measures how long
// after the cause each alert fires and resolves. It takes minutes (the
// rules' "for" and max_over_time windows are real): make monitoring.
func TestAlertsFireOnIncidents(t *testing.T) {
	t.Run("incident 2: a broker under a single-replica __consumer_offsets is killed", incidentCoordinator)
	t.Run("incident 1: a foreign worker loops in our group", incidentForeign)
}

func incidentCoordinator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	g, partition := groupOn(t, "inc2", 3)
	env := watcherEnv(t, topicsOf(g, "a"))
	if code, out, err := testbed.Run(ctx, binary, []string{"prepare"}, env); err != nil || code != 0 {
		t.Fatalf("connect-init prepare: exit %d, %v:\n%s", code, err, out)
	}
	w := startWatcher(t, g, env, 2*time.Second)
	p := startPrometheus(t, strings.TrimSuffix(strings.TrimPrefix(w.url, "http://"), "/metrics"))
	start := time.Now()
	at, _ := p.waitAlert(ctx, t, "ConnectInitCoordinatorPartitionUnderReplicated", "firing")
	t.Logf("MEASURE ConnectInitCoordinatorPartitionUnderReplicated (partition %d, 1 replica) firing %s after Prometheus started (for: 1m): the risk is alerted before any broker dies",
		partition, at.Sub(start).Round(100*time.Millisecond))
	if _, ok := p.alerts(t)["ConnectInitCoordinatorNotAvailable"]; ok {
		t.Fatal("ConnectInitCoordinatorNotAvailable is active before the broker was killed")
	}

	cluster.Kill(3)
	killed := time.Now()
	pendAt, _ := p.waitAlert(ctx, t, "ConnectInitCoordinatorNotAvailable", "pending")
	fireAt, a := p.waitAlert(ctx, t, "ConnectInitCoordinatorNotAvailable", "firing")
	t.Logf("MEASURE ConnectInitCoordinatorNotAvailable pending %s, firing %s after broker 3 was killed (for: 30s); labels %v",
		pendAt.Sub(killed).Round(100*time.Millisecond), fireAt.Sub(killed).Round(100*time.Millisecond), a.Labels)
	if a.Labels["group_id"] != g {
		t.Errorf("alert labels %v, want group %s", a.Labels, g)
	}

	if err := cluster.Start(3); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	if err := cluster.WaitStarted(ctx, 3); err != nil {
		t.Fatal(err)
	}
	resAt, _ := p.waitAlert(ctx, t, "ConnectInitCoordinatorNotAvailable", "")
	t.Logf("MEASURE ConnectInitCoordinatorNotAvailable resolved %s after broker 3 was started again", resAt.Sub(restarted).Round(100*time.Millisecond))
	logMemory(t, w, "incident 2")
}

func incidentForeign(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	g, _ := groupOn(t, "inc1", 2)
	ours, foreign := topicsOf(g, "p"), topicsOf(g, "q")

	// Our cluster P: one bare worker, the group's leader, its config topic
	// holding only the session key.
	pw := startWorker(ctx, t, "p", ours)
	// The foreign cluster Q's config topic is longer than ours: records
	// Connect reads and discards (valid JSON, keys it does not know) move
	// its read offset all the same.
	seedConfigTopic(t, foreign["config.storage.topic"], 12)

	w := startWatcher(t, g, watcherEnv(t, ours), 2*time.Second)
	p := startPrometheus(t, strings.TrimSuffix(strings.TrimPrefix(w.url, "http://"), "/metrics"))
	// A calm group first: none of the incident's alerts may be active.
	waitLooks(ctx, t, w, 3)
	for _, name := range []string{"ConnectInitRebalanceStorm", "ConnectInitForeignGroupMember"} {
		if a, ok := p.alerts(t)[name]; ok {
			t.Fatalf("%s is %s on a calm group", name, a.State)
		}
	}
	logMemory(t, w, "incident 1, before")

	// Q's bare worker joins our group: P, the leader, cannot read up to
	// Q's offset, every assignment is CONFIG_MISMATCH, the group loops.
	qw := startBareWorker(t, "q", foreign)
	joined := time.Now()
	// One page: the foreign member's. The storm it causes is seen (its
	// finding is in the looks) but left to it.
	const foreignAlert = "ConnectInitForeignGroupMember"
	pendAt, _ := p.waitAlert(ctx, t, foreignAlert, "pending")
	var fireAt time.Time
	for fireAt.IsZero() {
		active := p.alerts(t)
		if a, ok := active["ConnectInitRebalanceStorm"]; ok {
			t.Errorf("ConnectInitRebalanceStorm is %s beside the foreign member: two pages for one incident", a.State)
		}
		if a, ok := active[foreignAlert]; ok && a.State == "firing" {
			fireAt = time.Now()
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never fired: %v; alerts: %+v", foreignAlert, ctx.Err(), active)
		case <-time.After(250 * time.Millisecond):
		}
	}
	t.Logf("MEASURE %s pending %s, firing %s after the foreign worker started (for: 1m)", foreignAlert,
		pendAt.Sub(joined).Round(100*time.Millisecond), fireAt.Sub(joined).Round(100*time.Millisecond))
	if v, ok := p.query(t, `max(max_over_time(connect_init_doctor_findings{check="group-rebalance-storm"}[2m]))`); !ok || v == 0 {
		t.Logf("the looks saw no storm finding (%v, %v): the storm's exclusion was not exercised", v, ok)
	}
	var pages []string
	for name, a := range p.alerts(t) {
		if a.State == "firing" && a.Labels["severity"] == "critical" {
			pages = append(pages, name)
		}
	}
	if len(pages) != 1 || pages[0] != foreignAlert {
		t.Errorf("pages during incident 1: %v, want %s alone", pages, foreignAlert)
	}
	loops := qw.CountInLog("Forcing rebalance") + pw.CountInLog("Forcing rebalance") + qw.CountInLog("Assignment{error=1") + pw.CountInLog("Assignment{error=1")
	t.Logf("the loop so far: %d \"Forcing rebalance\"/CONFIG_MISMATCH lines in the workers' logs", loops)
	if loops == 0 {
		t.Errorf("the alerts fired, yet the workers' logs show no loop; P's log:\n%s", testbed.Tail(pw.Log(), 3000))
	}
	logMemory(t, w, "incident 1, during")

	qw.Kill()
	stopped := time.Now()
	at, _ := p.waitAlert(ctx, t, foreignAlert, "")
	t.Logf("MEASURE %s resolved %s after the foreign worker was killed (max_over_time 2m)", foreignAlert, at.Sub(stopped).Round(100*time.Millisecond))
	logMemory(t, w, "incident 1, after")
}

// seedConfigTopic creates a Connect config topic (1 partition, compacted)
// holding n records that Connect reads past and discards.
func seedConfigTopic(t *testing.T, topic string, n int) {
	t.Helper()
	addrs := strings.Split(cluster.Bootstrap(), ",")
	admin, err := sarama.NewClusterAdmin(addrs, saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	compact := "compact"
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 3, ConfigEntries: map[string]*string{"cleanup.policy": &compact}}, false); err != nil {
		t.Fatal(err)
	}
	cfg := saramaConfig()
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Retry.Max = 20
	prod, err := sarama.NewSyncProducer(addrs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range n {
		if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(fmt.Sprintf("monitoring-seed-%d", i)),
			Value: sarama.StringEncoder(`{"seed":true}`)}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitLooks waits until the watcher took n successful looks more.
func waitLooks(ctx context.Context, t *testing.T, w *watcher, n float64) {
	t.Helper()
	_, mfs := w.scrape(t)
	from := okLooks(mfs)
	for {
		_, mfs = w.scrape(t)
		if okLooks(mfs) >= from+n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the watcher took no %v successful looks: %v", n, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// logMemory logs the watcher's looks, memory and descriptors: the figures
// of docs/benchmarks.md.
func logMemory(t *testing.T, w *watcher, when string) {
	t.Helper()
	_, mfs := w.scrape(t)
	ok := okLooks(mfs)
	failed, _ := value(mfs, "connect_init_doctor_look_failures_total", nil)
	rss, _ := value(mfs, "process_resident_memory_bytes", nil)
	heap, _ := value(mfs, "go_memstats_heap_inuse_bytes", nil)
	fds, _ := value(mfs, "process_open_fds", nil)
	gor, _ := value(mfs, "go_goroutines", nil)
	reqs, _ := value(mfs, "connect_init_doctor_look_kafka_requests", nil)
	dur, _ := value(mfs, "connect_init_doctor_look_duration_seconds", nil)
	t.Logf("MEASURE watcher %s: %.0f looks ok, %.0f failed; last look %.0f Kafka requests, %.2f s; RSS %.1f MiB, heap in use %.1f MiB, %.0f open fds, %.0f goroutines",
		when, ok, failed, reqs, dur, rss/(1<<20), heap/(1<<20), fds, gor)
}

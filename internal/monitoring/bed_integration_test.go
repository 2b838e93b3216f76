//go:build integration

package monitoring

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/testbed"
)

// The package's cluster is incident 2's: 3 brokers, node 1 the only KRaft
// controller (stopping broker 2 or 3 keeps the quorum), and
// offsets.topic.replication.factor=1, so every __consumer_offsets partition
// has one replica. A short broker session fences a killed broker within
// seconds.
var (
	cluster *testbed.Cluster
	binary  string
	workDir string
)

func TestMain(m *testing.M) { os.Exit(mainWithCluster(m)) }

func mainWithCluster(m *testing.M) int {
	defer testbed.KillAll()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var err error
	if workDir, err = os.MkdirTemp("", "connect-init-monitoring-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(workDir)
	if binary, err = testbed.BuildConnectInit(workDir, "v0.0.0-monitoring"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dist, err := testbed.Fetch(ctx, testbed.Version())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cluster, err = testbed.StartCluster(ctx, dist, testbed.ClusterOptions{Brokers: 3, Dir: filepath.Join(workDir, "cluster"), Controllers: 1,
		BrokerProps: map[string]string{
			"offsets.topic.replication.factor": "1",
			"broker.session.timeout.ms":        "4000",
			"broker.heartbeat.interval.ms":     "500",
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cluster.Close()
	fmt.Fprintf(os.Stderr, "monitoring cluster: Kafka %s, bootstrap %s\n", dist.Version, cluster.Bootstrap())
	// __consumer_offsets, spread over the three brokers with one replica.
	client, err := sarama.NewClient(strings.Split(cluster.Bootstrap(), ","), saramaConfig())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for {
		if _, err = client.Coordinator("monitoring-first-consumer"); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(os.Stderr, "no coordinator on the fresh cluster:", err)
			return 1
		case <-time.After(200 * time.Millisecond):
		}
	}
	client.Close()
	return m.Run()
}

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.ApiVersionsRequest = true
	return cfg
}

// topicsOf are the settings of Connect cluster name in group g.
func topicsOf(g, name string) map[string]string {
	return map[string]string{"group.id": g, "config.storage.topic": g + "-" + name + "-configs",
		"offset.storage.topic": g + "-" + name + "-offsets", "status.storage.topic": g + "-" + name + "-status"}
}

// groupOn returns a group id whose __consumer_offsets partition (one
// replica) is on broker id.
func groupOn(t *testing.T, name string, id int32) (string, int32) {
	t.Helper()
	client, err := sarama.NewClient([]string{cluster.Addr(1, "PLAINTEXT")}, saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	parts, err := client.Partitions("__consumer_offsets")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		g := fmt.Sprintf("%s-%d-%d", name, time.Now().UnixNano()%1e6, i)
		p := gate.GroupPartition(g, len(parts))
		if leader, err := client.Leader("__consumer_offsets", p); err == nil && leader.ID() == id {
			return g, p
		}
	}
	t.Fatalf("no group id found whose partition broker %d leads", id)
	return "", 0
}

// watcherEnv is connect-init's environment for Connect cluster props.
func watcherEnv(t *testing.T, props map[string]string) []string {
	t.Helper()
	wp, err := cluster.WorkerProps(props)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(testbed.BaseEnv(), testbed.EnvFromProps(wp)...), "CONNECT_INIT_TIMEOUT=20s")
}

// startWorker starts a bare Connect worker of cluster name and waits until
// it serves.
func startWorker(ctx context.Context, t *testing.T, name string, props map[string]string) *testbed.Worker {
	t.Helper()
	w := startBareWorker(t, name, props)
	if err := w.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	return w
}

func startBareWorker(t *testing.T, name string, props map[string]string) *testbed.Worker {
	t.Helper()
	wp, err := cluster.WorkerProps(props)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cluster.NewWorkerSpec(props["group.id"]+"-"+name, wp, 0)
	if err != nil {
		t.Fatal(err)
	}
	w, err := cluster.StartWorker(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.Stop(20 * time.Second)
		if t.Failed() {
			t.Logf("worker %s log tail:\n%s", name, testbed.Tail(w.Log(), 3000))
		}
	})
	return w
}

// watcher is a running connect-init doctor --watch --metrics-addr.
type watcher struct {
	*testbed.Process
	url string // http://127.0.0.1:port/metrics
}

func startWatcher(t *testing.T, name string, env []string, interval time.Duration) *watcher {
	t.Helper()
	port, err := testbed.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	dir := t.TempDir()
	p, err := testbed.StartProcess("watcher-"+name, []string{binary, "doctor", "--watch", "--interval=" + interval.String(), "--metrics-addr=" + addr},
		env, dir, filepath.Join(dir, "watcher.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("watcher log:\n%s", testbed.Tail(p.Log(), 6000))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := testbed.WaitForPort(ctx, addr); err != nil {
		t.Fatalf("the watcher does not serve %s: %v; log:\n%s", addr, err, p.Log())
	}
	return &watcher{Process: p, url: "http://" + addr + "/metrics"}
}

// scrape reads the watcher's /metrics once, raw and parsed.
func (w *watcher) scrape(t *testing.T) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	resp, err := http.Get(w.url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var p expfmt.TextParser
	mfs, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("the watcher's /metrics does not parse: %v", err)
	}
	return string(body), mfs
}

// okLooks are the watcher's successful looks: all looks less the failed.
func okLooks(mfs map[string]*dto.MetricFamily) float64 {
	all, _ := value(mfs, "connect_init_doctor_looks_total", nil)
	failed, _ := value(mfs, "connect_init_doctor_look_failures_total", nil)
	return all - failed
}

// value is the first sample of name whose labels include want; ok false
// when there is none.
func value(mfs map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		}
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// prometheus is Debian's prometheus server on a loopback port, scraping
// the watcher every second with the shipped rules evaluated every second.
type prometheus struct {
	*testbed.Process
	base string
}

func startPrometheus(t *testing.T, target string) *prometheus {
	t.Helper()
	return startPrometheusJobs(t, map[string]string{"connect-init-doctor": target})
}

// startPrometheusJobs is Prometheus scraping each job's target, with
// doctor's and apply's shipped rules.
func startPrometheusJobs(t *testing.T, jobs map[string]string) *prometheus {
	t.Helper()
	bin := "prometheus"
	var rules []string
	for _, f := range []string{"connect-init.rules.yml", "connect-init-apply.rules.yml"} {
		abs, err := filepath.Abs("../../examples/monitoring/" + f)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, strconv.Quote(abs))
	}
	dir := t.TempDir()
	conf := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%s]
scrape_configs:
`, strings.Join(rules, ", "))
	for job, target := range jobs {
		conf += fmt.Sprintf("  - job_name: %s\n    static_configs:\n      - targets: [%q]\n", job, target)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := testbed.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p, err := testbed.StartProcess("prometheus", []string{bin, "--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + addr}, nil, dir, filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatalf("start Debian's prometheus (bash .ci/install-prometheus): %v", err)
	}
	t.Cleanup(func() {
		p.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("prometheus log:\n%s", testbed.Tail(p.Log(), 4000))
		}
	})
	pr := &prometheus{Process: p, base: "http://" + addr}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if resp, err := http.Get(pr.base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return pr
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("prometheus not ready: %v; log:\n%s", ctx.Err(), p.Log())
		case <-p.Done():
			t.Fatalf("prometheus exited; log:\n%s", p.Log())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// alert is one entry of Prometheus' /api/v1/alerts.
type alert struct {
	Labels   map[string]string `json:"labels"`
	State    string            `json:"state"`
	ActiveAt time.Time         `json:"activeAt"`
}

// alerts are the active alerts by name (pending or firing).
func (p *prometheus) alerts(t *testing.T) map[string]alert {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Data struct {
			Alerts []alert `json:"alerts"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]alert{}
	for _, a := range doc.Data.Alerts {
		if prev, ok := out[a.Labels["alertname"]]; !ok || prev.State != "firing" {
			out[a.Labels["alertname"]] = a
		}
	}
	return out
}

// waitAlert polls the alerts every 250 ms until alert name is in state
// ("firing", "pending", or "" for resolved) and returns when it saw it.
func (p *prometheus) waitAlert(ctx context.Context, t *testing.T, name, state string) (time.Time, alert) {
	t.Helper()
	for {
		a, ok := p.alerts(t)[name]
		if (state == "" && !ok) || (ok && a.State == state) || (state == "pending" && ok) {
			return time.Now(), a
		}
		select {
		case <-ctx.Done():
			t.Fatalf("alert %s not %q: %v; alerts now: %+v", name, state, ctx.Err(), p.alerts(t))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// query is one instant PromQL query's first value.
func (p *prometheus) query(t *testing.T, q string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/query?query=" + urlQuery(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Data.Result) == 0 {
		return 0, false
	}
	var v float64
	s, _ := doc.Data.Result[0].Value[1].(string)
	_, err = fmt.Sscan(s, &v)
	return v, err == nil
}

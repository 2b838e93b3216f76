//go:build integration

package apply_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
)

// One real KRaft broker and one real Connect worker, started once for the
// package. The worker is launched through `connect-init run` with
// CONNECT_INIT_CONNECTORS_DIR, so its start also proves the in-run apply
// child; the scenarios then run the real `connect-init apply` binary.
var (
	cluster   *testbed.Cluster
	worker    *testbed.Worker
	binary    string
	workDir   string
	baseEnv   []string
	seedInput string // the file the seed connector reads
	// workerArgv and workerEnv start the package's worker through
	// `connect-init run` again, after a test killed it.
	workerArgv, workerEnv []string
)

const (
	group       = "apply-itest"
	configTopic = "_apply-configs"
	seedTopic   = "apply-seed"
	seedLines   = 5
)

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apply integration setup:", err)
		if worker != nil {
			fmt.Fprintln(os.Stderr, tail(worker.Log(), 6000))
		}
		code = 1
	}
	if worker != nil {
		worker.Stop(10 * time.Second)
	}
	if cluster != nil {
		cluster.Close()
	}
	testbed.KillAll()
	if code == 0 {
		os.RemoveAll(workDir)
	} else if workDir != "" {
		fmt.Fprintln(os.Stderr, "logs kept in", workDir)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var err error
	if workDir, err = os.MkdirTemp("", "connect-init-apply-"); err != nil {
		return 1, err
	}
	if binary, err = testbed.BuildConnectInit(workDir, "v0.0.0-apply"); err != nil {
		return 1, err
	}
	dist, err := testbed.Fetch(ctx, testbed.Version())
	if err != nil {
		return 1, err
	}
	if cluster, err = testbed.StartCluster(ctx, dist, testbed.ClusterOptions{Brokers: 1, Dir: filepath.Join(workDir, "cluster")}); err != nil {
		return 1, err
	}
	props, err := cluster.WorkerProps(groupProps())
	if err != nil {
		return 1, err
	}
	spec, err := cluster.NewWorkerSpec("w1", props, 0)
	if err != nil {
		return 1, err
	}
	// The seed connector, applied by the child `run` starts.
	seedDir := filepath.Join(workDir, "seed")
	seedInput = filepath.Join(workDir, "seed-input.txt")
	var lines strings.Builder
	for i := 1; i <= seedLines; i++ {
		fmt.Fprintf(&lines, "seed line %d\n", i)
	}
	if err := os.WriteFile(seedInput, []byte(lines.String()), 0o644); err != nil {
		return 1, err
	}
	if err := os.MkdirAll(seedDir, 0o755); err != nil {
		return 1, err
	}
	seed := fmt.Sprintf(`{"name": "seed-source", "config": {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": %q, "topic": %q, "tasks.max": "1"}}`, seedInput, seedTopic)
	if err := os.WriteFile(filepath.Join(seedDir, "seed-source.json"), []byte(seed), 0o644); err != nil {
		return 1, err
	}
	baseEnv = append(testbed.BaseEnv(), testbed.EnvFromProps(props)...)
	runEnv := append(append([]string{}, baseEnv...), "CONNECT_INIT_LOCK=false", "CONNECT_INIT_CONNECTORS_DIR="+seedDir)
	workerArgv, workerEnv = append([]string{binary, "run", "--"}, spec.Argv...), runEnv
	if worker, err = cluster.StartWorkerCommand(spec, workerArgv, workerEnv); err != nil {
		return 1, err
	}
	if err := worker.WaitHealthy(ctx); err != nil {
		return 1, err
	}
	return m.Run(), nil
}

// groupProps are the worker settings of the package's group.
func groupProps() map[string]string {
	return map[string]string{
		"group.id": group, "config.storage.topic": configTopic,
		"offset.storage.topic": "_apply-offsets", "status.storage.topic": "_apply-status",
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// applyRun runs `connect-init apply` with the worker's environment.
func applyRun(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, out, err := testbed.Run(ctx, binary, append([]string{"apply"}, args...), baseEnv)
	if err != nil {
		t.Fatalf("connect-init apply %v: %v\n%s", args, err, out)
	}
	return code, out
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// rest GETs path from the worker and decodes JSON into v; it returns the
// status code.
func rest(t *testing.T, path string, v any) int {
	t.Helper()
	resp, err := http.Get(worker.Spec.RESTURL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil && resp.StatusCode == 200 {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

func connectorConfig(t *testing.T, name string) map[string]string {
	t.Helper()
	var cfg map[string]string
	if code := rest(t, "/connectors/"+name+"/config", &cfg); code != 200 {
		return nil
	}
	return cfg
}

// configEnd is the config topic's end offset: every write Connect makes
// for a connector (config, target state, task configs) is a record there.
func configEnd(t *testing.T) int64 {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	c, err := sarama.NewClient([]string{cluster.Bootstrap()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	off, err := c.GetOffset(configTopic, 0, sarama.OffsetNewest)
	if err != nil {
		t.Fatal(err)
	}
	return off
}

// topicRecords counts the records of a topic (one partition or more).
func topicRecords(t *testing.T, topic string) int64 {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	c, err := sarama.NewClient([]string{cluster.Bootstrap()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	parts, err := c.Partitions(topic)
	if err != nil {
		return 0
	}
	var n int64
	for _, p := range parts {
		hi, err1 := c.GetOffset(topic, p, sarama.OffsetNewest)
		lo, err2 := c.GetOffset(topic, p, sarama.OffsetOldest)
		if err1 == nil && err2 == nil {
			n += hi - lo
		}
	}
	return n
}

func sinkJSON(name, topic, file string, extra string) string {
	return fmt.Sprintf(`{
  "name": %q,
  "config": {
    "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
    "topics": %q,
    "file": %q%s
  }
}
`, name, topic, file, extra)
}

// TestRunStartsApplyChild: the worker was started through `connect-init
// run` with CONNECT_INIT_CONNECTORS_DIR; its child applied the seed
// connector once the worker was ready, logged with its own marks, and the
// connector's records flow.
func TestRunStartsApplyChild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := worker.WaitForLog(ctx, "msg=\"apply done\""); err != nil {
		t.Fatalf("the child never finished: %v\n%s", err, tail(worker.Log(), 6000))
	}
	log := worker.Log()
	for _, want := range []string{"started the connector apply beside the worker", "process=apply", "connect-init apply: plan for", "+ create     seed-source", "seed-source: ok: connector RUNNING, 1/1 tasks RUNNING"} {
		if !strings.Contains(log, want) {
			t.Errorf("worker log lacks %q", want)
		}
	}
	for topicRecords(t, seedTopic) < seedLines {
		select {
		case <-ctx.Done():
			t.Fatalf("only %d of %d seed records reached %s", topicRecords(t, seedTopic), seedLines, seedTopic)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestCreateUpdateNoopPrune walks one connector through its life.
func TestCreateUpdateNoopPrune(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "connectors")
	out1 := filepath.Join(t.TempDir(), "sink-a.txt")
	writeFile(t, dir, "sink-a.json", sinkJSON("sink-a", seedTopic, out1, ""))
	writeFile(t, dir, "sink-b.properties", "connector.class=org.apache.kafka.connect.file.FileStreamSinkConnector\ntopics="+seedTopic+"\nfile="+filepath.Join(t.TempDir(), "sink-b.txt")+"\n")

	code, out := applyRun(t, "--dir", dir)
	if code != 0 || !strings.Contains(out, "+ create     sink-a") || !strings.Contains(out, "+ create     sink-b") || !strings.Contains(out, "created sink-a") {
		t.Fatalf("create: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "sink-a: ok: connector RUNNING, 1/1 tasks RUNNING") {
		t.Errorf("create did not wait for the running task:\n%s", out)
	}
	if cfg := connectorConfig(t, "sink-b"); cfg["name"] != "sink-b" || cfg["file"] == "" {
		t.Errorf("sink-b (named by its .properties file) has config %v", cfg)
	}
	// The seed records reach the sink's file.
	deadline := time.Now().Add(time.Minute)
	for {
		b, _ := os.ReadFile(out1)
		if strings.Count(string(b), "seed line") >= seedLines {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sink-a wrote %q", b)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// No-op: nothing is written to the config topic.
	before := configEnd(t)
	code, out = applyRun(t, "--dir", dir)
	if code != 0 || !strings.Contains(out, "= unchanged  sink-a") || !strings.Contains(out, "nothing to write") || strings.Contains(out, "created sink") || strings.Contains(out, "updated sink") {
		t.Fatalf("second apply: exit %d\n%s", code, out)
	}
	if after := configEnd(t); after != before {
		t.Fatalf("the second apply wrote %d records to %s (end offset %d -> %d)", after-before, configTopic, before, after)
	}

	// Update: only the changed key is shown, and Connect has it.
	writeFile(t, dir, "sink-a.json", sinkJSON("sink-a", seedTopic, out1, `,
    "errors.tolerance": "all"`))
	code, out = applyRun(t, "--dir", dir)
	if code != 0 || !strings.Contains(out, "~ update     sink-a") || !strings.Contains(out, "+ errors.tolerance = all") || !strings.Contains(out, "= unchanged  sink-b") {
		t.Fatalf("update: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "topics") {
		t.Errorf("the update shows unchanged keys:\n%s", out)
	}
	if cfg := connectorConfig(t, "sink-a"); cfg["errors.tolerance"] != "all" {
		t.Errorf("after the update sink-a has %v", cfg)
	}

	// Without --prune a connector no file defines is kept; with it, deleted.
	os.Remove(filepath.Join(dir, "sink-b.properties"))
	code, out = applyRun(t, "--dir", dir, "--dry-run")
	if code != 0 || !strings.Contains(out, "kept (--prune deletes them)") || !strings.Contains(out, "sink-b") || !strings.Contains(out, "dry run: nothing was written") {
		t.Fatalf("dry run without prune: exit %d\n%s", code, out)
	}
	code, out = applyRun(t, "--dir", dir, "--prune")
	if code != 0 || !strings.Contains(out, "- delete     sink-b") || !strings.Contains(out, "deleted sink-b") || !strings.Contains(out, "sink-b: ok: deleted") {
		t.Fatalf("prune: exit %d\n%s", code, out)
	}
	if cfg := connectorConfig(t, "sink-b"); cfg != nil {
		t.Errorf("sink-b still exists after --prune: %v", cfg)
	}
	if cfg := connectorConfig(t, "seed-source"); cfg != nil {
		t.Errorf("seed-source is in no file of %s, so --prune must delete it too; it has %v", dir, cfg)
	}
}

// TestFailingTask: a sink whose file cannot be created fails its task; apply
// exits 1 with the task's trace.
func TestFailingTask(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "connectors")
	writeFile(t, dir, "broken-sink.json", sinkJSON("broken-sink", seedTopic, "/nonexistent-dir-apply-itest/out.txt", ""))
	code, out := applyRun(t, "--dir", dir, "--wait=2m")
	if code != 1 || !strings.Contains(out, "broken-sink: FAILED: task 0 FAILED") || !strings.Contains(out, "ConnectException") || !strings.Contains(out, "nonexistent-dir-apply-itest") {
		t.Fatalf("failing task: exit %d\n%s", code, out)
	}
}

// TestValidationPerField: an unknown connector class and an unknown
// converter class are refused by Connect's validation, each named with its
// file and line; nothing is written.
func TestValidationPerField(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "connectors")
	f1 := writeFile(t, dir, "no-such-class.json", `{"name": "no-such-class", "config": {
  "connector.class": "com.example.NoSuchConnector",
  "topics": "x"
}}`)
	f2 := writeFile(t, dir, "bad-converter.properties", "connector.class=org.apache.kafka.connect.file.FileStreamSinkConnector\ntopics=x\n\nkey.converter=com.example.NoSuchConverter\n")
	before := configEnd(t)
	code, out := applyRun(t, "--dir", dir)
	if code != 2 {
		t.Fatalf("validation: exit %d, want 2\n%s", code, out)
	}
	for _, want := range []string{f1 + ":2: connector.class:", f2 + ":4: key.converter:", "com.example.NoSuchConverter", "nothing was written"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if after := configEnd(t); after != before {
		t.Errorf("a refused apply wrote %d records", after-before)
	}
	if connectorConfig(t, "bad-converter") != nil || connectorConfig(t, "no-such-class") != nil {
		t.Error("a refused connector was created")
	}
}

// TestSecretNeverPrinted: a secret in a connector config appears in no
// output, at create, update or dry run; a ${...} reference is shown.
func TestSecretNeverPrinted(t *testing.T) {
	const secret = "hunter2-apply-itest-secret"
	dir := filepath.Join(t.TempDir(), "connectors")
	file := filepath.Join(t.TempDir(), "secret-sink.txt")
	writeFile(t, dir, "secret-sink.json", sinkJSON("secret-sink", seedTopic, file, `,
    "connection.password": "`+secret+`",
    "api.token": "${env:API_TOKEN}"`))
	code, out := applyRun(t, "--dir", dir)
	if code != 0 || !strings.Contains(out, "connection.password = [hidden]") || !strings.Contains(out, "api.token = ${env:API_TOKEN}") {
		t.Fatalf("create: exit %d\n%s", code, out)
	}
	writeFile(t, dir, "secret-sink.json", sinkJSON("secret-sink", seedTopic, file, `,
    "connection.password": "`+secret+`-2",
    "api.token": "${env:API_TOKEN}"`))
	code, out2 := applyRun(t, "--dir", dir, "--dry-run")
	if code != 0 || !strings.Contains(out2, "~ connection.password: [hidden] -> [hidden]") {
		t.Fatalf("dry run of the update: exit %d\n%s", code, out2)
	}
	for _, o := range []string{out, out2} {
		if strings.Contains(o, secret) {
			t.Fatalf("the secret was printed:\n%s", o)
		}
	}
	if cfg := connectorConfig(t, "secret-sink"); cfg["connection.password"] != secret {
		t.Errorf("Connect has connection.password %q", cfg["connection.password"])
	}
}

// TestPausedAndStopped: "state" in a file pauses and stops, and apply waits
// for those states.
func TestPausedAndStopped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "connectors")
	file := filepath.Join(t.TempDir(), "state-sink.txt")
	withState := func(state string) string {
		return strings.Replace(sinkJSON("state-sink", seedTopic, file, ""), `"config"`, `"state": "`+state+`", "config"`, 1)
	}
	writeFile(t, dir, "state-sink.json", withState("paused"))
	// Created paused (initial_state, Kafka >= 3.7, the test bed's
	// versions): no pause request after the create.
	if code, out := applyRun(t, "--dir", dir); code != 0 || !strings.Contains(out, "created state-sink in state PAUSED (initial_state)") || strings.Contains(out, "pause requested") || !strings.Contains(out, "state-sink: ok: connector PAUSED") {
		t.Fatalf("paused: exit %d\n%s", code, out)
	}
	writeFile(t, dir, "state-sink.json", withState("stopped"))
	if code, out := applyRun(t, "--dir", dir); code != 0 || !strings.Contains(out, "state: stop") || !strings.Contains(out, "state-sink: ok: connector STOPPED") {
		t.Fatalf("stopped: exit %d\n%s", code, out)
	}
	writeFile(t, dir, "state-sink.json", withState("running"))
	if code, out := applyRun(t, "--dir", dir); code != 0 || !strings.Contains(out, "state: resume") || !strings.Contains(out, "state-sink: ok: connector RUNNING, 1/1 tasks RUNNING") {
		t.Fatalf("running: exit %d\n%s", code, out)
	}
}

// TestBadFileNamesLine: a JSON syntax error is exit 2 naming the file and
// line, before any connection.
func TestBadFileNamesLine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "connectors")
	f := writeFile(t, dir, "typo.json", "{\n  \"name\": \"typo\",\n  \"config\": {\n    \"connector.class\": \"x\",,\n  }\n}\n")
	code, out := applyRun(t, "--dir", dir)
	if code != 2 || !strings.Contains(out, f+":4:") {
		t.Fatalf("bad file: exit %d\n%s", code, out)
	}
}

// TestForeignWorkerRefused: a --url whose GET / reports another Kafka
// cluster is refused before anything is read or written.
func TestForeignWorkerRefused(t *testing.T) {
	var writes atomic.Int32
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			writes.Add(1)
		}
		if r.URL.Path == "/" {
			w.Write([]byte(`{"version":"4.3.1","commit":"x","kafka_cluster_id":"some-other-cluster"}`))
			return
		}
		w.Write([]byte(`{}`))
	}))
	defer foreign.Close()
	dir := filepath.Join(t.TempDir(), "connectors")
	writeFile(t, dir, "x.json", sinkJSON("x", seedTopic, "/tmp/x", ""))
	code, out := applyRun(t, "--dir", dir, "--url", foreign.URL)
	if code != 1 || !strings.Contains(out, "some-other-cluster") || !strings.Contains(out, "refusing to apply to another cluster") || writes.Load() != 0 {
		t.Fatalf("foreign worker: exit %d, %d writes\n%s", code, writes.Load(), out)
	}
}

// TestURLThroughAnotherName: --url reaching our worker by a name no member
// advertises (localhost, as a load balancer would) is accepted once the
// connectors it reports run on our group's members.
func TestURLThroughAnotherName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "connectors")
	writeFile(t, dir, "url-sink.json", sinkJSON("url-sink", seedTopic, filepath.Join(t.TempDir(), "url-sink.txt"), ""))
	if code, out := applyRun(t, "--dir", dir); code != 0 {
		t.Fatalf("create: exit %d\n%s", code, out)
	}
	other := strings.Replace(worker.Spec.RESTURL, "127.0.0.1", "localhost", 1)
	code, out := applyRun(t, "--dir", dir, "--url", other, "--dry-run")
	if code != 0 || !strings.Contains(out, "plan for "+other) || !strings.Contains(out, "= unchanged  url-sink") {
		t.Fatalf("--url %s: exit %d\n%s", other, code, out)
	}
}

//go:build integration

package apply_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connect-init/connect-init/apply"
	"github.com/connect-init/connect-init/internal/testbed"
)

// TestPruneOfNothingRefused: `apply --prune` of a directory that defines
// no connector (only a YAML file and a JSON file saved as .txt, or
// nothing) is exit 2 naming the suspect files, with no record written and
// the cluster's connectors kept. `--watch --prune` whose directory is
// moved away (a lost mount), then empty, deletes nothing and says so at
// every look; once the files are back it prunes again.
func TestPruneOfNothingRefused(t *testing.T) {
	keepDir := filepath.Join(t.TempDir(), "keep")
	writeFile(t, keepDir, "prune-keep.json", sinkJSON("prune-keep", seedTopic, filepath.Join(t.TempDir(), "keep.txt"), ""))
	// Waited for until its task runs, so that its task configs are
	// written before the config topic's end offset is taken.
	if code, out := applyRun(t, "--dir", keepDir, "--wait=1m"); code != 0 {
		t.Fatalf("create: exit %d\n%s", code, out)
	}
	yamlDir := filepath.Join(t.TempDir(), "yaml")
	writeFile(t, yamlDir, "jdbc.yaml", "name: jdbc\nconfig:\n  connector.class: io.confluent.connect.jdbc.JdbcSinkConnector\n")
	writeFile(t, yamlDir, "notes.txt", `{"name": "x", "config": {}}`)
	emptyDir := filepath.Join(t.TempDir(), "empty")
	os.MkdirAll(emptyDir, 0o755)
	before := configEnd(t)
	for _, dir := range []string{yamlDir, emptyDir} {
		code, out := applyRun(t, "--dir", dir, "--prune")
		if code != 2 || !strings.Contains(out, "refusing to prune") || !strings.Contains(out, "--allow-empty-prune") {
			t.Fatalf("prune of %s: exit %d, want 2\n%s", dir, code, out)
		}
		if dir == yamlDir && (!strings.Contains(out, "file=jdbc.yaml") || !strings.Contains(out, "file=notes.txt")) {
			t.Errorf("the suspect files are not named:\n%s", out)
		}
	}
	if after := configEnd(t); after != before {
		t.Errorf("a refused prune wrote %d records", after-before)
	}
	if connectorConfig(t, "prune-keep") == nil {
		t.Fatal("prune-keep was deleted by a refused prune")
	}

	// --watch --prune over a directory that goes away.
	watchDir := filepath.Join(t.TempDir(), "watched")
	writeFile(t, watchDir, "prune-keep.json", sinkJSON("prune-keep", seedTopic, filepath.Join(t.TempDir(), "keep.txt"), ""))
	p := startApply(t, "watch-prune", nil, "--dir", watchDir, "--wait=30s", "--prune", "--watch", "--watch-interval=1s")
	waitLog(t, p, `msg="watching the connectors"`, 2*time.Minute)
	gone := watchDir + ".gone"
	if err := os.Rename(watchDir, gone); err != nil {
		t.Fatal(err)
	}
	for p.CountInLog("cannot read the connector definitions") < 2 {
		waitLog(t, p, "cannot read the connector definitions", time.Minute)
		time.Sleep(200 * time.Millisecond)
	}
	os.MkdirAll(watchDir, 0o755) // the mount point, empty
	for p.CountInLog("defines no connector") < 2 {
		waitLog(t, p, "defines no connector", time.Minute)
		time.Sleep(200 * time.Millisecond)
	}
	if connectorConfig(t, "prune-keep") == nil || strings.Contains(p.Log(), "deleted prune-keep") {
		t.Fatalf("the watcher deleted prune-keep while its directory was gone:\n%s", tail(p.Log(), 3000))
	}
	// The files back, and a connector no file defines: pruned again.
	os.Remove(watchDir)
	if err := os.Rename(gone, watchDir); err != nil {
		t.Fatal(err)
	}
	put(t, "/connectors/prune-extra/config", sinkConfig("prune-extra", filepath.Join(t.TempDir(), "extra.txt")))
	waitLog(t, p, `connector=prune-extra action=delete`, time.Minute)
	t.Logf("the watcher's words:\n%s", grepLines(p.Log(), "watch: "))
}

// TestDryRunJSONThroughRESTOnly: `apply --dry-run --json
// --detailed-exitcode --url U` with no worker settings at all (no broker
// to reach, as on a CI runner) prints one JSON plan on stdout and exits 3
// when changes are pending, 0 when none, naming changed keys and never a
// value.
func TestDryRunJSONThroughRESTOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "connectors")
	out := filepath.Join(t.TempDir(), "plan.txt")
	writeFile(t, dir, "plan-sink.json", sinkJSON("plan-sink", seedTopic, out, ""))
	plan := func(extra ...string) (int, apply.PlanDoc, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, binary, append([]string{"apply", "--dry-run", "--json", "--detailed-exitcode", "--url", worker.Spec.RESTURL, "--dir", dir}, extra...)...)
		cmd.Env = testbed.BaseEnv()
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		// The plan is the result of connect-init's JSON envelope.
		var env struct {
			SchemaVersion int               `json:"schema_version"`
			Command       string            `json:"command"`
			Version       string            `json:"version"`
			ExitCode      int               `json:"exit_code"`
			Errors        []json.RawMessage `json:"errors"`
			Result        apply.PlanDoc     `json:"result"`
		}
		dec := json.NewDecoder(bytes.NewReader(stdout.Bytes()))
		dec.DisallowUnknownFields()
		var d apply.PlanDoc
		if err := dec.Decode(&env); err != nil || dec.More() || !env.Result.Planned {
			t.Fatalf("stdout is not one JSON plan (%v):\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
		d = env.Result
		return code, d, stdout.String() + stderr.String()
	}
	start := time.Now()
	code, d, all := plan()
	took := time.Since(start)
	step := func(d apply.PlanDoc) apply.ConnectorDoc {
		for _, c := range d.Connectors {
			if c.Name == "plan-sink" {
				return c
			}
		}
		t.Fatalf("plan-sink is not in the plan: %+v", d)
		return apply.ConnectorDoc{}
	}
	if c := step(d); code != 3 || !d.ChangesPending || c.Action != apply.Create || !strings.Contains(strings.Join(c.Added, ","), "topics") {
		t.Fatalf("create: exit %d, %+v\n%s", code, c, all)
	}
	if !strings.Contains(all, "not proven a member of the group") {
		t.Errorf("the log does not say the worker was not proven ours:\n%s", all)
	}
	if code, out := applyRun(t, "--dir", dir, "--wait=0"); code != 0 {
		t.Fatalf("apply: exit %d\n%s", code, out)
	}
	const marker = "plan-json-changed-topic"
	writeFile(t, dir, "plan-sink.json", sinkJSON("plan-sink", marker, out, `,
    "errors.tolerance": "all"`))
	code, d, all = plan()
	if c := step(d); code != 3 || c.Action != apply.Update || strings.Join(c.Changed, ",") != "topics" || strings.Join(c.Added, ",") != "errors.tolerance" || strings.Contains(all, marker) {
		t.Fatalf("update: exit %d, %+v\n%s", code, c, all)
	}
	writeFile(t, dir, "plan-sink.json", sinkJSON("plan-sink", seedTopic, out, ""))
	code, d, all = plan()
	if c := step(d); code != 0 || d.ChangesPending || c.Action != apply.Unchanged {
		t.Fatalf("no change: exit %d, %+v\n%s", code, c, all)
	}
	// With --prune, a connector no file defines is a delete in the plan,
	// and still there after it.
	put(t, "/connectors/plan-orphan/config", sinkConfig("plan-orphan", filepath.Join(t.TempDir(), "orphan.txt")))
	for deadline := time.Now().Add(time.Minute); connectorConfig(t, "plan-orphan") == nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("plan-orphan never listed after its PUT")
		}
	}
	code, d, all = plan("--prune")
	deletes := map[string]bool{}
	for _, c := range d.Connectors {
		if c.Action == apply.Delete {
			deletes[c.Name] = true
		}
	}
	if code != 3 || !deletes["plan-orphan"] || d.Summary[apply.Delete] != len(deletes) || connectorConfig(t, "plan-orphan") == nil {
		t.Fatalf("prune: exit %d, deletes %v\n%s", code, deletes, all)
	}
	t.Logf("dry run through the REST API only: %v for the first plan", took.Round(10*time.Millisecond))
}

// TestDeclaredStateNeverRuns: connectors whose files say stopped and
// paused, their status polled every 100 ms from before the apply, are
// never seen RUNNING (connector or task): Kafka >= 3.7 creates them in
// that initial_state.
func TestDeclaredStateNeverRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "connectors")
	names := map[string]string{"born-stopped": "stopped", "born-paused": "paused"}
	for n, st := range names {
		writeFile(t, dir, n+".json", strings.Replace(sinkJSON(n, seedTopic, filepath.Join(t.TempDir(), n+".txt"), ""), `"config"`, `"state": "`+st+`", "config"`, 1))
	}
	var mu sync.Mutex
	seen := map[string]map[string]int{}
	polls := 0
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			for n := range names {
				var st apply.Status
				resp, err := http.Get(worker.Spec.RESTURL + "/connectors/" + n + "/status")
				if err != nil {
					continue
				}
				if resp.StatusCode == http.StatusOK {
					json.NewDecoder(resp.Body).Decode(&st)
				}
				resp.Body.Close()
				mu.Lock()
				polls++
				if seen[n] == nil {
					seen[n] = map[string]int{}
				}
				if st.Connector.State != "" {
					seen[n]["connector "+st.Connector.State]++
				}
				for _, tk := range st.Tasks {
					seen[n]["task "+tk.State]++
				}
				mu.Unlock()
			}
		}
	}()
	code, out := applyRun(t, "--dir", dir, "--wait=1m")
	time.Sleep(2 * time.Second) // a little more watching after the apply
	close(stop)
	<-done
	if code != 0 || !strings.Contains(out, "created born-stopped in state STOPPED (initial_state)") || !strings.Contains(out, "created born-paused in state PAUSED (initial_state)") || strings.Contains(out, "stop requested") {
		t.Fatalf("apply: exit %d\n%s", code, out)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d status reads; states seen: %v", polls, seen)
	for n, st := range names {
		want := "connector " + strings.ToUpper(st)
		if seen[n][want] == 0 {
			t.Errorf("%s never seen %s: %v", n, want, seen[n])
		}
		for s := range seen[n] {
			if strings.HasSuffix(s, "RUNNING") {
				t.Errorf("%s was seen %s", n, s)
			}
		}
	}
}

func sinkConfig(name, file string) map[string]string {
	return map[string]string{"name": name, "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "topics": seedTopic, "file": file}
}

// put PUTs v as JSON to the worker.
func put(t *testing.T, path string, v any) {
	t.Helper()
	body, _ := json.Marshal(v)
	req, _ := http.NewRequest(http.MethodPut, worker.Spec.RESTURL+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("PUT %s answered %d", path, resp.StatusCode)
	}
}

// TestWatchMetricsScraped: the metrics of a real watcher over a sink whose
// task always fails, scraped over HTTP: the task's FAILED series is 1,
// its restarts are counted, the look succeeded, the watcher is active; the
// exposition passes Prometheus' lint (checked by the unit test on the same
// registry code).
func TestWatchMetricsScraped(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := filepath.Join(t.TempDir(), "connectors")
	writeFile(t, dir, "metrics-broken.json", sinkJSON("metrics-broken", seedTopic, "/nonexistent-dir-metrics-itest/out.txt", ""))
	p := startApply(t, "metrics", nil, "--dir", dir, "--wait=30s", "--watch", "--watch-interval=1s", "--restart-backoff=1s", "--max-restarts=2", "--metrics-addr="+addr)
	waitLog(t, p, "watch: serving metrics", 2*time.Minute)
	scrape := func() string {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return b.String()
	}
	// Every series carries the worker group (group_id, set by the command
	// from the worker settings; empty without them).
	want := []string{
		`connect_init_apply_task_state{connector="metrics-broken",group_id="[^"]+",state="FAILED",task="0"} 1`,
		`connect_init_apply_restarts_total{connector="metrics-broken",group_id="[^"]+"} 2`,
		`connect_init_apply_last_look_success{group_id="[^"]+"} 1`,
		`connect_init_apply_active{group_id="[^"]+"} 1`,
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		body, missing := scrape(), ""
		for _, w := range want {
			if !regexp.MustCompile(`(?m)^` + strings.ReplaceAll(strings.ReplaceAll(w, "{", `\{`), "}", `\}`) + `$`).MatchString(body) {
				missing = w
				break
			}
		}
		if missing == "" {
			t.Logf("scraped:\n%s", grepLines(body, "metrics-broken", "connect_init_apply_last", "connect_init_apply_active"))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the metrics never showed %s:\n%s\nwatcher:\n%s", missing, body, tail(p.Log(), 3000))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestOlderWorkerVersion: the real worker behind a proxy that reports
// Kafka 3.5.1 in GET / (nothing else changed): a connector declared
// paused is created running and then paused, as before KIP-980, said in
// the log; a definition with offsets is refused before anything is
// written (exit 2), and `offsets export` is refused with the reason
// (exit 1).
func TestOlderWorkerVersion(t *testing.T) {
	target, _ := url.Parse(worker.Spec.RESTURL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path != "/" || resp.Request.Method != http.MethodGet {
			return nil
		}
		var root map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&root); err != nil {
			return err
		}
		resp.Body.Close()
		root["version"] = "3.5.1"
		b, _ := json.Marshal(root)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "connectors")
	// A running connector on a member: the proof that the proxy's worker
	// is of our group.
	writeFile(t, dir, "fallback-anchor.json", sinkJSON("fallback-anchor", seedTopic, filepath.Join(t.TempDir(), "anchor.txt"), ""))
	if code, out := applyRun(t, "--dir", dir, "--wait=1m"); code != 0 {
		t.Fatalf("anchor: exit %d\n%s", code, out)
	}
	writeFile(t, dir, "fallback-paused.json", strings.Replace(sinkJSON("fallback-paused", seedTopic, filepath.Join(t.TempDir(), "p.txt"), ""), `"config"`, `"state": "paused", "config"`, 1))
	code, out := applyRun(t, "--dir", dir, "--url", srv.URL, "--wait=1m")
	if code != 0 || !strings.Contains(out, "fallback-paused: pause requested") || !strings.Contains(out, "predates initial_state") || strings.Contains(out, "(initial_state)") || !strings.Contains(out, "fallback-paused: ok: connector PAUSED") {
		t.Fatalf("paused on 3.5.1: exit %d\n%s", code, out)
	}
	writeFile(t, dir, "fallback-offsets.json", `{"name": "fallback-offsets", "config": {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "topics": "x", "file": "/tmp/x"},
 "offsets": [{"partition": {"kafka_topic": "x", "kafka_partition": 0}, "offset": {"kafka_offset": 1}}]}`)
	before := configEnd(t)
	code, out = applyRun(t, "--dir", dir, "--url", srv.URL)
	if code != 2 || !strings.Contains(out, "fallback-offsets.json:2: offsets: cannot be set") || !strings.Contains(out, "from Kafka 3.6 on") || connectorConfig(t, "fallback-offsets") != nil {
		t.Fatalf("offsets on 3.5.1: exit %d\n%s", code, out)
	}
	if after := configEnd(t); after != before {
		t.Errorf("a refused definition wrote %d records", after-before)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, out, err := testbed.Run(ctx, binary, []string{"offsets", "export", "--url", srv.URL, "--connector", "fallback-anchor"}, testbed.BaseEnv())
	if err != nil || code != 1 || !strings.Contains(out, "offsets refused") || !strings.Contains(out, "Kafka 3.5.1") {
		t.Fatalf("offsets export on 3.5.1: exit %d %v\n%s", code, err, out)
	}
}

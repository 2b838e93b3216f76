//go:build integration

package apply_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
)

// The faults of issue 23 on the package's real broker and real workers:
// a worker killed while apply waits (found through the group, and pinned
// with --url), three applies at once, a no-op, a write during the
// rebalance a joining worker starts, and a write whose answer is lost.
// A second worker joins the package's group for these tests.

var (
	secondMu sync.Mutex
	second   *testbed.Worker
)

// ensureSecond starts (or starts again) the second worker of the group and
// waits until the group is Stable with both.
func ensureSecond(t *testing.T) *testbed.Worker {
	t.Helper()
	secondMu.Lock()
	defer secondMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if second == nil || second.Exited() {
		var spec *testbed.WorkerSpec
		if second != nil {
			spec = second.Spec
		} else {
			props, err := cluster.WorkerProps(groupProps())
			if err != nil {
				t.Fatal(err)
			}
			if spec, err = cluster.NewWorkerSpec("w2", props, 0); err != nil {
				t.Fatal(err)
			}
		}
		w, err := cluster.StartWorker(spec)
		if err != nil {
			t.Fatal(err)
		}
		second = w
		if err := w.WaitHealthy(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ensureFirst(t)
	waitGroup(t, 2)
	return second
}

// ensureFirst starts the package's worker again through `connect-init run`
// when a test killed it.
func ensureFirst(t *testing.T) {
	t.Helper()
	if !worker.Exited() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w, err := cluster.StartWorkerCommand(worker.Spec, workerArgv, workerEnv)
	if err != nil {
		t.Fatal(err)
	}
	worker = w
	if err := w.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
}

// waitGroup waits until the group is Stable with n members.
func waitGroup(t *testing.T, n int) {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	admin, err := sarama.NewClusterAdmin([]string{cluster.Bootstrap()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ds, err := admin.DescribeConsumerGroups([]string{group})
		if err == nil && len(ds) == 1 && ds[0].State == "Stable" && len(ds[0].Members) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group never was Stable with %d members: %+v, %v", n, ds, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// startApply starts `connect-init apply` in the background; its stdout and
// stderr go to one log.
func startApply(t *testing.T, name string, env []string, args ...string) *testbed.Process {
	t.Helper()
	if env == nil {
		env = baseEnv
	}
	p, err := testbed.StartProcess("apply-"+name, append([]string{binary, "apply"}, args...), env, t.TempDir(), filepath.Join(t.TempDir(), name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	// SIGTERM: an apply stopped so releases the apply lease it holds.
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	return p
}

// exitOf waits for p and returns its exit code and output.
func exitOf(t *testing.T, p *testbed.Process, within time.Duration) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	code, err := p.ExitCode(ctx)
	if err != nil {
		t.Fatalf("%v\n%s", err, p.Log())
	}
	return code, p.Log()
}

// waitLog waits until p's log has substr.
func waitLog(t *testing.T, p *testbed.Process, substr string, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := p.WaitForLog(ctx, substr); err != nil {
		t.Fatalf("no %q: %v\n%s", substr, err, p.Log())
	}
}

var planFor = regexp.MustCompile(`plan for (\S+) from `)

// workerAt is the worker whose REST URL is u.
func workerAt(t *testing.T, u string) *testbed.Worker {
	t.Helper()
	for _, w := range []*testbed.Worker{worker, second} {
		if w != nil && strings.TrimSuffix(w.Spec.RESTURL, "/") == strings.TrimSuffix(u, "/") {
			return w
		}
	}
	t.Fatalf("no worker at %s", u)
	return nil
}

// TestNoopIsFast: an apply that has nothing to write returns as soon as it
// has read the plan: no hold, no lease, no record.
func TestNoopIsFast(t *testing.T) {
	ensureSecond(t)
	dir := filepath.Join(t.TempDir(), "connectors")
	writeFile(t, dir, "noop-sink.json", sinkJSON("noop-sink", seedTopic, filepath.Join(t.TempDir(), "noop.txt"), ""))
	if code, out := applyRun(t, "--dir", dir); code != 0 {
		t.Fatalf("create: exit %d\n%s", code, out)
	}
	before := configEnd(t)
	var took []time.Duration
	for range 3 {
		start := time.Now()
		code, out := applyRun(t, "--dir", dir)
		took = append(took, time.Since(start))
		if code != 0 || !strings.Contains(out, "nothing to write") || !strings.Contains(out, "noop-sink: ok: connector RUNNING") || strings.Contains(out, "apply lease") {
			t.Fatalf("no-op: exit %d\n%s", code, out)
		}
	}
	if after := configEnd(t); after != before {
		t.Errorf("no-op applies wrote %d records", after-before)
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	t.Logf("no-op apply, whole process (start, Kafka, the group, the proof, the plan): %v, %v, %v", took[0], took[1], took[2])
	// The old 3 s hold alone was longer than this bound.
	if took[1] >= 2500*time.Millisecond {
		t.Errorf("a no-op apply took %v (median)", took[1])
	}
}

// TestConcurrentAppliesWriteOnce: three applies of one directory at the
// same instant write what one apply writes (config-topic records), and
// exactly one of them creates each connector.
func TestConcurrentAppliesWriteOnce(t *testing.T) {
	ensureSecond(t)
	sinks := func(prefix string) string {
		dir := filepath.Join(t.TempDir(), "connectors")
		for _, n := range []string{"a", "b"} {
			writeFile(t, dir, prefix+n+".json", sinkJSON(prefix+n, seedTopic, filepath.Join(t.TempDir(), prefix+n+".txt"), ""))
		}
		return dir
	}
	// One apply of two new connectors: the baseline.
	before := configEnd(t)
	if code, out := applyRun(t, "--dir", sinks("once-")); code != 0 {
		t.Fatalf("one apply: exit %d\n%s", code, out)
	}
	one := configEnd(t) - before
	// Three at once, of another two.
	dir := sinks("conc-")
	before = configEnd(t)
	start := time.Now()
	var ps []*testbed.Process
	for i := range 3 {
		ps = append(ps, startApply(t, fmt.Sprintf("conc-%d", i), nil, "--dir", dir, "--wait=2m"))
	}
	created := 0
	var outs []string
	for _, p := range ps {
		code, out := exitOf(t, p, 4*time.Minute)
		outs = append(outs, out)
		if code != 0 {
			t.Errorf("%s: exit %d\n%s", p.Name, code, out)
		}
		created += strings.Count(out, "created conc-a\n") + strings.Count(out, "created conc-b\n")
	}
	three := configEnd(t) - before
	t.Logf("config records: one apply %d, three concurrent applies %d (all done in %v)", one, three, time.Since(start).Round(100*time.Millisecond))
	if three != one || created != 2 {
		t.Fatalf("three applies wrote %d records (one writes %d) and created %d times\n%s", three, one, created, strings.Join(outs, "\n----\n"))
	}
	for _, out := range outs {
		if !strings.Contains(out, "conc-a: ok: connector RUNNING") || !strings.Contains(out, "conc-b: ok: connector RUNNING") {
			t.Errorf("an apply did not confirm both connectors:\n%s", out)
		}
	}
}

// TestWorkerKilledMidWait: the worker apply found through the group is
// killed right after the write; apply moves to the other member and gives
// its verdict from that worker's reads, not from the one read before the
// kill.
func TestWorkerKilledMidWait(t *testing.T) {
	ensureSecond(t)
	t.Cleanup(func() { ensureSecond(t) })
	dir := filepath.Join(t.TempDir(), "connectors")
	writeFile(t, dir, "kill-sink.json", sinkJSON("kill-sink", seedTopic, filepath.Join(t.TempDir(), "kill.txt"), ""))
	p := startApply(t, "kill", nil, "--dir", dir, "--wait=2m")
	waitLog(t, p, "created kill-sink\n", 2*time.Minute)
	m := planFor.FindStringSubmatch(p.Log())
	if m == nil {
		t.Fatalf("no plan line:\n%s", p.Log())
	}
	victim := workerAt(t, m[1])
	victim.Kill()
	killed := time.Now()
	code, out := exitOf(t, p, 3*time.Minute)
	t.Logf("killed %s right after the write; apply exited %d %v later", victim.Spec.Name, code, time.Since(killed).Round(100*time.Millisecond))
	other := worker.Spec.RESTURL
	if victim == worker {
		other = second.Spec.RESTURL
	}
	for _, want := range []string{"the worker at " + m[1] + " stopped answering", "going on with " + other, "kill-sink: ok: connector RUNNING, 1/1 tasks RUNNING"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	if t.Failed() {
		t.Log(out)
	}
	t.Logf("apply's words:\n%s", grepLines(out, "created kill-sink", "stopped answering", "kill-sink:", "all 1 connectors"))
}

// TestPinnedWorkerKilled: with --url, a worker killed right after the write
// ends the apply with exit 1 saying on stdout that the worker is
// unreachable; no connector is blamed.
func TestPinnedWorkerKilled(t *testing.T) {
	w := ensureSecond(t)
	t.Cleanup(func() { ensureSecond(t) })
	dir := filepath.Join(t.TempDir(), "connectors")
	writeFile(t, dir, "pinned-sink.json", sinkJSON("pinned-sink", seedTopic, filepath.Join(t.TempDir(), "pinned.txt"), ""))
	p := startApply(t, "pinned", nil, "--dir", dir, "--wait=2m", "--url", w.Spec.RESTURL)
	waitLog(t, p, "created pinned-sink\n", 2*time.Minute)
	w.Kill()
	killed := time.Now()
	code, out := exitOf(t, p, 3*time.Minute)
	took := time.Since(killed)
	t.Logf("killed the pinned worker right after the write; apply exited %d %v later", code, took.Round(100*time.Millisecond))
	if code != 1 || !strings.Contains(out, "the worker at "+w.Spec.RESTURL) || !strings.Contains(out, "is unreachable") ||
		!strings.Contains(out, "the state of 1 connectors is unknown") || !strings.Contains(out, "unreachable="+w.Spec.RESTURL) {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if strings.Contains(out, "pinned-sink: not RUNNING") || strings.Contains(out, "pinned-sink: FAILED") || strings.Contains(out, "failed=pinned-sink") {
		t.Errorf("the connector was blamed for the worker:\n%s", out)
	}
	t.Logf("apply's words:\n%s", grepLines(out, "created pinned-sink", "unreachable", "unknown"))
	if took > time.Minute {
		t.Errorf("apply took %v to say the worker is unreachable (its wait was 2m)", took)
	}
}

// TestWriteDuringJoin: a third worker starts through `connect-init run`
// with CONNECT_INIT_CONNECTORS_DIR, and an apply by hand of the same
// directory starts as the worker joins the group: the writes go out during
// the rebalance that join starts. Both report success, and the connector
// is written once.
func TestWriteDuringJoin(t *testing.T) {
	ensureSecond(t)
	// The baseline: one connector created by one apply.
	base := filepath.Join(t.TempDir(), "base")
	writeFile(t, base, "join-base.json", sinkJSON("join-base", seedTopic, filepath.Join(t.TempDir(), "base.txt"), ""))
	before := configEnd(t)
	if code, out := applyRun(t, "--dir", base); code != 0 {
		t.Fatalf("baseline: exit %d\n%s", code, out)
	}
	one := configEnd(t) - before

	dir := filepath.Join(t.TempDir(), "connectors")
	writeFile(t, dir, "join-sink.json", sinkJSON("join-sink", seedTopic, filepath.Join(t.TempDir(), "join.txt"), ""))
	props, err := cluster.WorkerProps(groupProps())
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cluster.NewWorkerSpec("w3", props, 0)
	if err != nil {
		t.Fatal(err)
	}
	env := append(append(append([]string{}, testbed.BaseEnv()...), testbed.EnvFromProps(props)...),
		"CONNECT_INIT_LOCK=false", "CONNECT_INIT_CONNECTORS_DIR="+dir)
	before = configEnd(t)
	w3, err := cluster.StartWorkerCommand(spec, append([]string{binary, "run", "--"}, spec.Argv...), env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w3.Stop(10 * time.Second); waitGroup(t, 2) })
	waitLog(t, w3.Process, "joining group", 2*time.Minute)
	hand := startApply(t, "join-hand", nil, "--dir", dir, "--wait=2m")
	code, out := exitOf(t, hand, 4*time.Minute)
	if code != 0 || !strings.Contains(out, "join-sink: ok: connector RUNNING") {
		t.Fatalf("the apply by hand: exit %d\n%s", code, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := w3.WaitForLog(ctx, "msg=\"apply done\""); err != nil {
		t.Fatalf("the in-run apply of the joining worker did not report success: %v\n%s", err, tail(w3.Log(), 8000))
	}
	if strings.Contains(w3.Log(), "msg=\"apply failed\"") {
		t.Errorf("the in-run apply failed:\n%s", tail(w3.Log(), 8000))
	}
	if n := configEnd(t) - before; n != one {
		t.Errorf("the two applies wrote %d config records; one create writes %d\nby hand:\n%s\nin run:\n%s", n, one, out, grepLines(w3.Log(), "connect-init apply: "))
	}
	t.Logf("apply by hand during the join:\n%s\nthe joining worker's own apply:\n%s", grepLines(out, "created join-sink", "nothing to write", "planned again", "join-sink:"),
		grepLines(w3.Log(), "connect-init apply: "))
}

// TestLostAnswerReadBackOnRealWorker: a proxy in front of a real worker forwards a
// PUT of a config and holds Connect's answer until apply has given up
// waiting (--write-timeout=1s). apply reads the config back, finds it
// written, and does not write it again.
func TestLostAnswerReadBackOnRealWorker(t *testing.T) {
	ensureSecond(t)
	// A connector that runs on the group's members proves the proxy ours
	// (a URL no member advertises); its creation is the baseline.
	proof := filepath.Join(t.TempDir(), "proof")
	writeFile(t, proof, "proxy-proof.json", sinkJSON("proxy-proof", seedTopic, filepath.Join(t.TempDir(), "proof.txt"), ""))
	before := configEnd(t)
	if code, out := applyRun(t, "--dir", proof); code != 0 {
		t.Fatalf("baseline: exit %d\n%s", code, out)
	}
	one := configEnd(t) - before

	up, _ := url.Parse(worker.Spec.RESTURL)
	rp := httputil.NewSingleHostReverseProxy(up)
	var puts atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/config") && !strings.HasSuffix(r.URL.Path, "/validate") {
			puts.Add(1)
			rec := httptest.NewRecorder()
			rp.ServeHTTP(rec, r) // Connect carries the write out...
			<-r.Context().Done() // ...and its answer waits until apply hung up
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	dir := filepath.Join(t.TempDir(), "connectors")
	writeFile(t, dir, "lost-sink.json", sinkJSON("lost-sink", seedTopic, filepath.Join(t.TempDir(), "lost.txt"), ""))
	before = configEnd(t)
	code, out := applyRun(t, "--dir", dir, "--url", proxy.URL, "--write-timeout=1s", "--wait=2m")
	if code != 0 || !strings.Contains(out, "created lost-sink (its answer was lost; read back: the cluster holds the new config)") ||
		!strings.Contains(out, "lost-sink: ok: connector RUNNING") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if n := configEnd(t) - before; n != one || puts.Load() != 1 {
		t.Errorf("%d PUTs, %d config records (one create writes %d)\n%s", puts.Load(), n, one, out)
	}
}

// grepLines keeps the lines of s that contain any of subs.
func grepLines(s string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

var restartLine = regexp.MustCompile(`time=(\S+) level=WARN msg="watch: restarted" .*connector=watch-broken cause="task 0 FAILED" restart=(\d)`)

// TestWatchRestartsAndRepairs: `apply --watch` restarts a task that keeps
// failing through Connect's restart API at growing intervals and gives up
// after --max-restarts; a connector deleted by hand is put back; SIGTERM
// ends the watcher.
func TestWatchRestartsAndRepairs(t *testing.T) {
	ensureSecond(t)
	dir := filepath.Join(t.TempDir(), "connectors")
	writeFile(t, dir, "watch-broken.json", sinkJSON("watch-broken", seedTopic, "/nonexistent-dir-watch-itest/out.txt", ""))
	writeFile(t, dir, "watch-keep.json", sinkJSON("watch-keep", seedTopic, filepath.Join(t.TempDir(), "keep.txt"), ""))
	creating := func() int {
		return worker.CountInLog("Creating task watch-broken-0") + second.CountInLog("Creating task watch-broken-0")
	}
	p := startApply(t, "watch", nil, "--dir", dir, "--wait=30s", "--watch", "--watch-interval=1s", "--restart-backoff=1s", "--max-restarts=3")
	waitLog(t, p, "watch-broken: FAILED: task 0 FAILED", 2*time.Minute)
	startsBefore := creating()
	waitLog(t, p, `msg="watch: giving up restarting"`, 2*time.Minute)
	var at []time.Time
	for _, m := range restartLine.FindAllStringSubmatch(p.Log(), -1) {
		ts, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			t.Fatal(err)
		}
		at = append(at, ts)
	}
	if len(at) != 3 {
		t.Fatalf("%d restarts logged, want 3\n%s", len(at), p.Log())
	}
	gaps := []time.Duration{at[1].Sub(at[0]), at[2].Sub(at[1])}
	t.Logf("restarts of watch-broken %v apart (backoff 2 and 6 units of 1s, looks every 1s); worker task starts %d -> %d", gaps, startsBefore, creating())
	if gaps[0] < 2*time.Second || gaps[1] < 6*time.Second || gaps[1] <= gaps[0] {
		t.Errorf("restarts %v apart, want >= 2s then >= 6s", gaps)
	}
	if creating() < startsBefore+3 {
		t.Errorf("the workers started watch-broken's task %d times after the failure, want 3 more", creating()-startsBefore)
	}
	// Drift: a connector deleted by hand is put back.
	req, _ := http.NewRequest(http.MethodDelete, worker.Spec.RESTURL+"/connectors/watch-keep", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	deleted := time.Now()
	waitLog(t, p, `connector=watch-keep action=create`, time.Minute)
	t.Logf("watch-keep deleted by hand (DELETE answered %d), put back %v later:\n%s", resp.StatusCode, time.Since(deleted).Round(100*time.Millisecond),
		grepLines(p.Log(), "watch: drift", "watch: put back", "created watch-keep"))
	want := connectorConfig(t, "watch-keep")
	if want["name"] != "watch-keep" {
		t.Errorf("watch-keep after the repair: %v", want)
	}
	// Drift: a connector changed by hand gets its file's config back.
	changed := map[string]string{}
	for k, v := range want {
		changed[k] = v
	}
	changed["topics"] = "changed-by-hand"
	body, _ := json.Marshal(changed)
	req, _ = http.NewRequest(http.MethodPut, worker.Spec.RESTURL+"/connectors/watch-keep/config", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitLog(t, p, `connector=watch-keep action=update`, time.Minute)
	if got := connectorConfig(t, "watch-keep"); got["topics"] != want["topics"] {
		t.Errorf("watch-keep's topics after the repair: %q, want %q", got["topics"], want["topics"])
	}
	if drift := grepLines(p.Log(), "watch: drift"); !strings.Contains(drift, `connector=watch-keep cause="its config differs: ~topics"`) || strings.Contains(drift, "changed-by-hand") {
		t.Errorf("the drift line does not name the changed key, or shows its value:\n%s", drift)
	}
	p.Stop(10 * time.Second)
	code, out := exitOf(t, p, 30*time.Second)
	if code != 128+15 {
		t.Errorf("the watcher exited %d after SIGTERM\n%s", code, tail(out, 3000))
	}
}

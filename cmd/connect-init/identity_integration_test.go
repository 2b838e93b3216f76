//go:build integration

package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
)

// Issue 13: group identity proven by the cluster registry and by Connect's
// own records. Every scenario runs a foreign Connect cluster F in group G
// (real workers on the package's shared Kafka cluster) and starts our
// worker through connect-init in the same group with our own config topic.
// Each asserts that connect-init refuses (exit 1, the JVM never started,
// the refusal names F's member, URL, host, the rule and the fix) or, for
// our own restarted worker, starts; and that F's workers stay healthy
// throughout: /health 200 at every look and no new generation in F's log.

// clusterTopics are the worker properties of Connect cluster name in group.
func clusterTopics(group, name string) map[string]string {
	return map[string]string{
		"group.id":             group,
		"config.storage.topic": group + "-" + name + "-configs",
		"offset.storage.topic": group + "-" + name + "-offsets",
		"status.storage.topic": group + "-" + name + "-status",
	}
}

// createConnectors creates n FileStreamSource connectors (one task each)
// named prefix-1..n on the worker at base and waits until they run. Each
// writes 3 config records (connector-, task-, commit-), after the leader's
// session-key record: n connectors make a config topic of 1+3n records.
func createConnectors(ctx context.Context, t *testing.T, dir, base, prefix, topic string, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i)
		input := filepath.Join(dir, name+".txt")
		if err := os.WriteFile(input, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		putConnector(ctx, t, base, name, map[string]string{
			"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
			"tasks.max":       "1", "file": input, "topic": topic,
		})
		waitConnectorRunning(ctx, t, base, name)
	}
}

// endOffset reads a topic partition's end offset.
func endOffset(t *testing.T, topic string) int64 {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	client, err := sarama.NewClient(strings.Split(cluster.Bootstrap(), ","), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	off, err := client.GetOffset(topic, 0, sarama.OffsetNewest)
	if err != nil {
		t.Fatal(err)
	}
	return off
}

// seedConfigTopic fills cluster props' config topic with n connectors the
// way Connect writes them: a real worker of that cluster, under a
// throw-away group.id so that it never meets G, creates them and stops.
func seedConfigTopic(ctx context.Context, t *testing.T, name string, props map[string]string, prefix string, n int) {
	t.Helper()
	seed := map[string]string{}
	for k, v := range props {
		seed[k] = v
	}
	seed["group.id"] = props["group.id"] + "-seed-" + name
	sp, err := cluster.WorkerProps(seed)
	if err != nil {
		t.Fatal(err)
	}
	w := startTestWorker(t, props["group.id"]+"-"+name+"-seed", sp)
	if err := w.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	createConnectors(ctx, t, w.Spec.Dir, w.Spec.RESTURL, prefix, props["group.id"]+"-lines", n)
	w.Stop(20 * time.Second)
	if got, want := endOffset(t, props["config.storage.topic"]), int64(1+3*n); got != want {
		t.Fatalf("seeded config topic %s has %d records, want %d", props["config.storage.topic"], got, want)
	}
}

// minHealthLooks is how many /health answers a watch collects at least
// (4 a second: at least 5 s of looking).
const minHealthLooks = 20

// healthWatch polls a worker's /health while a scenario runs.
type healthWatch struct {
	url    string
	stop   chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	looks  int
	failed []string
}

func watchHealth(url string) *healthWatch {
	h := &healthWatch{url: url, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		client := &http.Client{Timeout: 5 * time.Second}
		for {
			resp, err := client.Get(url + "/health")
			h.mu.Lock()
			h.looks++
			if err != nil {
				h.failed = append(h.failed, err.Error())
			} else {
				if resp.StatusCode != http.StatusOK {
					h.failed = append(h.failed, fmt.Sprintf("HTTP %d", resp.StatusCode))
				}
				resp.Body.Close()
			}
			h.mu.Unlock()
			select {
			case <-h.stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	return h
}

// finish stops the watch and fails t unless every look answered 200.
func (h *healthWatch) finish(t *testing.T) int {
	t.Helper()
	// Keep looking a few seconds past the scenario: a disturbed worker's
	// rebalance loop takes a moment to show.
	for {
		h.mu.Lock()
		n := h.looks
		h.mu.Unlock()
		if n >= minHealthLooks {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(h.stop)
	<-h.done
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.failed) > 0 || h.looks == 0 {
		t.Errorf("%s/health: %d of %d looks failed: %v", h.url, len(h.failed), h.looks, h.failed)
	}
	return h.looks
}

// foreignCluster is F: real workers in group G that connect-init must not
// disturb.
type foreignCluster struct {
	workers     []*testbed.Worker
	generations []int // "Joined group at generation" lines per worker, at start
	watches     []*healthWatch
}

func (f *foreignCluster) watch() {
	for _, w := range f.workers {
		f.generations = append(f.generations, w.CountInLog("Joined group at generation"))
		f.watches = append(f.watches, watchHealth(w.Spec.RESTURL))
	}
}

// check asserts F stayed healthy and joined no new generation.
func (f *foreignCluster) check(t *testing.T) {
	t.Helper()
	for i, w := range f.workers {
		looks := f.watches[i].finish(t)
		if got := w.CountInLog("Joined group at generation"); got != f.generations[i] {
			t.Errorf("foreign worker %s joined %d new generation(s) during the scenario:\n%s", w.Spec.Name, got-f.generations[i], logTail(w.Log(), 3000))
		}
		if n := w.CountInLog("Forcing rebalance"); n > 0 {
			t.Errorf("foreign worker %s logged \"Forcing rebalance\" %d times", w.Spec.Name, n)
		}
		t.Logf("foreign worker %s: /health 200 at all %d looks, still at its generation (%d join lines)", w.Spec.Name, looks, f.generations[i])
	}
}

// startForeign starts F's worker (bare, or through connect-init run when
// viaInit) and creates n connectors; it waits until the group is Stable
// with that worker at its config offset.
func startForeign(ctx context.Context, t *testing.T, name string, props map[string]string, n int, viaInit bool, dist *testbed.Dist, wantOffset int64) *testbed.Worker {
	t.Helper()
	wp, err := cluster.WorkerProps(props)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cluster.NewWorkerSpec(props["group.id"]+"-"+name, wp, 0)
	if err != nil {
		t.Fatal(err)
	}
	if dist != nil {
		for i, a := range spec.Argv {
			if a == cluster.Dist.Classpath() {
				spec.Argv[i] = dist.Classpath()
			}
		}
	}
	argv, env := spec.Argv, []string(nil)
	if viaInit {
		argv = append([]string{binary, "run", "--"}, spec.Argv...)
		env = connectInitEnv(wp)
	}
	w, err := cluster.StartWorkerCommand(spec, argv, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(20 * time.Second) })
	if err := w.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	createConnectors(ctx, t, spec.Dir, spec.RESTURL, name, props["group.id"]+"-"+name+"-lines", n)
	m := waitStableMember(ctx, t, props["group.id"], props["config.storage.topic"], spec.RESTURL)
	t.Logf("worker %s (%s): member %s, config offset %d, config topic %s", name, spec.RESTURL, m.MemberID, *m.ConfigOffset, props["config.storage.topic"])
	if wantOffset != anyOffset && *m.ConfigOffset != wantOffset {
		t.Fatalf("worker %s's config offset is %d, want %d", name, *m.ConfigOffset, wantOffset)
	}
	return w
}

// anyOffset tells startForeign not to check the config offset: a worker
// with no connector reports -1 or 1, depending on whether its join came
// before or after its leader wrote the session key.
const anyOffset = -2

// runOurs starts our worker through connect-init (cmd "run" or "prepare")
// and returns its exit code and log, failing t if it does not exit.
func runOurs(ctx context.Context, t *testing.T, name string, props map[string]string, cmd string, extraEnv ...string) (int, string, *testbed.WorkerSpec) {
	t.Helper()
	wp, err := cluster.WorkerProps(props)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cluster.NewWorkerSpec(props["group.id"]+"-"+name, wp, 0)
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{binary, cmd}
	if cmd == "run" {
		argv = append(append(argv, "--"), spec.Argv...)
	}
	w, err := cluster.StartWorkerCommand(spec, argv, connectInitEnv(wp, extraEnv...))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Kill()
	code, err := w.ExitCode(ctx)
	if err != nil {
		t.Fatalf("connect-init %s did not exit: %v; log:\n%s", cmd, err, logTail(w.Log(), 4000))
	}
	return code, w.Log(), spec
}

// assertRefused checks a refusal: exit 1, no JVM, and a group-gate line
// naming each want.
func assertRefused(t *testing.T, code int, log string, wants ...string) string {
	t.Helper()
	if code != 1 {
		t.Fatalf("connect-init exited %d, want 1; log:\n%s", code, log)
	}
	for _, never := range []string{"starting the worker", "Kafka Connect worker initializ", "Kafka version"} {
		if strings.Contains(log, never) {
			t.Errorf("the worker started (log has %q):\n%s", never, log)
		}
	}
	msg := firstLine(log, "group gate")
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			t.Errorf("the refusal lacks %q: %s", w, msg)
		}
	}
	return msg
}

// TestIdentityForeignShorterConfigTopic is issue 13's scenario: F has one
// connector (assignment at config offset 4); our config topic holds 16
// records (5 connectors). Offsets cannot tell (4 < 16); F's assigned
// connector, which our config topic never names, does (unknown-connector).
func TestIdentityForeignShorterConfigTopic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	g := uniqueGroup(t, "id13")["group.id"]
	ours := clusterTopics(g, "ours")
	seedConfigTopic(ctx, t, "ours", ours, "ours-src", 5)
	fw := startForeign(ctx, t, "f", clusterTopics(g, "f"), 1, false, nil, 4)
	f := &foreignCluster{workers: []*testbed.Worker{fw}}
	f.watch()
	for _, cmd := range []string{"run", "prepare"} {
		code, log, _ := runOurs(ctx, t, "ours-"+cmd, ours, cmd)
		msg := assertRefused(t, code, log, fw.Spec.RESTURL, "client host /127.0.0.1", "rule unknown-connector", "f-1",
			"assignment offset 4", "16 records", "CONNECT_GROUP_ID")
		t.Logf("connect-init %s: %s", cmd, msg)
	}
	f.check(t)
}

// TestIdentityForeignLongerConfigTopic is the mirror: F has 5 connectors
// (config offset 16), our config topic 1 connector (4 records). F reports a
// config offset our topic cannot reach (config-offset-ahead), and runs
// connectors we never named.
func TestIdentityForeignLongerConfigTopic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	g := uniqueGroup(t, "id13m")["group.id"]
	ours := clusterTopics(g, "ours")
	seedConfigTopic(ctx, t, "ours", ours, "ours-src", 1)
	fw := startForeign(ctx, t, "f", clusterTopics(g, "f"), 5, false, nil, 16)
	f := &foreignCluster{workers: []*testbed.Worker{fw}}
	f.watch()
	code, log, _ := runOurs(ctx, t, "ours", ours, "run")
	msg := assertRefused(t, code, log, fw.Spec.RESTURL, "client host /127.0.0.1", "rule config-offset-ahead", "reported config offset 16 vs our config topic's end offset 4")
	t.Logf("connect-init run: %s", msg)
	f.check(t)
}

// TestIdentityForeignWithoutConnectors: F runs no connector at all (its
// config topic holds only the session key: offset 1); ours defines 5. No
// assigned connector to compare; but a Stable group that, watched for the
// settle time, runs none of the connectors our config topic created (each
// creation makes a cluster reading our topic rebalance) is not ours
// (unassigned-connectors).
func TestIdentityForeignWithoutConnectors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	g := uniqueGroup(t, "id13e")["group.id"]
	ours := clusterTopics(g, "ours")
	seedConfigTopic(ctx, t, "ours", ours, "ours-src", 5)
	fw := startForeign(ctx, t, "f", clusterTopics(g, "f"), 0, false, nil, anyOffset)
	f := &foreignCluster{workers: []*testbed.Worker{fw}}
	f.watch()
	code, log, _ := runOurs(ctx, t, "ours", ours, "run")
	msg := assertRefused(t, code, log, fw.Spec.RESTURL, "rule unassigned-connectors", "ours-src-1, ours-src-2")
	t.Logf("connect-init run: %s", msg)
	f.check(t)
}

// TestIdentityOnlyForeignThroughConnectInit: F started through connect-init, so
// the registry holds F's claim on G and F's URL. Our config topic is a copy
// of F's in all that Connect's records show (same connector names, same
// length), so only the registry can tell: the group is claimed by F's
// config topic (registry-claim) and F's URL is registered for F
// (registry-worker). With CONNECT_INIT_GROUP_HANDOVER naming F's config
// topic while F still runs, connect-init still refuses: F's member is F's.
func TestIdentityOnlyForeignThroughConnectInit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	g := uniqueGroup(t, "id13r")["group.id"]
	ours := clusterTopics(g, "ours")
	fTopics := clusterTopics(g, "f")
	seedConfigTopic(ctx, t, "ours", ours, "f", 1) // connector "f-1", as F's
	fw := startForeign(ctx, t, "f", fTopics, 1, true, nil, 4)
	if !strings.Contains(fw.Log(), "registered in the cluster registry") || !strings.Contains(fw.Log(), "claimed the group") {
		t.Fatalf("F's connect-init did not claim the group:\n%s", logTail(fw.Log(), 4000))
	}
	f := &foreignCluster{workers: []*testbed.Worker{fw}}
	f.watch()
	code, log, _ := runOurs(ctx, t, "ours", ours, "run")
	msg := assertRefused(t, code, log, "registered to another Connect cluster", fTopics["config.storage.topic"], fw.Spec.RESTURL,
		"rule registry-worker", "CONNECT_INIT_GROUP_HANDOVER="+fTopics["config.storage.topic"])
	t.Logf("connect-init run: %s", msg)
	code, log, _ = runOurs(ctx, t, "ours-handover", ours, "prepare", "CONNECT_INIT_GROUP_HANDOVER="+fTopics["config.storage.topic"])
	msg = assertRefused(t, code, log, fw.Spec.RESTURL, "rule registry-worker", "only once no worker of that cluster is in the group")
	t.Logf("connect-init prepare with a handover while F runs: %s", msg)
	f.check(t)
}

// TestIdentityHandoverAfterForeignStops: once F's workers are gone, the
// registry's claim still refuses (the group is F's, whatever the offsets
// say: the group is empty); CONNECT_INIT_GROUP_HANDOVER naming F's config
// topic hands it over, and then our workers start without the setting.
func TestIdentityHandoverAfterForeignStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	g := uniqueGroup(t, "id13h")["group.id"]
	ours := clusterTopics(g, "ours")
	fTopics := clusterTopics(g, "f")
	fw := startForeign(ctx, t, "f", fTopics, 0, true, nil, anyOffset)
	fw.Stop(20 * time.Second)
	waitGroupEmpty(ctx, t, g)
	code, log, _ := runOurs(ctx, t, "ours-1", ours, "prepare")
	msg := assertRefused(t, code, log, "registered to another Connect cluster", "CONNECT_INIT_GROUP_HANDOVER="+fTopics["config.storage.topic"])
	t.Logf("prepare on F's empty group: %s", msg)
	code, log, _ = runOurs(ctx, t, "ours-2", ours, "prepare", "CONNECT_INIT_GROUP_HANDOVER="+fTopics["config.storage.topic"])
	if code != 0 || !strings.Contains(log, "took the group over from config topic") {
		t.Fatalf("prepare with the handover exited %d:\n%s", code, log)
	}
	code, log, _ = runOurs(ctx, t, "ours-3", ours, "prepare")
	if code != 0 {
		t.Fatalf("prepare after the handover exited %d:\n%s", code, log)
	}
	t.Logf("after the handover: %s", firstLine(log, "registered in the cluster registry"))
}

// waitGroupEmpty waits until group has no members.
func waitGroupEmpty(ctx context.Context, t *testing.T, group string) {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	admin, err := sarama.NewClusterAdmin(strings.Split(cluster.Bootstrap(), ","), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for {
		ds, err := admin.DescribeConsumerGroups([]string{group})
		if err == nil && len(ds) == 1 && len(ds[0].Members) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s never emptied", group)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// TestIdentityRestartedWorkerNewURL: our cluster runs two workers
// started through connect-init, A (the leader, with two connectors) and B.
// B is killed (kill -9: its member lingers until its session times out)
// and comes back on a new REST port, a new URL, through connect-init: it
// must start. Then B is killed again and comes back bare on yet another
// URL (unregistered), and a third worker C starts through connect-init
// beside it. Nobody may be called foreign: A's and B's old URLs are
// registered ours, and the bare B is tied to our cluster by our status
// topic or left unverified. (The leader is not the one killed: a dead
// leader fails the peer gate, by design, until its member leaves.)
func TestIdentityRestartedWorkerNewURL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	g := uniqueGroup(t, "id13n")["group.id"]
	ours := clusterTopics(g, "ours")
	a := startForeign(ctx, t, "a", ours, 2, true, nil, 7)
	b := startForeign(ctx, t, "b", ours, 0, true, nil, 7)
	b.Kill()

	noForeign := func(w *testbed.Worker, what string) {
		t.Helper()
		line := firstLine(w.Log(), "worker group checked")
		if !strings.Contains(line, "foreign=0") || strings.Contains(w.Log(), "group gate") {
			t.Errorf("%s saw a foreign member: %s\n%s", what, line, logTail(w.Log(), 4000))
		}
		var judged []string
		for _, l := range strings.Split(w.Log(), "\n") {
			if strings.Contains(l, "group member judged") {
				judged = append(judged, l[strings.Index(l, "member="):])
			}
		}
		t.Logf("%s: %s; verdicts: %v", what, line[strings.Index(line, "members="):], judged)
	}
	b2 := startForeign(ctx, t, "b2", ours, 0, true, nil, 7)
	noForeign(b2, "B restarted through connect-init at "+b2.Spec.RESTURL)
	b2.Kill()

	wp, err := cluster.WorkerProps(ours)
	if err != nil {
		t.Fatal(err)
	}
	b3 := startTestWorker(t, g+"-b3", wp)
	if err := b3.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	waitStableMember(ctx, t, g, ours["config.storage.topic"], b3.Spec.RESTURL)
	c := startForeign(ctx, t, "c", ours, 0, true, nil, 7)
	noForeign(c, "C beside A and the bare restarted B at "+b3.Spec.RESTURL)
	for _, w := range []*testbed.Worker{a, c, b3} {
		if err := w.WaitHealthy(ctx); err != nil {
			t.Error(err)
		}
	}
}

// TestIdentityLegacyForeignWorker: F's worker is Connect 3.9.1 (the
// protocol cp-kafka-connect 7.x speaks), shorter config topic as in issue
// 13; decided by unknown-connector.
func TestIdentityLegacyForeignWorker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	legacy, err := testbed.Fetch(ctx, testbed.LegacyVersion)
	if err != nil {
		t.Fatal(err)
	}
	g := uniqueGroup(t, "id13l")["group.id"]
	ours := clusterTopics(g, "ours")
	seedConfigTopic(ctx, t, "ours", ours, "ours-src", 5)
	fw := startForeign(ctx, t, "f", clusterTopics(g, "f"), 1, false, legacy, 4)
	if !strings.Contains(fw.Log(), "Kafka version: "+testbed.LegacyVersion) {
		t.Fatalf("F's worker is not %s:\n%s", testbed.LegacyVersion, firstLine(fw.Log(), "Kafka version"))
	}
	f := &foreignCluster{workers: []*testbed.Worker{fw}}
	f.watch()
	code, log, _ := runOurs(ctx, t, "ours", ours, "run")
	msg := assertRefused(t, code, log, fw.Spec.RESTURL, "rule unknown-connector", "f-1")
	t.Logf("connect-init run beside a %s worker: %s", testbed.LegacyVersion, msg)
	f.check(t)
}

// TestIdentityBothThroughConnectInit: two Connect clusters, both started
// through connect-init at the same instant into the same empty group,
// each with its own config topic. Neither can see the other's member yet;
// the registry decides: the first claim owns the group (registry-claim),
// the other refuses, before or after writing its own claim (a claim that
// landed second is taken back). The winner stays healthy, and the loser,
// started again, is refused by the claim and the winner's registered URL.
func TestIdentityBothThroughConnectInit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	g := uniqueGroup(t, "id13b")["group.id"]
	var ws []*testbed.Worker
	for _, name := range []string{"x", "y"} {
		wp, err := cluster.WorkerProps(clusterTopics(g, name))
		if err != nil {
			t.Fatal(err)
		}
		spec, err := cluster.NewWorkerSpec(g+"-"+name, wp, 0)
		if err != nil {
			t.Fatal(err)
		}
		w, err := cluster.StartWorkerCommand(spec, append([]string{binary, "run", "--"}, spec.Argv...), connectInitEnv(wp))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Stop(20 * time.Second) })
		ws = append(ws, w)
	}
	var winner, loser *testbed.Worker
	select {
	case <-ws[0].Done():
		loser, winner = ws[0], ws[1]
	case <-ws[1].Done():
		loser, winner = ws[1], ws[0]
	case <-ctx.Done():
		t.Fatalf("neither connect-init refused:\n%s\n%s", logTail(ws[0].Log(), 3000), logTail(ws[1].Log(), 3000))
	}
	code, _ := loser.ExitCode(ctx)
	winURL := winner.Spec.RESTURL
	msg := assertRefused(t, code, loser.Log(), "registered to another Connect cluster", winner.Spec.Props["config.storage.topic"])
	t.Logf("%s refused: %s", loser.Spec.Name, msg)
	if err := winner.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(winner.Log(), "claimed the group") {
		t.Errorf("the winner did not claim the group: %s", firstLine(winner.Log(), "registered in the cluster registry"))
	}
	waitStableMember(ctx, t, g, winner.Spec.Props["config.storage.topic"], winURL)
	f := &foreignCluster{workers: []*testbed.Worker{winner}}
	f.watch()
	code, log, _ := runOurs(ctx, t, "again", loser.Spec.Props, "run")
	msg = assertRefused(t, code, log, "registered to another Connect cluster", winURL, "rule registry-worker")
	t.Logf("%s started again: %s", loser.Spec.Name, msg)
	f.check(t)
}

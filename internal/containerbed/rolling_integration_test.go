//go:build integration && rolling

package containerbed

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/connect-init/connect-init/internal/testbed"
)

// The rolling update of a Connect service, measured (issue 32 item 3):
// long, so behind its own build tag and `make rolling`, never in CI.
//
// Each variant deploys examples/swarm/stack.yml as users do (docker stack
// deploy, SSL, the four secrets) with three replicas and a group of its
// own, creates two FileStreamSink connectors of four tasks each, and then
// runs `docker service update --force` under the file's update_config,
// stop_grace_period and healthcheck, while `bedctl poll` asks the workers
// for GET /connectors?expand=status every rollPoll. The record gives, per
// task, the time it was not RUNNING and how often it moved; the workers'
// logs give the generations; docker events give the order Swarm stopped
// and started the tasks in.

const (
	rollReplicas   = 3
	rollConnectors = 2
	rollTasks      = 4 // tasks.max of each connector
	rollPoll       = 250 * time.Millisecond
)

// rollVariant is one way to run the workers.
type rollVariant struct {
	name string
	// bare runs Confluent's launcher directly: the example's entrypoint
	// execs the CMD instead of `connect-init run --`, no prepare service,
	// no healthcheck (the bare image has none).
	bare bool
	// unset are variables of the example's workers removed from their
	// environment (the setting left at Connect's default).
	unset []string
	// rollback also checks that an update whose tasks fail is rolled back.
	rollback bool
}

// rollVariants compare the example as it stands (its
// scheduled.rebalance.max.delay.ms included), the same with Connect's
// default delay (5 minutes: the variable unset), and bare (the example's
// workers without connect-init, the example's delay kept), so that each
// replaced worker's rejoin through connect-init stands beside bare's.
var rollVariants = []rollVariant{
	{name: "example", rollback: true},
	{name: "default-delay", unset: []string{"CONNECT_SCHEDULED_REBALANCE_MAX_DELAY_MS"}},
	{name: "bare", bare: true},
}

// rollResult is one variant's figures.
type rollResult struct {
	variant           rollVariant
	update            time.Duration // docker service update → UpdateStatus completed
	allRunning        time.Duration // docker service update → every task RUNNING again
	gen0, gen1        int
	summary           CostSummary
	slots             []slotTimeline
	rollbackTook      time.Duration
	rollbackRestarted int
	// watched is what the example's own watcher (connect-watch: doctor
	// --watch, 30 s looks) measured of the update's rejoins.
	watched string
}

// slotTimeline is one replaced worker, in the order Swarm replaced them.
type slotTimeline struct {
	slot                  string
	leader                bool
	tasksHeld             int           // tasks the old worker ran before the update
	heldDown              time.Duration // the longest outage of those tasks
	kill, died, start     time.Time     // old container signalled, exited; new one started
	joined, healthy, next time.Time     // new worker's first join, its healthy event, the next slot's kill
	newID                 string        // the new container
	// profiles are the new container's start-up profile lines
	// (connect-init's, one per process that logs one), as "where: key ms, …".
	profiles []string
}

// rejoin is the time from the old container's stop to the new worker's
// first join of the group (0 when either is unknown).
func (s slotTimeline) rejoin() time.Duration {
	if s.kill.IsZero() || s.joined.IsZero() {
		return 0
	}
	return s.joined.Sub(s.kill)
}

func TestSwarmRollingUpdate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	createExampleSecrets(t, ctx)
	want := map[string]bool{}
	for _, v := range strings.Fields(strings.ReplaceAll(os.Getenv("CITEST_ROLLING_VARIANTS"), ",", " ")) {
		want[v] = true
	}
	var results []rollResult
	for _, v := range rollVariants {
		if len(want) > 0 && !want[v.name] {
			continue
		}
		t.Run(v.name, func(t *testing.T) {
			r := rollOnce(t, v)
			results = append(results, r)
			t.Logf("%s:\n%s", v.name, rollTable([]rollResult{r}))
		})
	}
	if len(results) == 0 {
		t.Fatalf("CITEST_ROLLING_VARIANTS=%q names no variant", os.Getenv("CITEST_ROLLING_VARIANTS"))
	}
	table := rollTable(results)
	t.Logf("rolling update, %d workers, %d connectors × %d tasks, polled every %s:\n%s", rollReplicas, rollConnectors, rollTasks, rollPoll, table)
	if p := os.Getenv("CITEST_ROLLING_TABLE"); p != "" {
		if err := os.WriteFile(p, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// createExampleSecrets creates the four secrets examples/swarm/stack.yml
// names (labelled: the bed's sweep removes them).
func createExampleSecrets(t *testing.T, ctx context.Context) {
	t.Helper()
	pki := bed.Brokers.PKI
	for name, path := range map[string]string{"connect.keystore.p12": pki.Client.PKCS12, "connect.truststore.p12": pki.TrustPKCS12} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := CreateSecret(ctx, name, data); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"connect_keystore_password", "connect_truststore_password"} {
		if err := CreateSecret(ctx, name, []byte(pki.StorePassword)); err != nil {
			t.Fatal(err)
		}
	}
}

// rollStack writes the example stack for a variant: its own group and
// topics, rollReplicas workers, and for bare the launcher without
// connect-init. Everything else (update_config, stop_grace_period,
// healthcheck, restart policy) is the file's.
func rollStack(t *testing.T, v rollVariant) (path string, worker map[string]any) {
	t.Helper()
	doc := exampleStack(t)
	services := doc["services"].(map[string]any)
	connect := services["connect"].(map[string]any)
	group := "roll-" + v.name
	own := map[string]string{
		"CONNECT_GROUP_ID":             group,
		"CONNECT_CONFIG_STORAGE_TOPIC": "_" + group + "-configs",
		"CONNECT_OFFSET_STORAGE_TOPIC": "_" + group + "-offsets",
		"CONNECT_STATUS_STORAGE_TOPIC": "_" + group + "-status",
	}
	for name, s := range services {
		env := s.(map[string]any)["environment"].(map[string]any)
		for k, val := range own {
			env[k] = val
		}
		// The file connectors are not on the image's default plugin path
		// (KAFKA-13748): a stack that runs them names their jar. Without
		// it a restarted worker is refused by connect-init's plugins
		// step, as the peers run a class this worker could not load.
		if _, ok := env["CONNECT_PLUGIN_PATH"]; !ok {
			env["CONNECT_PLUGIN_PATH"] = "/opt/kafka/libs/connect-file-" + testbed.Version() + ".jar"
		}
		if name == "connect" || name == "connect-init-prepare" || name == "connect-watch" {
			for _, k := range v.unset {
				if _, ok := env[k]; !ok {
					t.Fatalf("examples/swarm/stack.yml: service %s no longer sets %s: update the rolling variants", name, k)
				}
				delete(env, k)
			}
		}
	}
	connect["deploy"].(map[string]any)["replicas"] = rollReplicas
	if v.bare {
		delete(services, "connect-init-prepare")
		entry := connect["entrypoint"].([]any)
		found := false
		for i, a := range entry {
			s := a.(string)
			if strings.Contains(s, `exec connect-init run -- "$$@"`) {
				entry[i] = strings.Replace(s, `exec connect-init run -- "$$@"`, `exec "$$@"`, 1)
				found = true
			}
		}
		if !found {
			t.Fatalf("examples/swarm/stack.yml: the connect service's entrypoint no longer execs `connect-init run -- \"$$@\"`: update rollStack")
		}
		connect["healthcheck"] = map[string]any{"disable": true}
	}
	data, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(bed.Dir, "roll-"+v.name+".yml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, connect
}

// serviceState is `docker service inspect`'s UpdateStatus.State ("" before
// the first update).
func serviceState(ctx context.Context, svc string) string {
	out, _ := Docker(ctx, "service", "inspect", "--format", "{{if .UpdateStatus}}{{.UpdateStatus.State}}{{end}}", svc)
	return strings.TrimSpace(out)
}

// waitUpdate waits until the service's update reaches one of the final
// states and returns it.
func waitUpdate(t *testing.T, ctx context.Context, svc string) string {
	t.Helper()
	for {
		switch st := serviceState(ctx, svc); st {
		case "completed", "paused", "rollback_completed", "rollback_paused":
			return st
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: update never ended (state %q): %v\n%s", svc, serviceState(context.Background(), svc), ctx.Err(), TaskStates(context.Background(), svc))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// pollRecord reads the observer's output so far.
func pollRecord(t *testing.T, ctx context.Context, poller string) []Observation {
	t.Helper()
	out, err := Docker(ctx, "logs", poller)
	if err != nil {
		t.Fatal(err)
	}
	var obs []Observation
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		o, err := ParsePoll(sc.Text())
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, o)
	}
	return obs
}

// waitAllRunning waits until the last `steady` answered observations after
// since all show every unit RUNNING, and returns the time of the first of
// them.
func waitAllRunning(t *testing.T, ctx context.Context, poller string, ids []string, since time.Time, steady int) time.Time {
	t.Helper()
	for {
		obs := pollRecord(t, ctx, poller)
		var run []Observation
		for _, o := range obs {
			if o.At.Before(since) || !o.Answered {
				continue
			}
			if AllRunning(o, ids) {
				run = append(run, o)
			} else {
				run = run[:0]
			}
		}
		if len(run) >= steady {
			return run[0].At
		}
		select {
		case <-ctx.Done():
			last := "no answer"
			if len(obs) > 0 {
				last = fmt.Sprint(obs[len(obs)-1].Units)
			}
			t.Fatalf("the connectors' tasks were not all RUNNING again: %v; last poll: %s", ctx.Err(), last)
		case <-time.After(2 * time.Second):
		}
	}
}

var logTime = regexp.MustCompile(`(?m)^(\S+) .*Joined group at generation`)

// firstJoin is the docker timestamp of a container's first "Joined group".
func firstJoin(ctx context.Context, id string) time.Time {
	out, _ := combined(ctx, "docker", "logs", "--timestamps", id)
	if m := logTime.FindStringSubmatch(out); m != nil {
		if ts, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
			return ts
		}
	}
	return time.Time{}
}

// event is one line of `docker events --format '{{json .}}'`.
type event struct {
	Action   string `json:"Action"`
	TimeNano int64  `json:"timeNano"`
	Actor    struct {
		ID         string            `json:"ID"`
		Attributes map[string]string `json:"Attributes"`
	} `json:"Actor"`
}

// watchEvents streams the service's containers' start, kill and
// health_status events from now on (the daemon keeps only its last 256
// events, and every health probe makes three); stop ends the stream and
// returns what it saw.
func watchEvents(t *testing.T, ctx context.Context, svc string) (stop func() []event) {
	t.Helper()
	ectx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ectx, "docker", "events", "--filter", "type=container", "--filter", "label=com.docker.swarm.service.name="+svc,
		"--filter", "event=start", "--filter", "event=kill", "--filter", "event=die", "--filter", "event=health_status", "--format", "{{json .}}")
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the stream is subscribed before anything happens
	return func() []event {
		time.Sleep(time.Second)
		cancel()
		cmd.Wait() //nolint:errcheck // killed on purpose
		var evs []event
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.TrimSpace(l) == "" {
				continue
			}
			var e event
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("docker events: %v: %s", err, l)
			}
			evs = append(evs, e)
		}
		return evs
	}
}

// containerIP is a container's address on Network.
func containerIP(ctx context.Context, id string) string {
	out, _ := Docker(ctx, "inspect", "--format", `{{(index .NetworkSettings.Networks "`+Network+`").IPAddress}}`, id)
	return strings.TrimSpace(out)
}

func rollOnce(t *testing.T, v rollVariant) rollResult {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	r := rollResult{variant: v}
	stack := StackPrefix + "-roll-" + strings.ReplaceAll(v.name, "connect-init", "ci")
	svc := stack + "_connect"
	file, _ := rollStack(t, v)
	cmd := exec.CommandContext(ctx, "docker", "stack", "deploy", "-c", file, stack)
	cmd.Env = append(os.Environ(), "CONNECT_IMAGE="+bed.Image)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docker stack deploy: %v\n%s", err, out)
	}
	poller := stack + "-poll"
	t.Cleanup(func() {
		bg := context.Background()
		if t.Failed() {
			t.Logf("%s tasks:\n%s\nlogs:\n%s", svc, TaskStates(bg, svc), tail(ServiceLogsAll(bg, svc), 8000))
		}
		Docker(bg, "rm", "-f", poller)   //nolint:errcheck
		Docker(bg, "stack", "rm", stack) //nolint:errcheck
		// The next variant reuses the network alias "connect": wait for
		// this stack's tasks to be gone.
		for range 120 {
			if out, _ := Docker(bg, "ps", "-aq", "--filter", "label=com.docker.stack.namespace="+stack); strings.TrimSpace(out) == "" {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
	})
	ids, _, _ := stableGroup(t, ctx, rollReplicas, svc)

	// Two sink connectors of rollTasks tasks each: no external system, and
	// FileStreamSink makes exactly tasks.max tasks.
	var units []string
	for i := range rollConnectors {
		name := fmt.Sprintf("sink-%d", i)
		body := fmt.Sprintf(`{"name":%q,"config":{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","file":"/dev/null","topics":"roll-%s","tasks.max":"%d"}}`, name, v.name, rollTasks)
		out, err := Exec(ctx, ids[0], "bedctl", "http", "POST", "http://127.0.0.1:8083/connectors", body)
		if err != nil || !strings.HasPrefix(out, "201") {
			t.Fatalf("POST /connectors %s: %v %s", name, err, firstLine(out))
		}
		units = append(units, name)
		for task := range rollTasks {
			units = append(units, fmt.Sprintf("%s/%d", name, task))
		}
	}
	if _, err := Docker(ctx, "run", "-d", "--name", poller, "--label", Label, "--network", Network, "--entrypoint", "bedctl", bed.Image,
		"poll", rollPoll.String(), "tasks.connect", "8083", "/connectors?expand=status"); err != nil {
		t.Fatal(err)
	}
	// Steady before the update: every unit RUNNING for 5 s, one generation.
	waitAllRunning(t, ctx, poller, units, time.Time{}, int(5*time.Second/rollPoll))
	ids, gen0, leaderURL := stableGroup(t, ctx, rollReplicas, svc)
	r.gen0 = gen0
	before := pollRecord(t, ctx, poller)
	held := map[string][]string{} // worker address → task ids
	for id, u := range before[len(before)-1].Units {
		if strings.Contains(id, "/") {
			host, _, _ := strings.Cut(u.Worker, ":")
			held[host] = append(held[host], id)
		}
	}
	oldIP := map[string]string{} // short container id → address
	for _, c := range ids {
		oldIP[shortID(c)] = containerIP(ctx, c)
	}
	t.Logf("before: generation %d, leader %s, tasks by worker %v", r.gen0, leaderURL, held)

	stopEvents := watchEvents(t, ctx, svc)
	t0 := time.Now()
	if _, err := Docker(ctx, "service", "update", "--detach", "--force", svc); err != nil {
		t.Fatal(err)
	}
	if st := waitUpdate(t, ctx, svc); st != "completed" {
		t.Fatalf("update ended %q, want completed:\n%s", st, TaskStates(ctx, svc))
	}
	tDone := time.Now()
	r.update = tDone.Sub(t0)
	evs := stopEvents()
	tAll := waitAllRunning(t, ctx, poller, units, t0, int(5*time.Second/rollPoll))
	r.allRunning = tAll.Sub(t0)
	var rec []Observation
	for _, o := range pollRecord(t, ctx, poller) {
		if !o.At.Before(t0) && !o.At.After(tAll) {
			rec = append(rec, o)
		}
	}
	costs := Costs(rec, units)
	r.summary = Summarize(costs)
	var newIDs []string
	newIDs, r.gen1, _ = stableGroup(t, ctx, rollReplicas, svc)
	for _, c := range costs {
		t.Logf("%-10s outages %d, down %6.1fs (longest %6.1fs), moves %d", c.ID, c.Outages, c.Down.Seconds(), c.MaxDown.Seconds(), c.Moves)
	}

	// Swarm's order: each old worker stopped, its replacement started, and
	// (with the healthcheck) healthy before the next old worker stopped.
	old := map[string]bool{} // short ids: docker ps -q shortens, events do not
	for _, c := range ids {
		old[shortID(c)] = true
	}
	isNew := map[string]bool{}
	for _, c := range newIDs {
		isNew[shortID(c)] = true
	}
	slotOf := func(e event) string {
		parts := strings.Split(e.Actor.Attributes["com.docker.swarm.task.name"], ".")
		if len(parts) < 2 {
			return "?"
		}
		return parts[1]
	}
	bySlot := map[string]*slotTimeline{}
	var order []*slotTimeline
	for _, e := range evs {
		at := time.Unix(0, e.TimeNano)
		slot := slotOf(e)
		e.Actor.ID = shortID(e.Actor.ID)
		switch {
		case e.Action == "kill" && old[e.Actor.ID]:
			if bySlot[slot] != nil {
				continue // a second signal to the same container
			}
			st := &slotTimeline{slot: slot, kill: at}
			ip := oldIP[e.Actor.ID]
			st.leader = strings.Contains(leaderURL, "//"+ip+":")
			st.tasksHeld = len(held[ip])
			for _, c := range costs {
				for _, id := range held[ip] {
					if c.ID == id {
						st.heldDown = max(st.heldDown, c.MaxDown)
					}
				}
			}
			bySlot[slot] = st
			order = append(order, st)
		case e.Action == "die" && old[e.Actor.ID] && bySlot[slot] != nil && bySlot[slot].died.IsZero():
			bySlot[slot].died = at
		case e.Action == "start" && isNew[e.Actor.ID] && bySlot[slot] != nil && bySlot[slot].start.IsZero():
			bySlot[slot].start = at
			bySlot[slot].newID = e.Actor.ID
			bySlot[slot].joined = firstJoin(ctx, e.Actor.ID)
		case strings.HasPrefix(e.Action, "health_status: healthy") && isNew[e.Actor.ID] && bySlot[slot] != nil && bySlot[slot].healthy.IsZero():
			bySlot[slot].healthy = at
		}
	}
	if len(order) != rollReplicas {
		t.Fatalf("docker events: %d old workers stopped during the update, want %d: %v", len(order), rollReplicas, evs)
	}
	for i, st := range order {
		if i+1 < len(order) {
			st.next = order[i+1].kill
		}
		if st.start.IsZero() {
			t.Errorf("slot %s: no start of its new container in docker events", st.slot)
		}
		if st.joined.IsZero() {
			t.Errorf("slot %s: its new worker's log has no \"Joined group at generation\"", st.slot)
		}
		if !v.bare && st.newID != "" {
			// The shipped image's default: the in-worker lock (the
			// provider jar is installed), as in the other scenarios.
			logs := ContainerLogs(ctx, st.newID)
			if !Started(logs) {
				t.Errorf("slot %s: the new worker %s started without connect-init's exec:\n%s", st.slot, st.newID, tail(logs, 3000))
			} else if mode := lockMode(logs); mode != "worker" {
				t.Errorf("slot %s: the new worker %s: startup lock mode=%q, want mode=worker (the image installs the provider jar):\n%s", st.slot, st.newID, mode, ConnectInitPart(logs))
			}
			st.profiles = ProfileLines(logs)
			if len(st.profiles) == 0 {
				t.Errorf("slot %s: the new worker %s logged no start-up profile:\n%s", st.slot, st.newID, ConnectInitPart(logs))
			}
		}
		if !v.bare {
			if st.healthy.IsZero() {
				t.Errorf("slot %s: its new worker never reported healthy during the update", st.slot)
			} else if !st.next.IsZero() && !st.healthy.Before(st.next) {
				t.Errorf("slot %s: Swarm stopped the next worker (slot %s) at %s, before this one was healthy (%s)",
					st.slot, order[i+1].slot, st.next.Format(time.RFC3339Nano), st.healthy.Format(time.RFC3339Nano))
			}
		}
		r.slots = append(r.slots, *st)
		t.Logf("slot %s (leader %v, %d tasks): kill %s, exited +%s, start +%.1fs, joined +%s, healthy +%s, next kill +%s; its tasks down at most %.1fs; profile: %s",
			st.slot, st.leader, st.tasksHeld, st.kill.Format("15:04:05.000"), since(st.kill, st.died), st.start.Sub(st.kill).Seconds(),
			since(st.kill, st.joined), since(st.kill, st.healthy), since(st.kill, st.next), st.heldDown.Seconds(), strings.Join(st.profiles, "; "))
	}
	if r.summary.Open > 0 {
		t.Errorf("%d units were not RUNNING at the end of the record", r.summary.Open)
	}
	r.watched = watchedRejoin(ctx, stack+"_connect-watch")
	t.Logf("the example's watcher: %s", r.watched)

	if v.rollback {
		// An update whose new tasks fail (a configuration error: exit 2
		// before the worker starts) must be rolled back by failure_action.
		tr := time.Now()
		if _, err := Docker(ctx, "service", "update", "--detach", "--env-add", "CONNECT_INIT_TIMEOUT=soon", svc); err != nil {
			t.Fatal(err)
		}
		st := waitUpdate(t, ctx, svc)
		r.rollbackTook = time.Since(tr)
		if st != "rollback_completed" {
			t.Fatalf("a failing update ended %q, want rollback_completed:\n%s", st, TaskStates(ctx, svc))
		}
		env, _ := Docker(ctx, "service", "inspect", "--format", "{{json .Spec.TaskTemplate.ContainerSpec.Env}}", svc)
		if strings.Contains(env, "CONNECT_INIT_TIMEOUT=soon") {
			t.Errorf("rolled back, but the spec still has the failing setting: %s", env)
		}
		after, _, _ := stableGroup(t, ctx, rollReplicas, svc)
		keep := map[string]bool{}
		for _, c := range newIDs {
			keep[c] = true
		}
		for _, c := range after {
			if !keep[c] {
				r.rollbackRestarted++
			}
		}
		t.Logf("failing update rolled back in %.1fs; %d of %d workers restarted by it:\n%s", r.rollbackTook.Seconds(), r.rollbackRestarted, rollReplicas, TaskStates(ctx, svc))
	}
	return r
}

// watchedRejoin is what the stack's doctor --watch service measured of
// the rejoins so far, read from its /metrics.
func watchedRejoin(ctx context.Context, svc string) string {
	cs, err := Containers(ctx, svc)
	if err != nil || len(cs) == 0 {
		return "no watcher container"
	}
	out, err := Exec(ctx, cs[0], "bedctl", "http", "GET", "http://127.0.0.1:9465/metrics")
	if err != nil {
		return "its /metrics did not answer: " + err.Error()
	}
	least, most, n, ok := WatcherRejoin(out)
	if !ok {
		return "no rejoin counted yet"
	}
	return fmt.Sprintf("%d rejoins counted, the longest at least %.0f s, at most %.0f s", n, least, most)
}

// shortID is a container id as docker ps -q prints it.
func shortID(id string) string { return id[:min(12, len(id))] }

// since formats t-from in seconds ("-" when t is unknown).
func since(from, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%.1fs", t.Sub(from).Seconds())
}

// rollTable renders the results as the Markdown of docs/benchmarks.md.
func rollTable(rs []rollResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| variant | update (s) | all RUNNING again (s) | rebalances | task-seconds not RUNNING | per task: median / max (s) | longest outage (s) | outages | moves (tasks moved) |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		s := r.summary
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %d | %.0f | %.1f / %.1f | %.1f | %d | %d (%d of %d) |\n",
			r.variant.name, r.update.Seconds(), r.allRunning.Seconds(), r.gen1-r.gen0, s.TaskDown.Seconds(),
			s.MedianDown.Seconds(), s.MaxDown.Seconds(), s.LongestOutage.Seconds(), s.Outages, s.Moves, s.TasksWithMoves, s.Tasks)
	}
	var bare []time.Duration // bare's rejoins, the reference
	for _, r := range rs {
		if r.variant.bare {
			for _, st := range r.slots {
				if d := st.rejoin(); d > 0 {
					bare = append(bare, d)
				}
			}
		}
	}
	ref, haveRef := MedianDuration(bare)
	fmt.Fprintf(&b, "\nPer replaced worker, in the order Swarm replaced them, seconds after its old container was stopped; \"rejoin\" is until the new worker joined the group")
	if haveRef {
		fmt.Fprintf(&b, ", \"vs bare\" against bare's median rejoin (%.1f s)", ref.Seconds())
	}
	fmt.Fprintf(&b, ":\n\n")
	fmt.Fprintf(&b, "| variant | slot | leader | tasks held | old worker exited | new container started | rejoin | vs bare | healthy | next worker stopped | its tasks' longest outage |\n")
	fmt.Fprintf(&b, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		slots := append([]slotTimeline(nil), r.slots...)
		sort.SliceStable(slots, func(i, j int) bool { return slots[i].kill.Before(slots[j].kill) })
		for _, st := range slots {
			vs := "-"
			if haveRef && st.rejoin() > 0 {
				vs = fmt.Sprintf("%+.1fs", (st.rejoin() - ref).Seconds())
			}
			fmt.Fprintf(&b, "| %s | %s | %v | %d | %s | %s | %s | %s | %s | %s | %.1f |\n", r.variant.name, st.slot, st.leader, st.tasksHeld,
				since(st.kill, st.died), since(st.kill, st.start), since(st.kill, st.joined), vs, since(st.kill, st.healthy), since(st.kill, st.next), st.heldDown.Seconds())
		}
	}
	if haveRef {
		fmt.Fprintf(&b, "\n")
		for _, r := range rs {
			if r.variant.bare {
				continue
			}
			within, n := 0, 0
			var worst time.Duration
			for _, st := range r.slots {
				if d := st.rejoin(); d > 0 {
					n++
					worst = max(worst, d-ref)
					if d <= ref+5*time.Second {
						within++
					}
				}
			}
			fmt.Fprintf(&b, "%s: %d of %d replaced workers rejoined within bare + 5 s (the slowest %+.1f s against bare's median).\n", r.variant.name, within, n, worst.Seconds())
		}
	}
	fmt.Fprintf(&b, "\nconnect-init's start-up profile of each new container (milliseconds):\n\n")
	for _, r := range rs {
		for _, st := range r.slots {
			if len(st.profiles) > 0 {
				fmt.Fprintf(&b, "- %s, slot %s (rejoin %s): %s\n", r.variant.name, st.slot, since(st.kill, st.joined), strings.Join(st.profiles, "; "))
			}
		}
	}
	fmt.Fprintf(&b, "\nThe example's own watcher (`connect-watch`, `doctor --watch --interval=30s`), read after the update:\n\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "- %s: %s\n", r.variant.name, r.watched)
	}
	for _, r := range rs {
		if r.variant.rollback {
			fmt.Fprintf(&b, "\n%s: a failing update (CONNECT_INIT_TIMEOUT=soon, exit 2) was rolled back in %.1f s; %d of %d workers restarted by it.\n",
				r.variant.name, r.rollbackTook.Seconds(), r.rollbackRestarted, rollReplicas)
		}
	}
	return b.String()
}

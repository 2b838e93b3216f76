//go:build integration

package containerbed

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/connect-init/connect-init/internal/testbed"
)

// bed is started once for the package: every scenario runs against the
// same brokers.
var bed *Bed

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	// An interrupted run still removes what it started.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		cancel()
		if bed != nil {
			bed.Close()
		}
		os.Exit(1)
	}()
	var err error
	bed, err = Start(ctx)
	cancel()
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "containerbed: start:", err)
	} else {
		// The versions every scenario of this run ran with.
		fmt.Fprintf(os.Stderr, "containerbed: docker %s; Kafka %s; image %s\n", DockerVersions(context.Background()), testbed.Version(), bed.Image)
		code = m.Run()
	}
	if err := bed.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "containerbed: cleanup:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// workerEnv is a Connect cluster named group on the bed's brokers.
func workerEnv(group string, extra ...string) []string {
	env := []string{
		"CONNECT_BOOTSTRAP_SERVERS=" + bed.Brokers.Bootstrap,
		"CONNECT_GROUP_ID=" + group,
		"CONNECT_CONFIG_STORAGE_TOPIC=_" + group + "-configs",
		"CONNECT_OFFSET_STORAGE_TOPIC=_" + group + "-offsets",
		"CONNECT_STATUS_STORAGE_TOPIC=_" + group + "-status",
		"CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR=3",
		"CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR=3",
		"CONNECT_STATUS_STORAGE_REPLICATION_FACTOR=3",
		"CONNECT_OFFSET_STORAGE_PARTITIONS=3",
		"CONNECT_STATUS_STORAGE_PARTITIONS=2",
		"CONNECT_KEY_CONVERTER=org.apache.kafka.connect.json.JsonConverter",
		"CONNECT_VALUE_CONVERTER=org.apache.kafka.connect.json.JsonConverter",
		"CONNECT_INIT_EXPECTED_BROKERS=3",
		"CONNECT_INIT_TIMEOUT=45s",
		// postConnectors creates FileStream connectors: on the
		// cp-kafka-connect stand-in, as on the image, they are on no
		// default path. Only their directory, not the image's default
		// /usr/share/java/ (Kafka's own jars, scanned again as plugins:
		// the example scenarios pay for that, these need not).
		"CONNECT_PLUGIN_PATH=/usr/share/filestream-connectors",
	}
	return append(env, extra...)
}

// svc is one `docker service create`.
type svc struct {
	name     string
	replicas int
	dnsrr    bool
	hostname string
	env      []string
	// entrypoint replaces the image's (nil: connect-init run -- CMD);
	// bare runs the Confluent stand-in directly, without connect-init.
	entrypoint []string
	bare       bool
	// mounts are --mount specs (type=bind,src=...,dst=...).
	mounts []string
	// extra are more `docker service create` flags (--secret, --health-cmd).
	extra []string
	// keepHealthcheck keeps the image's HEALTHCHECK (the Dockerfile's
	// `connect-init healthcheck`). Without it the service runs with
	// --no-healthcheck: Swarm adds a task to its service's name (and to
	// tasks.<name>) only once its HEALTHCHECK passes, and a worker that
	// advertises the service name proves that name reaches it before it
	// can pass (restauth_integration_test.go advertises a task hostname
	// for that reason). Layouts that advertise a task's own address keep it.
	keepHealthcheck bool
}

// lockModeRe is connect-init's line naming where the worker waits for the
// startup lock, in text or JSON logs.
var lockModeRe = regexp.MustCompile(`msg="startup lock mode"[^\n]*? mode=(\w+)|"msg":"startup lock mode"[^\n]*?"mode":"(\w+)"`)

// lockMode is the startup lock mode a container's log names ("" when none).
func lockMode(logs string) string {
	m := lockModeRe.FindStringSubmatch(logs)
	if m == nil {
		return ""
	}
	return m[1] + m[2]
}

// wantLockMode is the mode a worker started with env must log: the
// shipped images install the provider jar, so the default (auto) is the
// in-worker lock; CONNECT_INIT_LOCK_MODE=exec is the named variant.
func wantLockMode(env []string) string {
	for _, e := range env {
		if e == "CONNECT_INIT_LOCK_MODE=exec" {
			return "exec"
		}
	}
	return "worker"
}

func (s svc) create(t *testing.T, ctx context.Context) {
	t.Helper()
	args := ServiceArgs(s.name)
	args = append(args, "--network", Network, "--restart-condition", "none", "--replicas", fmt.Sprint(max(s.replicas, 1)))
	if s.dnsrr {
		args = append(args, "--endpoint-mode", "dnsrr")
	}
	if s.hostname != "" {
		args = append(args, "--hostname", s.hostname)
	}
	for _, e := range s.env {
		args = append(args, "--env", e)
	}
	for _, m := range s.mounts {
		args = append(args, "--mount", m)
	}
	args = append(args, s.extra...)
	if !s.keepHealthcheck && !slices.Contains(s.extra, "--health-cmd") {
		args = append(args, "--no-healthcheck")
	}
	switch {
	case s.bare:
		args = append(args, "--entrypoint", "/etc/confluent/docker/run", bed.Image)
	case s.entrypoint != nil:
		args = append(args, "--entrypoint", s.entrypoint[0], bed.Image)
		args = append(args, s.entrypoint[1:]...)
	default:
		args = append(args, bed.Image)
	}
	if _, err := Docker(ctx, args...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s tasks:\n%s\nlogs:\n%s", s.name, TaskStates(context.Background(), s.name), tail(ServiceLogsAll(context.Background(), s.name), 6000))
		}
		Docker(context.Background(), "service", "rm", s.name) //nolint:errcheck
	})
}

// stableGroup waits until want running containers of services have joined
// one and the same generation, and returns their ids, that generation and
// the leader URL.
func stableGroup(t *testing.T, ctx context.Context, want int, services ...string) ([]string, int, string) {
	t.Helper()
	for {
		var ids []string
		gens := map[int]int{}
		leader := ""
		for _, s := range services {
			cs, _ := Containers(ctx, s)
			for _, c := range cs {
				g, l := Generation(ContainerLogs(ctx, c))
				ids = append(ids, c)
				gens[g]++
				leader = l
			}
		}
		if len(ids) == want && len(gens) == 1 {
			for g := range gens {
				if g >= 0 {
					return ids, g, leader
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no stable generation of %d workers of %v: generations %v", want, services, gens)
		case <-time.After(time.Second):
		}
	}
}

// postConnectors asks every worker for POST /connectors on its own REST
// server; a follower forwards it to the leader's advertised URL. It
// returns how many succeeded and the failures' answers.
func postConnectors(t *testing.T, ctx context.Context, group string, ids []string) (int, []string) {
	t.Helper()
	ok := 0
	var fails []string
	for i, c := range ids {
		body := fmt.Sprintf(`{"name":"%s-%d","config":{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","file":"/dev/null","topic":"%s-t","tasks.max":"1"}}`, group, i, group)
		out, err := Exec(ctx, c, "bedctl", "http", "POST", "http://127.0.0.1:8083/connectors", body)
		if err == nil && strings.HasPrefix(out, "201") {
			ok++
			continue
		}
		fails = append(fails, fmt.Sprintf("%s: %s %v", c[:12], firstLine(out), err))
	}
	return ok, fails
}

func firstLine(s string) string {
	l, rest, _ := strings.Cut(s, "\n")
	if len(rest) > 200 {
		rest = rest[:200]
	}
	return l + " " + rest
}

var (
	// earlierRe is a failure of a step before the peers step.
	earlierRe = regexp.MustCompile(`msg="gate failed" component=connect-init gate=(settings|brokers|topics|coordinator|group|plugins|lock)\b[^\n]*`)
	refusedRe = regexp.MustCompile(`msg="REST peer check failed"[^\n]*? url=(\S+) source=own[^\n]*? status=(\S+) error="((?:[^"\\]|\\.)*)"[^\n]*? fix="((?:[^"\\]|\\.)*)"`)
)

// mustStart deploys services through connect-init, waits until every
// worker exec'd and joined one generation, and checks that every worker's
// POST /connectors succeeds.
func mustStart(t *testing.T, group string, want int, services ...svc) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var names []string
	for _, s := range services {
		s.create(t, ctx)
		names = append(names, s.name)
	}
	ids, gen, leader := stableGroup(t, ctx, want, names...)
	for _, c := range ids {
		logs := ContainerLogs(ctx, c)
		if !Started(logs) {
			t.Fatalf("%s joined without connect-init's exec:\n%s", c, tail(logs, 3000))
		}
		if _, ok := OwnProof(logs); !ok {
			t.Fatalf("%s: no passed self-probe in connect-init's log:\n%s", c, ConnectInitPart(logs))
		}
	}
	// The lock mode each service's workers ran: the shipped image's
	// in-worker lock unless the scenario names the exec variant.
	for _, s := range services {
		cs, err := Containers(ctx, s.name)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if got, want := lockMode(ContainerLogs(ctx, c)), wantLockMode(s.env); got != want {
				t.Fatalf("%s (%s): startup lock mode=%q, want mode=%s:\n%s", c, s.name, got, want, tail(ContainerLogs(ctx, c), 3000))
			}
		}
		t.Logf("%s: %d worker(s) took the startup lock with mode=%s", s.name, len(cs), wantLockMode(s.env))
	}
	ok, fails := postConnectors(t, ctx, group, ids)
	t.Logf("%d workers in generation %d, leader %s; POST /connectors succeeded on %d, failed: %v", len(ids), gen, leader, ok, fails)
	if ok != len(ids) {
		t.Fatalf("connect-init started the workers, but Connect cannot forward in this layout: %v", fails)
	}
	// New connectors rebalance the group (a new generation); it settles
	// again in one generation, without a forced rebalance anywhere.
	ids, _, _ = stableGroup(t, ctx, want, names...)
	for _, c := range ids {
		if n := strings.Count(ContainerLogs(ctx, c), "Forcing rebalance"); n > 0 {
			t.Errorf("%s logged \"Forcing rebalance\" %d times", c, n)
		}
	}
}

// mustRefuse deploys s through connect-init and waits for the peer gate's
// verdict on our own URL; then deploys the same layout bare (Confluent's
// launcher alone) and checks that Connect fails to forward in it.
func mustRefuse(t *testing.T, group string, s svc, wantStatus string, wantInError ...string) {
	mustRefuseLayout(t, group, s, nil, wantStatus, wantInError...)
}

// mustRefuseLayout is mustRefuse with the bare layout given (nil: s).
func mustRefuseLayout(t *testing.T, group string, s svc, bareLayout []svc, wantStatus string, wantInError ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s.create(t, ctx)
	m := waitRefusal(t, ctx, s)
	t.Logf("connect-init: own %s %s: %s", m[1], m[2], m[3])
	if m[2] != wantStatus {
		t.Errorf("status %s, want %s", m[2], wantStatus)
	}
	for _, w := range wantInError {
		if !strings.Contains(m[3], w) {
			t.Errorf("error does not say %q", w)
		}
	}
	if !strings.Contains(m[4], "{{.Task.Name}}") || !strings.Contains(m[4], "one-replica service") {
		t.Errorf("fix = %s", m[4])
	}
	// A task that proves its URL reaches it may start: when it is checked
	// before its siblings are in the service's DNS, the name resolves to
	// it alone, and the proof is true then (the siblings are refused once
	// the name resolves to them too, so no two workers join behind one
	// name). Any other start is a wrong verdict.
	// Judged container by container (docker logs): docker service logs
	// can drop lines, and one run under load read from it a start
	// without the self-probe line that must precede it.
	cs, err := AllContainers(ctx, s.name)
	if err != nil {
		t.Fatal(err)
	}
	var started, unproven []string
	for _, c := range cs {
		logs := ContainerLogs(ctx, c)
		keepLogs(t, s.name, c, logs)
		if !Started(logs) {
			continue
		}
		started = append(started, c)
		if resolved, ok := ProvenAlone(logs); ok {
			t.Logf("one task started: its name resolved to it alone (%s) when it was checked; the other tasks were refused", resolved)
			continue
		}
		resolved, _ := OwnProof(logs)
		unproven = append(unproven, fmt.Sprintf("%s (own URL resolved to %q); connect-init's whole log before the exec:\n%s", c, resolved, ConnectInitPart(logs)))
	}
	if len(started) > 1 || len(unproven) > 0 {
		t.Errorf("%d worker(s) started although the URL was refused: %v; without a proof that the name resolved to the worker alone: %s", len(started), started, strings.Join(unproven, "\n"))
	}
	Docker(ctx, "service", "rm", s.name) //nolint:errcheck

	if bareLayout == nil {
		// The same layout under a new name, advertising that name.
		bare := s
		bare.name = s.name + "-bare"
		bare.env = nil
		for _, e := range s.env {
			bare.env = append(bare.env, strings.ReplaceAll(e, "="+s.name, "="+bare.name))
		}
		bareLayout = []svc{bare}
	}
	want := 0
	var names []string
	for _, b := range bareLayout {
		b.bare = true
		b.env = append(append([]string{}, b.env...), "CONNECT_GROUP_ID="+group+"-bare",
			"CONNECT_CONFIG_STORAGE_TOPIC=_"+group+"-bare-configs", "CONNECT_OFFSET_STORAGE_TOPIC=_"+group+"-bare-offsets", "CONNECT_STATUS_STORAGE_TOPIC=_"+group+"-bare-status")
		b.create(t, ctx)
		want += max(b.replicas, 1)
		names = append(names, b.name)
	}
	ids, gen, leader := stableGroup(t, ctx, want, names...)
	ok, fails := postConnectors(t, ctx, group, ids)
	t.Logf("bare Connect: %d workers in generation %d, leader %s; POST /connectors succeeded on %d of %d, failed: %v", len(ids), gen, leader, ok, len(ids), fails)
	// Behind a round-robin name each follower's JVM resolves the leader's
	// URL to one task and caches it for 30 s (networkaddress.cache.ttl):
	// all three followers of a 4-replica dnsrr service reach the leader by
	// chance with probability 1/64, and the layout looks healthy to Connect
	// until the cache expires. Ask again after the cache's lifetime, twice
	// at most: the layout is sound only if every round forwards every
	// request (chance 1/64^3 for a broken one).
	for round := 1; ok == len(ids) && round <= 2; round++ {
		t.Logf("every request reached the leader; asking again once the workers' DNS cache (30 s) has expired (round %d)", round+1)
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(31 * time.Second): // the JVM's cache lifetime, not a guess at readiness
		}
		ok, fails = postConnectors(t, ctx, fmt.Sprintf("%s-r%d", group, round), ids)
		t.Logf("bare Connect, round %d: POST /connectors succeeded on %d of %d, failed: %v", round+1, ok, len(ids), fails)
	}
	if ok == len(ids) {
		t.Fatalf("connect-init refused, but Connect forwarded every request in this layout, in three rounds")
	}
}

func TestSwarmServicePerWorker(t *testing.T) {
	// Incident 1's layout: one service per worker, advertised host = the
	// service name. endpoint_mode dnsrr: the name resolves to the task's
	// own address. Without hostname: the image's default, the in-worker
	// startup lock; with it: the lock before the exec
	// (CONNECT_INIT_LOCK_MODE=exec), the variant for images without the
	// provider jar.
	for _, withHostname := range []bool{false, true} {
		t.Run(fmt.Sprintf("hostname=%v", withHostname), func(t *testing.T) {
			group := fmt.Sprintf("perworker-%v", withHostname)
			var ss []svc
			for i := 1; i <= 2; i++ {
				name := fmt.Sprintf("%s-%d", group, i)
				s := svc{name: name, dnsrr: true, env: workerEnv(group, "CONNECT_REST_ADVERTISED_HOST_NAME="+name)}
				if withHostname {
					s.hostname = name
					s.env = append(s.env, "CONNECT_INIT_LOCK_MODE=exec")
				}
				ss = append(ss, s)
			}
			mustStart(t, group, 2, ss...)
			if !withHostname {
				// Issue 50 in the image's default lock mode: a third
				// service whose value.converter drifted is refused by its
				// group step before the exec; the group stays as it was.
				name := group + "-drift"
				drift := svc{name: name, dnsrr: true, env: driftedEnv(group, "CONNECT_REST_ADVERTISED_HOST_NAME="+name,
					"CONNECT_VALUE_CONVERTER=org.apache.kafka.connect.storage.StringConverter")}
				mustRefuseDrift(t, group, drift, 2, []string{ss[0].name, ss[1].name},
					"settings parity", "value.converter", "org.apache.kafka.connect.storage.StringConverter", "org.apache.kafka.connect.json.JsonConverter", "fix: set value.converter")
			}
		})
	}
}

func TestSwarmServicePerWorkerVIP(t *testing.T) {
	// The same with Swarm's default endpoint mode: the service name is a
	// virtual IP, no address of the task. With IPVS it routes to the one
	// task and the worker must start; a kernel without IPVS (this CI
	// machine: no /proc/sys/net/ipv4/vs) routes nothing to a VIP, and then
	// connect-init must refuse, as Connect cannot forward there either.
	t.Parallel() // mostly waiting out connect-init's timeout
	group := "pervip"
	if HasIPVS() {
		var ss []svc
		for i := 1; i <= 2; i++ {
			name := fmt.Sprintf("%s-%d", group, i)
			ss = append(ss, svc{name: name, env: workerEnv(group, "CONNECT_REST_ADVERTISED_HOST_NAME="+name)})
		}
		mustStart(t, group, 2, ss...)
		return
	}
	var bares []svc
	for i := 1; i <= 2; i++ {
		name := fmt.Sprintf("%s-bare-%d", group, i)
		bares = append(bares, svc{name: name, env: workerEnv(group, "CONNECT_REST_ADVERTISED_HOST_NAME="+name)})
	}
	mustRefuseLayout(t, group, svc{name: group + "-1", env: workerEnv(group, "CONNECT_REST_ADVERTISED_HOST_NAME="+group+"-1")},
		bares, "unreachable", "0 of")
}

func TestSwarmReplicasBehindOneName(t *testing.T) {
	t.Parallel()
	for _, dnsrr := range []bool{false, true} {
		t.Run(fmt.Sprintf("dnsrr=%v", dnsrr), func(t *testing.T) {
			t.Parallel()
			// A name of its own per run, so that go test -count=N
			// repeats the scenario on fresh groups and topics.
			group := fmt.Sprintf("replicas-dnsrr-%v%s", dnsrr, runSuffix(t.Name()))
			// workerEnv's timeout (45 s), not a shorter one: under a
			// load average of 76 one run's topics and coordinator steps
			// took the whole of a 20 s budget, and every task failed at
			// the group step before its peers step.
			s := svc{name: group, replicas: 4, dnsrr: dnsrr,
				env: workerEnv(group, "CONNECT_REST_ADVERTISED_HOST_NAME="+group, "CONNECT_INIT_LOCK=false")}
			switch {
			case dnsrr:
				// How many addresses the refusal names depends on
				// which tasks were still there: a task refused a moment
				// before the one whose line is read has left the name.
				mustRefuse(t, group, s, "other-host", "answered by another host", "addresses, a DNS round robin", "dnsrr")
			case HasIPVS():
				mustRefuse(t, group, s, "other-host", "answered by another host", "virtual IP")
			default:
				mustRefuse(t, group, s, "unreachable", "0 of")
			}
		})
	}
}

// exampleStack reads examples/swarm/stack.yml.
func exampleStack(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile("../../examples/swarm/stack.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// perTaskEntrypoint is the example stack's entrypoint of its workers, by
// which each task advertises its own overlay address (read from
// /etc/hosts), with $$ unescaped as `docker stack deploy` does.
func perTaskEntrypoint(t *testing.T) []string {
	t.Helper()
	connect := exampleStack(t)["services"].(map[string]any)["connect"].(map[string]any)
	var entry []string
	for _, a := range connect["entrypoint"].([]any) {
		entry = append(entry, strings.ReplaceAll(a.(string), "$$", "$"))
	}
	return entry
}

func TestSwarmPerTaskAddress(t *testing.T) {
	// replicas: 4 with the example stack's per-task address: each task
	// advertises its own overlay address, read from /etc/hosts by the
	// example's entrypoint (taken from the file, $$ unescaped as `docker
	// stack deploy` does).
	group := "pertask"
	// Each task advertises its own address: the image's HEALTHCHECK stays.
	s := svc{name: group, replicas: 4, dnsrr: true, hostname: "connect-{{.Task.Slot}}", entrypoint: perTaskEntrypoint(t), keepHealthcheck: true,
		env: workerEnv(group, "CONNECT_INIT_PEERS=tasks."+group+":8083", "CONNECT_INIT_TIMEOUT=3m")}
	mustStart(t, group, 4, s)
}

func TestSwarmExampleStack(t *testing.T) {
	// examples/swarm/stack.yml as users deploy it: docker stack deploy,
	// SSL to the brokers and the four secrets, with only the image name
	// substituted (through the file's own ${CONNECT_IMAGE}).
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
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
	stack := StackPrefix + "-orders"
	cmd := exec.CommandContext(ctx, "docker", "stack", "deploy", "-c", "../../examples/swarm/stack.yml", stack)
	cmd.Env = append(os.Environ(), "CONNECT_IMAGE="+bed.Image)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docker stack deploy: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, s := range []string{stack + "_connect-init-prepare", stack + "_connect"} {
				t.Logf("%s tasks:\n%s\nlogs:\n%s", s, TaskStates(context.Background(), s), tail(ServiceLogsAll(context.Background(), s), 6000))
			}
		}
		Docker(context.Background(), "stack", "rm", stack) //nolint:errcheck
	})
	// prepare completes (exit 0, task Complete) ...
	for {
		st := TaskStates(ctx, stack+"_connect-init-prepare")
		if strings.Contains(st, "Complete") {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("connect-init-prepare never completed: %s", st)
		}
		time.Sleep(time.Second)
	}
	// ... and the four workers start through connect-init, one stable
	// generation, and forward for each other.
	ids, gen, leader := stableGroup(t, ctx, 4, stack+"_connect")
	for _, c := range ids {
		if logs := ContainerLogs(ctx, c); !Started(logs) || !ownPassed(logs) {
			t.Fatalf("%s joined without connect-init's self-probe and exec:\n%s", c, ConnectInitPart(logs)+"\n...\n"+tail(logs, 1500))
		} else if mode := lockMode(logs); mode != "worker" {
			t.Fatalf("%s: startup lock mode=%q, want mode=worker (the image installs the provider jar):\n%s", c, mode, ConnectInitPart(logs))
		}
	}
	ok, fails := postConnectors(t, ctx, "orders", ids)
	t.Logf("example stack: 4 workers in generation %d, leader %s; POST /connectors ok on %d, failed %v", gen, leader, ok, fails)
	if ok != 4 {
		t.Fatalf("forwarding failed: %v", fails)
	}
}

// ownPassed reports whether the self-probe passed before the exec.
func ownPassed(logs string) bool {
	_, ok := OwnProof(logs)
	return ok
}

// keepLogs writes a container's whole log to $CITEST_CONTAINER_LOGS (when
// set), so that a run's verdicts can be read again afterwards, passed ones
// included (issue 41 asked for every container's log of 20 loaded runs).
func keepLogs(t *testing.T, service, id, logs string) {
	dir := os.Getenv("CITEST_CONTAINER_LOGS")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("keep logs: %v", err)
		return
	}
	name := filepath.Join(dir, fmt.Sprintf("%s-%s.log", service, id[:min(12, len(id))]))
	if err := os.WriteFile(name, []byte(logs), 0o644); err != nil {
		t.Logf("keep logs: %v", err)
	}
}

var runs sync.Map // test name -> *atomic.Int32

// runSuffix is "" on a test's first run in this process and "-N" on its
// Nth (go test -count=N), so that repeated runs do not meet the groups,
// topics and connectors of the runs before.
func runSuffix(test string) string {
	v, _ := runs.LoadOrStore(test, new(atomic.Int32))
	if n := v.(*atomic.Int32).Add(1); n > 1 {
		return fmt.Sprintf("-%d", n)
	}
	return ""
}

// waitRefusal waits for a task of s to log the peers step's refusal of its
// own URL and returns that line's groups. When every task failed at an
// earlier step instead (a timeout the machine's load ran out), no refusal
// can follow: it says so at once, with their lines, rather than waiting
// out ctx.
func waitRefusal(t *testing.T, ctx context.Context, s svc) []string {
	t.Helper()
	for {
		logs := ServiceLogsAll(ctx, s.name)
		if m := refusedRe.FindStringSubmatch(logs); m != nil {
			return m
		}
		if early := earlierRe.FindAllString(logs, -1); len(early) >= max(s.replicas, 1) {
			t.Fatalf("every task of %s failed at a step before its peers step:\n%s", s.name, strings.Join(early, "\n"))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never logged the peers step's refusal: %v; log tail:\n%s", s.name, ctx.Err(), tail(logs, 3000))
		case <-time.After(time.Second): // polling docker's logs, not a guess at readiness
		}
	}
}

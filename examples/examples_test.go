package examples

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// composeServices reads the services of a Compose or Swarm stack file. A
// service built from this repository's image (its image name contains
// "connect-init") without its own entrypoint runs the Dockerfile target's
// ENTRYPOINT and CMD.
func composeServices(t *testing.T, file string, doc map[string]any, df *dockerfile) []service {
	t.Helper()
	raw := asMap(doc["services"])
	if len(raw) == 0 {
		t.Fatalf("%s: no services", file)
	}
	var svcs []service
	for _, name := range sortedKeys(raw) {
		spec := asMap(raw[name])
		s := service{file: file, name: name, env: map[string]string{}}
		entrypoint, command := stringList(spec["entrypoint"]), stringList(spec["command"])
		switch {
		case entrypoint != nil:
			s.argv = append(entrypoint, command...)
		case strings.Contains(asString(spec["image"]), "connect-init"):
			tgt := asString(dig(spec, "build", "target"))
			if tgt == "" {
				tgt = df.stages[len(df.stages)-1].name
			}
			st := df.stage(tgt)
			if st == nil {
				t.Fatalf("%s: build target %q is not a Dockerfile stage", s, tgt)
			}
			if ep := st.last("ENTRYPOINT"); ep != nil {
				s.argv = append(s.argv, ep.exec...)
			}
			if command == nil {
				if c := st.last("CMD"); c != nil {
					command = c.exec
				}
			}
			s.argv = append(s.argv, command...)
		default:
			s.argv = command
		}
		switch env := spec["environment"].(type) {
		case map[string]any:
			for k, v := range env {
				s.env[k] = asString(v)
			}
		case []any:
			for _, kv := range env {
				k, v, _ := strings.Cut(asString(kv), "=")
				s.env[k] = v
			}
		}
		for _, k := range scriptExports(s.argv) {
			if _, ok := s.env[k]; !ok {
				s.env[k] = "(exported by the entrypoint script)"
			}
		}
		if h := stringList(dig(spec, "healthcheck", "test")); len(h) > 0 && (h[0] == "CMD" || h[0] == "CMD-SHELL") {
			s.health = h[1:]
		}
		s.role = checkSubcommands(t, s.String(), s.argv)
		if s.health != nil {
			checkSubcommands(t, s.String()+" healthcheck", s.health)
		}
		svcs = append(svcs, s)
	}
	return svcs
}

var (
	interpolation = regexp.MustCompile(`\$(\{[A-Za-z_][A-Za-z0-9_]*(:?[-?+][^}]*)?\}|[A-Za-z_][A-Za-z0-9_]*)`)
	providerRef   = regexp.MustCompile(`^\$\{([a-z]+):[^}]+\}$`)
)

// checkInterpolation: Compose and `docker stack deploy` expand $VAR and
// ${VAR} in every value; a `$` meant for the container must be written
// `$$`, or the file does not deploy (or silently loses the reference).
func checkInterpolation(t *testing.T, file string, doc map[string]any) {
	t.Helper()
	walkStrings(doc, func(s string) {
		rest := interpolation.ReplaceAllString(strings.ReplaceAll(s, "$$", ""), "")
		if strings.Contains(rest, "$") {
			t.Errorf("%s: %q: a `$` Compose cannot interpolate; write `$$` for the container", file, s)
		}
	})
}

// healthBudget checks a Compose healthcheck's start period against the gates.
func healthBudget(t *testing.T, s service, spec map[string]any) {
	t.Helper()
	sp, err := time.ParseDuration(asString(dig(spec, "healthcheck", "start_period")))
	if err != nil {
		t.Errorf("%s: healthcheck start_period: %v", s, err)
		return
	}
	if gt := gateTimeout(t, s.env); sp <= gt {
		t.Errorf("%s: healthcheck start_period %s does not cover the gates (%s)", s, sp, gt)
	}
}

func servicesByRole(svcs []service, role string) []service {
	var out []service
	for _, s := range svcs {
		if s.role == role {
			out = append(out, s)
		}
	}
	return out
}

// TestSwarmStack checks examples/swarm/stack.yml: the four workers of
// incident 000, fixed.
func TestSwarmStack(t *testing.T) {
	const file = "swarm/stack.yml"
	doc := loadYAML(t, file)[0]
	checkInterpolation(t, file, doc)
	svcs := composeServices(t, file, doc, loadDockerfile(t))
	checkWorkerSettings(t, svcs)
	raw := asMap(doc["services"])

	workers := servicesByRole(svcs, "run")
	if len(workers) != 1 {
		t.Fatalf("%s: %d worker services, want one service with 4 replicas (so update_config can roll them)", file, len(workers))
	}
	w := workers[0]
	spec := asMap(raw[w.name])
	deploy := asMap(spec["deploy"])
	if n, _ := asInt(deploy["replicas"]); n != 4 {
		t.Errorf("%s: deploy.replicas %v, want the incident's 4", w, deploy["replicas"])
	}
	if m := asString(deploy["endpoint_mode"]); m != "dnsrr" {
		t.Errorf("%s: endpoint_mode %q, want dnsrr (a VIP is not an address of any worker)", w, m)
	}
	for _, key := range []string{"update_config", "rollback_config"} {
		uc := asMap(deploy[key])
		if p, _ := asInt(uc["parallelism"]); p != 1 {
			t.Errorf("%s: %s.parallelism %v, want 1", w, key, uc["parallelism"])
		}
		if o := asString(uc["order"]); o != "stop-first" {
			t.Errorf("%s: %s.order %q, want stop-first", w, key, o)
		}
	}
	if len(w.health) == 0 || invocations(w.health) == nil || invocations(w.health)[0][0] != "healthcheck" {
		t.Errorf("%s: healthcheck %q, want connect-init healthcheck", w, w.health)
	}
	healthBudget(t, w, spec)

	// The advertised name: computed per task by the entrypoint, never a
	// static hostname (which no other container resolves).
	if v, ok := asMap(spec["environment"])["CONNECT_REST_ADVERTISED_HOST_NAME"]; ok {
		t.Errorf("%s: CONNECT_REST_ADVERTISED_HOST_NAME=%v is the same for every task", w, v)
	}
	exported := false
	for _, k := range scriptExports(w.argv) {
		exported = exported || k == "CONNECT_REST_ADVERTISED_HOST_NAME"
	}
	if !exported {
		t.Errorf("%s: the entrypoint does not export a per-task CONNECT_REST_ADVERTISED_HOST_NAME", w)
	}
	if nets := stringList(spec["networks"]); len(nets) != 1 {
		t.Errorf("%s: networks %v: the entrypoint reads the task's address from /etc/hosts and needs exactly one network", w, nets)
	}
	for _, peer := range strings.Split(w.env["CONNECT_INIT_PEERS"], ",") {
		host, _, _ := strings.Cut(strings.TrimSpace(peer), ":")
		if svc, ok := strings.CutPrefix(host, "tasks."); ok && raw[svc] == nil {
			t.Errorf("%s: CONNECT_INIT_PEERS names %s, but there is no service %q", w, host, svc)
		}
	}

	prepares := servicesByRole(svcs, "prepare")
	if len(prepares) != 1 {
		t.Errorf("%s: %d services run connect-init prepare, want 1", file, len(prepares))
	}
	for _, p := range prepares {
		if c := asString(dig(raw[p.name], "deploy", "restart_policy", "condition")); c != "on-failure" {
			t.Errorf("%s: restart_policy.condition %q, want on-failure (a one-shot task)", p, c)
		}
	}

	// SSL like the incident, secrets only through Swarm secrets and config
	// providers.
	topSecrets := asMap(doc["secrets"])
	for _, s := range append(workers, prepares...) {
		if p := s.env["CONNECT_SECURITY_PROTOCOL"]; p != "SSL" && p != "SASL_SSL" {
			t.Errorf("%s: CONNECT_SECURITY_PROTOCOL %q, want SSL as in the incident", s, p)
		}
		providers := map[string]bool{}
		for _, p := range strings.Split(s.env["CONNECT_CONFIG_PROVIDERS"], ",") {
			providers[strings.TrimSpace(p)] = true
		}
		attached := map[string]bool{}
		for _, sec := range asList(asMap(raw[s.name])["secrets"]) {
			name := asString(sec)
			if m := asMap(sec); m != nil {
				name = asString(m["source"])
			}
			attached[name] = true
			if _, ok := topSecrets[name]; !ok {
				t.Errorf("%s: secret %q is not declared under secrets:", s, name)
			}
		}
		for _, k := range sortedKeys(s.env) {
			v := strings.ReplaceAll(s.env[k], "$$", "$")
			if strings.Contains(k, "PASSWORD") {
				m := providerRef.FindStringSubmatch(v)
				if m == nil {
					t.Errorf("%s: %s is not a config provider reference: no passwords in the stack file", s, k)
				} else if !providers[m[1]] || s.env["CONNECT_CONFIG_PROVIDERS_"+strings.ToUpper(m[1])+"_CLASS"] == "" {
					t.Errorf("%s: %s uses provider %q, which CONNECT_CONFIG_PROVIDERS / ..._CLASS do not configure", s, k, m[1])
				}
			}
			for _, ref := range secretRefs(v) {
				if !attached[ref] {
					t.Errorf("%s: %s reads secret %q, which the service does not mount", s, k, ref)
				}
			}
		}
	}
}

var (
	secretFile = regexp.MustCompile(`/run/secrets/([^\s:,}/]+)`)
	secretDir  = regexp.MustCompile(`\$\{directory:/run/secrets:([^}]+)\}`)
)

// secretRefs lists the Swarm secrets a value reads.
func secretRefs(v string) []string {
	var refs []string
	for _, m := range secretFile.FindAllStringSubmatch(v, -1) {
		refs = append(refs, m[1])
	}
	for _, m := range secretDir.FindAllStringSubmatch(v, -1) {
		refs = append(refs, m[1])
	}
	return refs
}

func TestSecretRefs(t *testing.T) {
	got := secretRefs("${directory:/run/secrets:pw} /run/secrets/ks.p12")
	if strings.Join(got, " ") != "ks.p12 pw" {
		t.Errorf("secretRefs = %q", got)
	}
}

// TestCompose checks examples/compose/docker-compose.yml.
func TestCompose(t *testing.T) {
	const file = "compose/docker-compose.yml"
	doc := loadYAML(t, file)[0]
	checkInterpolation(t, file, doc)
	svcs := composeServices(t, file, doc, loadDockerfile(t))
	checkWorkerSettings(t, svcs)
	raw := asMap(doc["services"])

	// Three KRaft brokers, internal topics replicated (incident 003).
	brokers := map[string]bool{}
	nodeIDs := map[string]string{}
	for _, s := range svcs {
		if !strings.Contains(s.env["KAFKA_PROCESS_ROLES"], "broker") {
			continue
		}
		brokers[s.name] = true
		if s.env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == "" || s.env["KAFKA_ZOOKEEPER_CONNECT"] != "" {
			t.Errorf("%s: not a KRaft node", s)
		}
		if !strings.Contains(s.env["KAFKA_CONTROLLER_QUORUM_VOTERS"], "@"+s.name+":") {
			t.Errorf("%s: not among the quorum voters %s", s, s.env["KAFKA_CONTROLLER_QUORUM_VOTERS"])
		}
		id := s.env["KAFKA_NODE_ID"]
		if other, dup := nodeIDs[id]; dup || id == "" {
			t.Errorf("%s: KAFKA_NODE_ID %q (also %s)", s, id, other)
		}
		nodeIDs[id] = s.name
		rf, err := strconv.Atoi(s.env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"])
		if err != nil || rf < 2 {
			t.Errorf("%s: KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR %q: __consumer_offsets must survive one broker (incident 003)", s, s.env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"])
		}
	}
	if len(brokers) != 3 {
		t.Errorf("%s: %d brokers, want 3", file, len(brokers))
	}

	prep := servicesByRole(svcs, "prepare")
	if len(prep) != 1 || prep[0].name != "connect-init-prepare" {
		t.Fatalf("%s: want one service connect-init-prepare running connect-init prepare, have %v", file, prep)
	}
	if r := asString(asMap(raw[prep[0].name])["restart"]); r != "" && r != "no" && r != "on-failure" {
		t.Errorf("%s: restart %q: it must be able to complete", prep[0], r)
	}
	if n := prep[0].env["CONNECT_INIT_EXPECTED_BROKERS"]; n != strconv.Itoa(len(brokers)) {
		t.Errorf("%s: CONNECT_INIT_EXPECTED_BROKERS %q, want %d: create nothing before every broker is up", prep[0], n, len(brokers))
	}

	workers := servicesByRole(svcs, "run")
	if len(workers) < 2 {
		t.Errorf("%s: %d workers", file, len(workers))
	}
	for _, w := range workers {
		spec := asMap(raw[w.name])
		if c := asString(dig(spec, "depends_on", "connect-init-prepare", "condition")); c != "service_completed_successfully" {
			t.Errorf("%s: depends_on connect-init-prepare condition %q, want service_completed_successfully", w, c)
		}
		// Compose DNS resolves service names and network aliases, not
		// `hostname:` values.
		adv := w.env["CONNECT_REST_ADVERTISED_HOST_NAME"]
		checkHostName(t, w.String(), adv)
		resolvable := adv == w.name || adv == asString(spec["container_name"])
		for _, n := range asMap(spec["networks"]) {
			for _, a := range stringList(asMap(n)["aliases"]) {
				resolvable = resolvable || a == adv
			}
		}
		if !resolvable {
			t.Errorf("%s: advertised host %q is not a name Compose DNS resolves to this container", w, adv)
		}
		if w.health != nil {
			if inv := invocations(w.health); len(inv) == 0 || len(inv[0]) == 0 || inv[0][0] != "healthcheck" {
				t.Errorf("%s: healthcheck %q, want connect-init healthcheck", w, w.health)
			}
			healthBudget(t, w, spec)
		}
		for _, hp := range strings.Split(w.env["CONNECT_BOOTSTRAP_SERVERS"], ",") {
			if h, _, _ := strings.Cut(hp, ":"); !brokers[h] {
				t.Errorf("%s: bootstrap server %s is not a broker service", w, hp)
			}
		}
	}
}

// k8sObjects indexes the documents of a manifest by kind.
func k8sObjects(docs []map[string]any) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, d := range docs {
		k := asString(d["kind"])
		out[k] = append(out[k], d)
	}
	return out
}

var k8sVarRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// TestKubernetes checks examples/kubernetes/statefulset.yaml.
func TestKubernetes(t *testing.T) {
	const file = "kubernetes/statefulset.yaml"
	objs := k8sObjects(loadYAML(t, file))
	sets := objs["StatefulSet"]
	if len(sets) != 1 {
		t.Fatalf("%s: %d StatefulSets, want 1", file, len(sets))
	}
	sts := sets[0]
	spec := asMap(sts["spec"])
	pod := asMap(dig(spec, "template", "spec"))
	podLabels := asMap(dig(spec, "template", "metadata", "labels"))

	var headless map[string]any
	for _, svc := range objs["Service"] {
		if asString(dig(svc, "spec", "clusterIP")) == "None" {
			headless = svc
		}
	}
	if headless == nil {
		t.Fatalf("%s: no headless Service (clusterIP: None)", file)
	}
	hname := asString(dig(headless, "metadata", "name"))
	if sn := asString(spec["serviceName"]); sn != hname {
		t.Errorf("StatefulSet serviceName %q, want the headless Service %q", sn, hname)
	}
	if v, _ := dig(headless, "spec", "publishNotReadyAddresses").(bool); !v {
		t.Errorf("Service %s: publishNotReadyAddresses must be true: connect-init resolves the pod's name before the pod can be Ready", hname)
	}
	for k, v := range asMap(dig(headless, "spec", "selector")) {
		if podLabels[k] != v {
			t.Errorf("Service %s selects %s=%v, which the pod template does not carry", hname, k, v)
		}
	}
	for k, v := range asMap(dig(spec, "selector", "matchLabels")) {
		if podLabels[k] != v {
			t.Errorf("StatefulSet selector %s=%v does not match the pod template", k, v)
		}
	}
	if p := asString(spec["podManagementPolicy"]); p != "Parallel" {
		t.Errorf("podManagementPolicy %q, want Parallel (the startup lock serialises joins)", p)
	}
	if g, _ := asInt(pod["terminationGracePeriodSeconds"]); g < 30 {
		t.Errorf("terminationGracePeriodSeconds %v: give Connect time to leave the group", pod["terminationGracePeriodSeconds"])
	}
	if v, ok := pod["enableServiceLinks"].(bool); !ok || v {
		t.Error("enableServiceLinks must be false: Service variables such as CONNECT_REST_PORT=tcp://... would become worker settings")
	}
	if v, _ := dig(pod, "securityContext", "runAsNonRoot").(bool); !v {
		t.Error("securityContext.runAsNonRoot is not true")
	}
	if u, ok := asInt(dig(pod, "securityContext", "runAsUser")); !ok || u == 0 {
		t.Error("securityContext.runAsUser must be a non-zero uid (runAsNonRoot cannot check a user name)")
	}

	var svcs []service
	for _, c := range asList(pod["containers"]) {
		c := asMap(c)
		s := service{file: file, name: "container " + asString(c["name"]), env: map[string]string{}}
		s.argv = append(stringList(c["command"]), stringList(c["args"])...)
		s.role = checkSubcommands(t, s.String(), s.argv)
		defined := map[string]map[string]any{}
		for _, e := range asList(c["env"]) {
			e := asMap(e)
			name, value := asString(e["name"]), asString(e["value"])
			for _, m := range k8sVarRef.FindAllStringSubmatch(value, -1) {
				if defined[m[1]] == nil {
					t.Errorf("%s: %s refers to $(%s), which is not defined before it (Kubernetes leaves it unexpanded)", s, name, m[1])
				}
			}
			defined[name] = e
			s.env[name] = value
		}
		if s.role != "run" {
			continue
		}
		if got := strings.Join(stringList(c["command"]), " "); got != "connect-init run --" {
			t.Errorf("%s: command %q, want connect-init run --", s, got)
		}
		// The advertised name: the pod's own record in the headless Service,
		// or its IP.
		adv := s.env["CONNECT_REST_ADVERTISED_HOST_NAME"]
		expanded := k8sVarRef.ReplaceAllStringFunc(adv, func(ref string) string {
			name := k8sVarRef.FindStringSubmatch(ref)[1]
			switch asString(dig(defined[name], "valueFrom", "fieldRef", "fieldPath")) {
			case "metadata.name":
				return asString(dig(sts, "metadata", "name")) + "-0"
			case "metadata.namespace":
				return "ns"
			case "status.podIP":
				return "10.1.2.3"
			}
			return ref
		})
		checkHostName(t, s.String(), expanded)
		if expanded != "10.1.2.3" && !strings.HasPrefix(expanded, asString(dig(sts, "metadata", "name"))+"-0."+hname+".ns.svc.") {
			t.Errorf("%s: advertised host %q is neither the pod's headless-Service name nor its IP", s, adv)
		}
		// Probes: all three on connect-init healthcheck; the startup budget
		// covers the gates plus Connect's start.
		for _, probe := range []string{"startupProbe", "readinessProbe", "livenessProbe"} {
			cmd := stringList(dig(c, probe, "exec", "command"))
			if inv := invocations(cmd); len(inv) == 0 || len(inv[0]) == 0 || inv[0][0] != "healthcheck" {
				t.Errorf("%s: %s %q, want exec connect-init healthcheck", s, probe, cmd)
			}
			checkSubcommands(t, s.String()+" "+probe, cmd)
			if to, _ := asInt(dig(c, probe, "timeoutSeconds")); to < 5 {
				t.Errorf("%s: %s.timeoutSeconds %d: the default 1s is too short for an exec probe", s, probe, to)
			}
		}
		period, _ := asInt(dig(c, "startupProbe", "periodSeconds"))
		failures, _ := asInt(dig(c, "startupProbe", "failureThreshold"))
		delay, _ := asInt(dig(c, "startupProbe", "initialDelaySeconds"))
		budget := time.Duration(delay+period*failures) * time.Second
		if need := gateTimeout(t, s.env) + time.Minute; budget < need {
			t.Errorf("%s: startupProbe allows %s, want at least %s (gates + Connect's start)", s, budget, need)
		}
		svcs = append(svcs, s)
	}
	if len(svcs) == 0 {
		t.Fatalf("%s: no container runs connect-init run", file)
	}
	checkWorkerSettings(t, svcs)
}

// TestReadme checks that the guide covers every example and that the
// commands it quotes exist.
func TestReadme(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, f := range []string{"swarm/stack.yml", "compose/docker-compose.yml", "kubernetes/statefulset.yaml", "../Dockerfile"} {
		if !strings.Contains(readme, f) {
			t.Errorf("README.md does not mention %s", f)
		}
	}
	cmds := subcommands(t)
	quoted := regexp.MustCompile("`connect-init ([a-z-]+)").FindAllStringSubmatch(readme, -1)
	if len(quoted) == 0 {
		t.Error("README.md quotes no connect-init command")
	}
	for _, m := range quoted {
		if !cmds[m[1]] {
			t.Errorf("README.md quotes `connect-init %s`, which is not a subcommand", m[1])
		}
	}
}

func TestInvocations(t *testing.T) {
	got := invocations([]string{"/bin/sh", "-c", "x=1\nexec connect-init run -- \"$@\"", "worker", "/etc/confluent/docker/run"})
	if want := `[[run -- $@ worker /etc/confluent/docker/run]]`; fmt.Sprint(got) != want {
		t.Errorf("invocations = %v, want %s", got, want)
	}
	if got := invocations([]string{"/usr/local/bin/connect-init", "prepare"}); fmt.Sprint(got) != "[[prepare]]" {
		t.Errorf("invocations = %v", got)
	}
	if got := scriptExports([]string{"export A_B=\"$x\"\nexport C=1"}); fmt.Sprint(got) != "[A_B C]" {
		t.Errorf("scriptExports = %v", got)
	}
}

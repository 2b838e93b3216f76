package examples

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/apply"
)

// exampleConnectors loads ../connectors/ with apply's own reader: the
// definitions the apply examples mount must be ones apply accepts.
func exampleConnectors(t *testing.T) map[string]apply.Connector {
	t.Helper()
	conns, _, err := apply.Load("connectors")
	if err != nil {
		t.Fatalf("connectors/: %v", err)
	}
	if len(conns) == 0 {
		t.Fatal("connectors/ holds no definitions")
	}
	out := map[string]apply.Connector{}
	for _, c := range conns {
		out[c.Name] = c
	}
	return out
}

// checkApplyService: an apply service runs `connect-init apply` with the
// directory it mounts.
func checkApplyService(t *testing.T, s service) {
	t.Helper()
	if s.role != "apply" {
		t.Fatalf("%s runs connect-init %q, want apply", s, s.role)
	}
	for _, inv := range invocations(s.argv) {
		for _, a := range inv {
			if a == "--prune" {
				t.Errorf("%s: --prune in an example deletes every connector someone created by hand", s)
			}
		}
	}
	if s.env["CONNECT_INIT_CONNECTORS_DIR"] == "" {
		t.Errorf("%s: CONNECT_INIT_CONNECTORS_DIR is not set", s)
	}
}

// TestComposeApply checks compose/apply.yml together with the Compose file
// it extends: the same Connect cluster, after the workers are healthy.
func TestComposeApply(t *testing.T) {
	df := loadDockerfile(t)
	base := composeServices(t, "compose/docker-compose.yml", loadYAML(t, "compose/docker-compose.yml")[0], df)
	doc := loadYAML(t, "compose/apply.yml")[0]
	checkInterpolation(t, "compose/apply.yml", doc)
	extra := composeServices(t, "compose/apply.yml", doc, df)
	checkWorkerSettings(t, append(append([]service{}, base...), extra...))
	if len(extra) != 1 {
		t.Fatalf("compose/apply.yml: %d services, want one apply service", len(extra))
	}
	s := extra[0]
	checkApplyService(t, s)
	spec := asMap(asMap(doc["services"])[s.name])
	workers := servicesByRole(base, "run")
	if len(workers) == 0 {
		t.Fatal("docker-compose.yml has no workers")
	}
	for _, w := range workers {
		if c := asString(dig(spec, "depends_on", w.name, "condition")); c != "service_healthy" {
			t.Errorf("%s: depends_on %s condition %q, want service_healthy", s, w.name, c)
		}
	}
	if r := asString(spec["restart"]); r != "no" {
		t.Errorf("%s: restart %q: a one-shot service must be able to end", s, r)
	}
	mounted := false
	for _, v := range stringList(spec["volumes"]) {
		src, rest, _ := strings.Cut(v, ":")
		dst, _, _ := strings.Cut(rest, ":")
		if dst == s.env["CONNECT_INIT_CONNECTORS_DIR"] {
			mounted = true
			if abs := filepath.Join("compose", src); abs != "connectors" {
				t.Errorf("%s: mounts %s, want ../connectors", s, src)
			}
		}
	}
	if !mounted {
		t.Errorf("%s: nothing is mounted at CONNECT_INIT_CONNECTORS_DIR=%s", s, s.env["CONNECT_INIT_CONNECTORS_DIR"])
	}
	exampleConnectors(t)
}

// TestSwarmApply checks swarm/apply.yml with stack.yml: the same cluster,
// a one-shot task, and configs that are the example definitions.
func TestSwarmApply(t *testing.T) {
	df := loadDockerfile(t)
	base := composeServices(t, "swarm/stack.yml", loadYAML(t, "swarm/stack.yml")[0], df)
	doc := loadYAML(t, "swarm/apply.yml")[0]
	checkInterpolation(t, "swarm/apply.yml", doc)
	extra := composeServices(t, "swarm/apply.yml", doc, df)
	checkWorkerSettings(t, append(append([]service{}, base...), extra...))
	if len(extra) != 1 {
		t.Fatalf("swarm/apply.yml: %d services, want one apply task", len(extra))
	}
	s := extra[0]
	checkApplyService(t, s)
	spec := asMap(asMap(doc["services"])[s.name])
	if c := asString(dig(spec, "deploy", "restart_policy", "condition")); c != "on-failure" {
		t.Errorf("%s: restart_policy.condition %q, want on-failure (a one-shot task)", s, c)
	}
	// The TLS settings are the workers'.
	for _, w := range servicesByRole(base, "run") {
		for k, v := range w.env {
			if strings.Contains(k, "SSL") && !strings.Contains(k, "PRODUCER") && !strings.Contains(k, "CONSUMER") && s.env[k] != v {
				t.Errorf("%s: %s=%q, the workers have %q", s, k, s.env[k], v)
			}
		}
	}
	want := exampleConnectors(t)
	top := asMap(doc["configs"])
	mountedNames := map[string]bool{}
	for _, c := range asList(spec["configs"]) {
		c := asMap(c)
		src, target := asString(c["source"]), asString(c["target"])
		if filepath.Dir(target) != s.env["CONNECT_INIT_CONNECTORS_DIR"] {
			t.Errorf("%s: config %s lands at %s, outside CONNECT_INIT_CONNECTORS_DIR", s, src, target)
		}
		file := asString(dig(top, src, "file"))
		if filepath.Join("swarm", file) != filepath.Join("connectors", filepath.Base(target)) {
			t.Errorf("%s: config %s is %s, mounted as %s", s, src, file, target)
		}
		mountedNames[filepath.Base(target)] = true
	}
	for _, c := range want {
		if !mountedNames[filepath.Base(c.File)] {
			t.Errorf("%s: the definition %s is not mounted", s, c.File)
		}
	}
}

// TestKubernetesApply checks kubernetes/apply-job.yaml: a Job with the
// StatefulSet's cluster settings, its ConfigMap mounted at
// CONNECT_INIT_CONNECTORS_DIR, and definitions equal to ../connectors/.
func TestKubernetesApply(t *testing.T) {
	const file = "kubernetes/apply-job.yaml"
	objs := k8sObjects(loadYAML(t, file))
	if len(objs["Job"]) != 1 || len(objs["ConfigMap"]) != 1 {
		t.Fatalf("%s: want one Job and one ConfigMap, have %d and %d", file, len(objs["Job"]), len(objs["ConfigMap"]))
	}
	job, cm := objs["Job"][0], objs["ConfigMap"][0]
	pod := asMap(dig(job, "spec", "template", "spec"))
	if p := asString(pod["restartPolicy"]); p != "Never" && p != "OnFailure" {
		t.Errorf("Job restartPolicy %q", p)
	}
	if v, ok := pod["enableServiceLinks"].(bool); !ok || v {
		t.Error("enableServiceLinks must be false (Service variables would become worker settings)")
	}
	containers := asList(pod["containers"])
	if len(containers) != 1 {
		t.Fatalf("%s: %d containers", file, len(containers))
	}
	c := asMap(containers[0])
	s := service{file: file, name: "container " + asString(c["name"]), env: map[string]string{}}
	s.argv = append(stringList(c["command"]), stringList(c["args"])...)
	s.role = checkSubcommands(t, s.String(), s.argv)
	for _, e := range asList(c["env"]) {
		s.env[asString(asMap(e)["name"])] = asString(asMap(e)["value"])
	}
	checkApplyService(t, s)

	// The same Connect cluster as the StatefulSet's workers.
	sts := k8sObjects(loadYAML(t, "kubernetes/statefulset.yaml"))["StatefulSet"][0]
	wc := asMap(asList(dig(sts, "spec", "template", "spec", "containers"))[0])
	for _, e := range asList(wc["env"]) {
		name, value := asString(asMap(e)["name"]), asString(asMap(e)["value"])
		for _, k := range requiredWorker {
			if name == k && s.env[k] != value {
				t.Errorf("%s: %s=%q, the StatefulSet's workers have %q", s, k, s.env[k], value)
			}
		}
	}

	// The ConfigMap is mounted at the directory, and holds ../connectors/.
	var mount string
	for _, m := range asList(c["volumeMounts"]) {
		m := asMap(m)
		for _, v := range asList(pod["volumes"]) {
			v := asMap(v)
			if v["name"] == m["name"] && asString(dig(v, "configMap", "name")) == asString(dig(cm, "metadata", "name")) {
				mount = asString(m["mountPath"])
			}
		}
	}
	if mount == "" || mount != s.env["CONNECT_INIT_CONNECTORS_DIR"] {
		t.Errorf("%s: the ConfigMap is mounted at %q, CONNECT_INIT_CONNECTORS_DIR is %q", s, mount, s.env["CONNECT_INIT_CONNECTORS_DIR"])
	}
	dir := t.TempDir()
	for name, data := range asMap(cm["data"]) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(asString(data)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := apply.Load(dir)
	if err != nil {
		t.Fatalf("%s: the ConfigMap's definitions: %v", file, err)
	}
	want := exampleConnectors(t)
	if len(got) != len(want) {
		t.Fatalf("%s: %d definitions, connectors/ has %d", file, len(got), len(want))
	}
	for _, g := range got {
		if w, ok := want[g.Name]; !ok || !reflect.DeepEqual(w.Config, g.Config) || w.State != g.State {
			t.Errorf("%s: %s differs from connectors/: %v vs %v", file, g.Name, g.Config, w.Config)
		}
	}
}

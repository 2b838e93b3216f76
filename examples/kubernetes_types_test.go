package examples

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/connect-init/connect-init/doctor"
	"github.com/connect-init/connect-init/lock"
	"github.com/connect-init/connect-init/settings"
)

// The Kubernetes examples decoded by Kubernetes' own types: k8s.io/api's
// objects through apimachinery's strict deserializer, the one the API
// server's strict field validation uses. An unknown field (a misspelling,
// a wrong case, a field at the wrong level) or a duplicate one is an
// error, where a plain YAML parse would pass it and kubectl apply would
// drop it with a warning at most.

// k8sDecoder decodes the API groups the examples use, strictly.
var k8sDecoder = func() runtime.Decoder {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme, policyv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
}()

// decodeK8s decodes every document of a manifest into its API type.
func decodeK8s(data []byte) ([]runtime.Object, error) {
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for n := 1; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if j, err := k8syaml.ToJSON(doc); err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		} else if string(bytes.TrimSpace(j)) == "null" {
			continue // comments only
		}
		obj, _, err := k8sDecoder.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		objs = append(objs, obj)
	}
	if len(objs) == 0 {
		return nil, errors.New("no objects")
	}
	return objs, nil
}

// k8sFiles lists the manifests of kubernetes/.
func k8sFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("kubernetes/*.y*ml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in kubernetes/ (%v)", err)
	}
	return files
}

func loadK8s(t *testing.T, file string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeK8s(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return objs
}

// podTemplate is the pod spec of a workload object, nil for the others.
func podTemplate(obj runtime.Object) *corev1.PodTemplateSpec {
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		return &o.Spec.Template
	case *appsv1.Deployment:
		return &o.Spec.Template
	case *appsv1.DaemonSet:
		return &o.Spec.Template
	case *batchv1.Job:
		return &o.Spec.Template
	case *batchv1.CronJob:
		return &o.Spec.JobTemplate.Spec.Template
	}
	return nil
}

func objName(obj runtime.Object) string {
	m, err := metaOf(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return obj.GetObjectKind().GroupVersionKind().Kind + " " + m.GetName()
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	return m, nil
}

// TestKubernetesStrictDecode decodes every object of kubernetes/ strictly
// and checks the names the API server would validate first.
func TestKubernetesStrictDecode(t *testing.T) {
	for _, file := range k8sFiles(t) {
		for _, obj := range loadK8s(t, file) {
			where := file + ": " + objName(obj)
			m, err := metaOf(obj)
			if err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			if errs := validation.IsDNS1123Subdomain(m.GetName()); len(errs) > 0 {
				t.Errorf("%s: name: %s", where, strings.Join(errs, "; "))
			}
			if _, ok := obj.(*corev1.Service); ok {
				if errs := validation.IsDNS1035Label(m.GetName()); len(errs) > 0 {
					t.Errorf("%s: a Service name is a DNS label: %s", where, strings.Join(errs, "; "))
				}
			}
			pt := podTemplate(obj)
			if pt == nil {
				continue
			}
			for _, c := range append(append([]corev1.Container{}, pt.Spec.InitContainers...), pt.Spec.Containers...) {
				if errs := validation.IsDNS1123Label(c.Name); len(errs) > 0 {
					t.Errorf("%s: container name %q: %s", where, c.Name, strings.Join(errs, "; "))
				}
				for _, p := range c.Ports {
					if p.Name != "" {
						if errs := validation.IsValidPortName(p.Name); len(errs) > 0 {
							t.Errorf("%s: container %s: port name %q: %s", where, c.Name, p.Name, strings.Join(errs, "; "))
						}
					}
				}
				for _, e := range c.Env {
					if errs := validation.IsEnvVarName(e.Name); len(errs) > 0 {
						t.Errorf("%s: container %s: env %q: %s", where, c.Name, e.Name, strings.Join(errs, "; "))
					}
				}
			}
		}
	}
}

// k8sMutation renames one key of one object of a manifest.
type k8sMutation struct {
	file, kind, name string
	// path to the key, from the object's root: map keys, and in lists
	// either an index or the value of the elements' "name".
	path []string
	to   string
}

// apply returns the manifest with the key renamed, re-encoded.
func (m k8sMutation) apply(data []byte) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	found := false
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		if len(doc.Content) == 1 && m.path != nil {
			root := doc.Content[0]
			if yamlScalar(root, "kind") == m.kind && yamlScalar(yamlChild(root, "metadata"), "name") == m.name {
				if err := renameKey(root, m.path, m.to); err != nil {
					return nil, err
				}
				found = true
			}
		}
		if err := enc.Encode(&doc); err != nil {
			return nil, err
		}
	}
	if m.path != nil && !found {
		return nil, fmt.Errorf("no %s %s in the manifest", m.kind, m.name)
	}
	return out.Bytes(), enc.Close()
}

func yamlChild(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func yamlScalar(n *yaml.Node, key string) string {
	if c := yamlChild(n, key); c != nil {
		return c.Value
	}
	return ""
}

func renameKey(n *yaml.Node, path []string, to string) error {
	for i, seg := range path {
		last := i == len(path)-1
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == seg {
					if last {
						n.Content[j].Value = to
						return nil
					}
					next = n.Content[j+1]
				}
			}
			if next == nil {
				return fmt.Errorf("no key %q at %s", seg, strings.Join(path[:i], "."))
			}
			n = next
		case yaml.SequenceNode:
			var next *yaml.Node
			if idx, err := strconv.Atoi(seg); err == nil && idx < len(n.Content) {
				next = n.Content[idx]
			}
			for _, e := range n.Content {
				if next == nil && yamlScalar(e, "name") == seg {
					next = e
				}
			}
			if next == nil || last {
				return fmt.Errorf("no element %q at %s", seg, strings.Join(path[:i], "."))
			}
			n = next
		default:
			return fmt.Errorf("%s is a scalar", strings.Join(path[:i], "."))
		}
	}
	return errors.New("empty path")
}

// TestKubernetesStrictDecodeRejects feeds mutated copies of the examples
// to the decoder: each misspelt field must fail it, naming the field.
func TestKubernetesStrictDecodeRejects(t *testing.T) {
	const sts, job = "kubernetes/statefulset.yaml", "kubernetes/apply-job.yaml"
	worker := []string{"spec", "template", "spec", "containers", "connect"}
	cases := []k8sMutation{
		// The misspelling of issue 25.
		{file: sts, kind: "StatefulSet", name: "connect", path: append(worker[:len(worker):len(worker)], "readinessProbe", "exec", "command"), to: "comand"},
		{file: sts, kind: "StatefulSet", name: "connect", path: append(worker[:len(worker):len(worker)], "startupProbe", "failureThreshold"), to: "failureTreshold"},
		{file: sts, kind: "StatefulSet", name: "connect", path: []string{"spec", "template", "spec", "terminationGracePeriodSeconds"}, to: "terminationGracePeriod"},
		// Case matters to Kubernetes (encoding/json would accept it).
		{file: sts, kind: "StatefulSet", name: "connect", path: append(worker[:len(worker):len(worker)], "env", "POD_NAME", "valueFrom", "fieldRef", "fieldPath"), to: "fieldpath"},
		{file: sts, kind: "StatefulSet", name: "connect", path: []string{"spec", "podManagementPolicy"}, to: "podManagmentPolicy"},
		{file: sts, kind: "Service", name: "connect-headless", path: []string{"spec", "publishNotReadyAddresses"}, to: "publishNotReadyAdresses"},
		{file: sts, kind: "PodDisruptionBudget", name: "kafka-connect", path: []string{"spec", "maxUnavailable"}, to: "maxUnavailible"},
		{file: job, kind: "Job", name: "connect-apply", path: []string{"spec", "template", "spec", "containers", "apply", "volumeMounts", "connectors", "mountPath"}, to: "mountpath"},
		{file: job, kind: "ConfigMap", name: "connect-connectors", path: []string{"data"}, to: "date"},
	}
	for _, m := range cases {
		t.Run(m.kind+"."+strings.Join(m.path, ".")+"="+m.to, func(t *testing.T) {
			data, err := os.ReadFile(m.file)
			if err != nil {
				t.Fatal(err)
			}
			// The re-encoded original still decodes: the failure below is
			// the mutation's, not the round trip's.
			same, err := k8sMutation{}.apply(data)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := decodeK8s(same); err != nil {
				t.Fatalf("%s re-encoded: %v", m.file, err)
			}
			bad, err := m.apply(data)
			if err != nil {
				t.Fatalf("%s: %v: the example changed, update the mutation", m.file, err)
			}
			_, err = decodeK8s(bad)
			if err == nil {
				t.Fatalf("%s with %s renamed to %q decodes without error", m.file, strings.Join(m.path, "."), m.to)
			}
			named := regexp.MustCompile(`unknown field "([^"]*\.)?` + regexp.QuoteMeta(m.to) + `"`)
			if !runtime.IsStrictDecodingError(errors.Unwrap(err)) || !named.MatchString(err.Error()) {
				t.Errorf("error %q: want a strict decoding error naming the unknown field %s", err, m.to)
			}
			t.Log(err)
		})
	}
}

// javaWithdrawSeconds is how long the in-worker lock's shutdown hook waits
// for its child to withdraw from the queue (StartupLockConfigProvider).
func javaWithdrawSeconds(t *testing.T) time.Duration {
	t.Helper()
	const src = "../java/connect-init-provider/src/main/java/com/github/connectinit/provider/StartupLockConfigProvider.java"
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`WITHDRAW_SECONDS\s*=\s*(\d+)\s*;`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no WITHDRAW_SECONDS: update this test", src)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return time.Duration(n) * time.Second
}

var k8sRef = regexp.MustCompile(`^\$\(([A-Za-z_][A-Za-z0-9_]*)\)$`)

// TestKubernetesObjects checks, on the decoded objects, what connect-init
// depends on in the StatefulSet: probes on `connect-init healthcheck`, the
// advertised host being the pod's own record under the headless Service,
// connect-init settings it knows (every container, init containers
// included, of every workload in kubernetes/), the startup lock on, and a
// grace period that lets a waiting worker withdraw from the lock's queue.
func TestKubernetesObjects(t *testing.T) {
	valid := validSettings(t)
	var sets []*appsv1.StatefulSet
	services := map[string]*corev1.Service{}
	for _, file := range k8sFiles(t) {
		for _, obj := range loadK8s(t, file) {
			switch o := obj.(type) {
			case *appsv1.StatefulSet:
				if file == "kubernetes/statefulset.yaml" {
					sets = append(sets, o)
				}
			case *corev1.Service:
				services[o.Name] = o
			}
			pt := podTemplate(obj)
			if pt == nil {
				continue
			}
			where := file + ": " + objName(obj)
			for _, c := range append(append([]corev1.Container{}, pt.Spec.InitContainers...), pt.Spec.Containers...) {
				checkContainerSettings(t, where+" container "+c.Name, c, valid)
			}
		}
	}
	if len(sets) != 1 {
		t.Fatalf("kubernetes/statefulset.yaml: %d StatefulSets, want 1", len(sets))
	}
	sts := sets[0]
	where := "StatefulSet " + sts.Name
	pod := sts.Spec.Template
	sel, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
		t.Errorf("%s: selector %v does not select its pod template's labels %v (%v)", where, sts.Spec.Selector, pod.Labels, err)
	}

	// The governing Service: headless, publishing not-ready pods, selecting
	// these pods.
	svc := services[sts.Spec.ServiceName]
	switch {
	case svc == nil:
		t.Fatalf("%s: serviceName %q is not a Service of kubernetes/", where, sts.Spec.ServiceName)
	case svc.Spec.ClusterIP != corev1.ClusterIPNone:
		t.Errorf("Service %s: clusterIP %q, want None: a virtual IP is no worker's address", svc.Name, svc.Spec.ClusterIP)
	case !svc.Spec.PublishNotReadyAddresses:
		t.Errorf("Service %s: publishNotReadyAddresses false: the pod's record must resolve before the pod is Ready", svc.Name)
	case len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)):
		t.Errorf("Service %s: selector %v does not select the StatefulSet's pods %v", svc.Name, svc.Spec.Selector, pod.Labels)
	}

	var worker *corev1.Container
	for i, c := range pod.Spec.Containers {
		argv := append(append([]string{}, c.Command...), c.Args...)
		if checkSubcommands(t, where+" container "+c.Name, argv) == "run" {
			if worker != nil {
				t.Errorf("%s: containers %s and %s both run connect-init run", where, worker.Name, c.Name)
			}
			worker = &pod.Spec.Containers[i]
		}
	}
	if worker == nil {
		t.Fatalf("%s: no container runs connect-init run", where)
	}
	cw := where + " container " + worker.Name

	// Probes: all three exec `connect-init healthcheck`.
	for name, p := range map[string]*corev1.Probe{"startupProbe": worker.StartupProbe, "readinessProbe": worker.ReadinessProbe, "livenessProbe": worker.LivenessProbe} {
		if p == nil || p.Exec == nil {
			t.Errorf("%s: %s is not an exec probe", cw, name)
			continue
		}
		if p.HTTPGet != nil || p.TCPSocket != nil || p.GRPC != nil {
			t.Errorf("%s: %s has more than one handler", cw, name)
		}
		if inv := invocations(p.Exec.Command); len(inv) != 1 || len(inv[0]) == 0 || inv[0][0] != "healthcheck" {
			t.Errorf("%s: %s runs %q, want connect-init healthcheck", cw, name, p.Exec.Command)
		}
		checkSubcommands(t, cw+" "+name, p.Exec.Command)
	}

	// The advertised host: $(POD_NAME).<serviceName>.$(POD_NAMESPACE).svc.<domain>,
	// the A record Kubernetes' DNS gives a StatefulSet pod under its
	// governing Service, with both variables from the downward API and
	// defined before (Kubernetes expands only earlier variables).
	defined := map[string]corev1.EnvVar{}
	var adv *corev1.EnvVar
	for _, e := range worker.Env {
		if e.Name == "CONNECT_REST_ADVERTISED_HOST_NAME" {
			adv = &e
			break
		}
		defined[e.Name] = e
	}
	fieldOf := func(label string) string {
		m := k8sRef.FindStringSubmatch(label)
		if m == nil {
			return ""
		}
		if e, ok := defined[m[1]]; ok && e.Value == "" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			return e.ValueFrom.FieldRef.FieldPath
		}
		return ""
	}
	if adv == nil || adv.ValueFrom != nil {
		t.Errorf("%s: CONNECT_REST_ADVERTISED_HOST_NAME is not set to a name", cw)
	} else {
		l := strings.Split(adv.Value, ".")
		if len(l) < 5 || fieldOf(l[0]) != "metadata.name" || l[1] != sts.Spec.ServiceName || fieldOf(l[2]) != "metadata.namespace" || l[3] != "svc" {
			t.Errorf("%s: CONNECT_REST_ADVERTISED_HOST_NAME=%q, want $(POD_NAME).%s.$(POD_NAMESPACE).svc.<cluster domain> with POD_NAME from metadata.name and POD_NAMESPACE from metadata.namespace, defined before it",
				cw, adv.Value, sts.Spec.ServiceName)
		}
		for _, d := range l[4:] {
			if errs := validation.IsDNS1123Label(d); len(errs) > 0 {
				t.Errorf("%s: cluster domain label %q: %s", cw, d, strings.Join(errs, "; "))
			}
		}
	}

	// The startup lock: on (podManagementPolicy Parallel starts every pod
	// at once; the lock makes them join one at a time).
	s, err := settings.LoadSettings(literalEnv(*worker))
	if err != nil {
		t.Fatalf("%s: connect-init's settings: %v", cw, err)
	}
	if sts.Spec.PodManagementPolicy == appsv1.ParallelPodManagement && !s.Lock {
		t.Errorf("%s: podManagementPolicy Parallel with CONNECT_INIT_LOCK=false: all workers would join at once", where)
	}

	// The grace period lets a worker still waiting in the lock's queue
	// withdraw on SIGTERM: within lock.DefaultWithdrawTimeout before the
	// exec, or, with the in-worker lock (the image's default, mode auto),
	// within the shutdown hook's wait for its child.
	grace := time.Duration(corev1.DefaultTerminationGracePeriodSeconds) * time.Second
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	withdraw := max(lock.DefaultWithdrawTimeout, javaWithdrawSeconds(t))
	if s.Lock && grace <= withdraw {
		t.Errorf("%s: terminationGracePeriodSeconds %s does not cover the startup lock's withdrawal (up to %s): a killed waiter's entry stays in the queue until its lease (%s) runs out",
			where, grace, withdraw, s.LockLease)
	}
	t.Logf("%s: grace %s, lock withdrawal at most %s", where, grace, withdraw)
}

// literalEnv is a container's environment as KEY=value lines, the values
// from elsewhere (valueFrom) left out.
func literalEnv(c corev1.Container) []string {
	var env []string
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return env
}

// checkContainerSettings: every CONNECT_INIT_* variable a container sets
// is a setting connect-init reads (the derivation TestSettingNames uses),
// envFrom is not used (its names cannot be checked here), and a container
// running connect-init accepts its settings' values.
func checkContainerSettings(t *testing.T, where string, c corev1.Container, valid map[string]bool) {
	t.Helper()
	if len(c.EnvFrom) > 0 {
		t.Errorf("%s: envFrom: the variables' names cannot be checked; list them under env", where)
	}
	seen := map[string]bool{}
	for _, e := range c.Env {
		if seen[e.Name] {
			t.Errorf("%s: %s is set twice (the last one wins)", where, e.Name)
		}
		seen[e.Name] = true
		if strings.HasPrefix(e.Name, settings.EnvPrefix+"_") && !valid[e.Name] {
			t.Errorf("%s: %s is not a connect-init setting (have %s)", where, e.Name, strings.Join(sortedKeys(valid), ", "))
		}
	}
	if invocations(append(append([]string{}, c.Command...), c.Args...)) == nil {
		return
	}
	if _, err := settings.LoadSettings(literalEnv(c)); err != nil {
		t.Errorf("%s: %v", where, err)
	}
}

// TestKubernetesWatcher checks the watcher of the Kubernetes example
// (kubernetes/watcher.yaml) and its Prometheus operator objects
// (kubernetes/prometheus-operator/): one replica of connect-init doctor
// --watch serving the port named metrics, with the workers' Connect
// cluster settings; the Service and the PodMonitor select its pods and
// that port; the PodMonitor's job (<namespace>/<name>) is the one every
// rule of the PrometheusRule that names a job selects; the rules are
// valid (promtool check rules).
func TestKubernetesWatcher(t *testing.T) {
	var worker, watcher *corev1.Container
	var dep *appsv1.Deployment
	var svc *corev1.Service
	for _, obj := range loadK8s(t, "kubernetes/statefulset.yaml") {
		if sts, ok := obj.(*appsv1.StatefulSet); ok {
			worker = &sts.Spec.Template.Spec.Containers[0]
		}
	}
	for _, obj := range loadK8s(t, "kubernetes/watcher.yaml") {
		switch o := obj.(type) {
		case *appsv1.Deployment:
			dep = o
		case *corev1.Service:
			svc = o
		}
	}
	if worker == nil || dep == nil || svc == nil {
		t.Fatalf("want the StatefulSet's worker, the watcher's Deployment and its Service: %v %v %v", worker != nil, dep != nil, svc != nil)
	}
	where := "kubernetes/watcher.yaml: Deployment " + dep.Name
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 1 {
		t.Errorf("%s: replicas %v, want 1 (one watcher per Connect cluster)", where, dep.Spec.Replicas)
	}
	pod := dep.Spec.Template
	if sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector); err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
		t.Errorf("%s: selector %v does not select its pod labels %v", where, dep.Spec.Selector, pod.Labels)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%s: %d containers, want the watcher alone", where, len(pod.Spec.Containers))
	}
	watcher = &pod.Spec.Containers[0]
	argv := append(append([]string{}, watcher.Command...), watcher.Args...)
	inv := invocations(argv)
	if checkSubcommands(t, where, argv) != "doctor" || len(inv) != 1 {
		t.Fatalf("%s: runs %q, want connect-init doctor --watch", where, argv)
	}
	args := strings.Join(inv[0], " ")
	m := regexp.MustCompile(`--metrics-addr=:(\d+)\b`).FindStringSubmatch(args)
	if !strings.Contains(args, "--watch") || m == nil || strings.Contains(args, " -- ") {
		t.Fatalf("%s: connect-init %s: want doctor --watch --metrics-addr=:PORT, execing nothing", where, args)
	}
	port, _ := strconv.Atoi(m[1])
	named := false
	for _, p := range watcher.Ports {
		named = named || (p.Name == "metrics" && int(p.ContainerPort) == port)
	}
	if !named {
		t.Errorf("%s: no container port named metrics on %d, the port --metrics-addr serves", where, port)
	}
	env := func(c *corev1.Container) map[string]string {
		out := map[string]string{}
		for _, e := range c.Env {
			out[e.Name] = e.Value
		}
		return out
	}
	we, ww := env(worker), env(watcher)
	for _, k := range []string{"CONNECT_BOOTSTRAP_SERVERS", "CONNECT_GROUP_ID", "CONNECT_CONFIG_STORAGE_TOPIC", "CONNECT_OFFSET_STORAGE_TOPIC",
		"CONNECT_STATUS_STORAGE_TOPIC", "CONNECT_INIT_EXPECTED_BROKERS"} {
		if we[k] == "" || ww[k] != we[k] {
			t.Errorf("%s: %s=%q, the workers' is %q: the watcher must watch their Connect cluster", where, k, ww[k], we[k])
		}
	}
	if ww["CONNECT_INIT_LOCK"] == "false" {
		t.Errorf("%s: CONNECT_INIT_LOCK=false hides the startup lock's queue from the watcher", where)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) || len(svc.Spec.Selector) == 0 ||
		len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("kubernetes/watcher.yaml: Service %s does not select the watcher's pods and its metrics port", svc.Name)
	}

	// The Prometheus operator's objects, decoded strictly by their fields.
	var pm struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name      string            `yaml:"name"`
			Namespace string            `yaml:"namespace"`
			Labels    map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Spec struct {
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			PodMetricsEndpoints []struct {
				Port     string `yaml:"port"`
				Path     string `yaml:"path"`
				Interval string `yaml:"interval"`
			} `yaml:"podMetricsEndpoints"`
		} `yaml:"spec"`
	}
	strictYAML(t, "kubernetes/prometheus-operator/podmonitor.yaml", &pm)
	if pm.APIVersion != "monitoring.coreos.com/v1" || pm.Kind != "PodMonitor" {
		t.Errorf("podmonitor.yaml: %s %s, want monitoring.coreos.com/v1 PodMonitor", pm.APIVersion, pm.Kind)
	}
	if !labels.SelectorFromSet(pm.Spec.Selector.MatchLabels).Matches(labels.Set(pod.Labels)) || len(pm.Spec.Selector.MatchLabels) == 0 {
		t.Errorf("podmonitor.yaml: selector %v does not select the watcher's pods %v", pm.Spec.Selector.MatchLabels, pod.Labels)
	}
	if len(pm.Spec.PodMetricsEndpoints) != 1 || pm.Spec.PodMetricsEndpoints[0].Port != "metrics" || pm.Spec.PodMetricsEndpoints[0].Path != "/metrics" {
		t.Errorf("podmonitor.yaml: endpoints %+v, want the port named metrics at /metrics", pm.Spec.PodMetricsEndpoints)
	}
	job := pm.Metadata.Namespace + "/" + pm.Metadata.Name
	if job != doctor.KubernetesNamespace+"/"+doctor.KubernetesWatcher {
		t.Errorf("podmonitor.yaml: job %s, the PrometheusRule is generated for %s/%s", job, doctor.KubernetesNamespace, doctor.KubernetesWatcher)
	}

	var pr struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name      string            `yaml:"name"`
			Namespace string            `yaml:"namespace"`
			Labels    map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Spec struct {
			Groups []map[string]any `yaml:"groups"`
		} `yaml:"spec"`
	}
	strictYAML(t, "kubernetes/prometheus-operator/prometheusrule.yaml", &pr)
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" || pr.Metadata.Namespace != pm.Metadata.Namespace {
		t.Errorf("prometheusrule.yaml: %s %s in %q, want monitoring.coreos.com/v1 PrometheusRule in the PodMonitor's namespace %q",
			pr.APIVersion, pr.Kind, pr.Metadata.Namespace, pm.Metadata.Namespace)
	}
	rules, err := yaml.Marshal(map[string]any{"groups": pr.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	jobs := regexp.MustCompile(`job="([^"]*)"`).FindAllStringSubmatch(string(rules), -1)
	if len(jobs) < 2 {
		t.Errorf("prometheusrule.yaml: %d job selectors, want the watcher's absent and down rules'", len(jobs))
	}
	for _, j := range jobs {
		if j[1] != job {
			t.Errorf("prometheusrule.yaml: a rule selects job %q, the PodMonitor's job is %q", j[1], job)
		}
	}
	file := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(file, rules, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool(t), "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on prometheusrule.yaml's spec: %v\n%s", err, out)
	}
}

// strictYAML decodes file into v, refusing a field v does not have.
func strictYAML(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

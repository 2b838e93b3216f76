package examples

import (
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// imageLayout is where an image keeps Kafka's file connectors and what it
// loads without a plugin path of the user's: the answer to "can a worker
// of this image load org.apache.kafka.connect.file.*?".
type imageLayout struct {
	// defaultPluginPath is the image's CONNECT_PLUGIN_PATH.
	defaultPluginPath string
	// fileConnectors is the directory holding connect-file-*.jar.
	fileConnectors string
}

// cpLayout is cp-kafka-connect from CP 7.2 on: ENV CONNECT_PLUGIN_PATH=
// /usr/share/java/,/usr/share/confluent-hub-components/ (kafka-images,
// kafka-connect-base/Dockerfile.ubi8 at v7.9.0, Dockerfile.ubi9 at
// v8.1.0), and the confluent-kafka package's file connectors in
// /usr/share/filestream-connectors, outside both (kafka-images
// kafka/Dockerfile.ubi9 copies that directory out of the package; since
// Kafka 3.2, KAFKA-13748, they are not on the classpath either).
var cpLayout = imageLayout{
	defaultPluginPath: "/usr/share/java/,/usr/share/confluent-hub-components/",
	fileConnectors:    "/usr/share/filestream-connectors",
}

// fileConnectorPrefix is the package of Kafka's FileStream connectors.
const fileConnectorPrefix = "org.apache.kafka.connect.file."

// pluginPathProblem says why a worker of layout l with environment env
// cannot load class, or "" when it can. A plugin.path entry covers the
// file connectors when it is their directory (its jar is a plugin
// location), its parent (the directory is one), or the jar itself.
func pluginPathProblem(l imageLayout, env map[string]string, class string) string {
	if !strings.HasPrefix(class, fileConnectorPrefix) {
		return ""
	}
	pp, set := env["CONNECT_PLUGIN_PATH"]
	if !set {
		pp = l.defaultPluginPath
	}
	for _, e := range strings.Split(pp, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		e = path.Clean(e)
		if e == l.fileConnectors || e == path.Dir(l.fileConnectors) || path.Dir(e) == l.fileConnectors {
			return ""
		}
	}
	how := "CONNECT_PLUGIN_PATH=" + pp
	if !set {
		how = "CONNECT_PLUGIN_PATH is not set (the image's default " + pp + ")"
	}
	return class + " is on no plugin path: " + how + " leaves out " + l.fileConnectors +
		", where the image keeps Kafka's file connectors (on neither the classpath nor the default plugin path since Kafka 3.2, KAFKA-13748); add it to CONNECT_PLUGIN_PATH"
}

var cpImageRe = regexp.MustCompile(`cp-kafka-connect:(\d+)\.(\d+)`)

// layoutOf is the layout of the image an example names: the tag of
// cp-kafka-connect in image, or, for the repository's own image built
// from the Dockerfile's confluent target, its CP_VERSION.
func layoutOf(t *testing.T, where, image string) imageLayout {
	t.Helper()
	m := cpImageRe.FindStringSubmatch(image)
	if m == nil && strings.Contains(image, "cp-kafka-connect:dev") {
		data, err := os.ReadFile("../Dockerfile")
		if err != nil {
			t.Fatal(err)
		}
		m = regexp.MustCompile(`(?m)^ARG CP_VERSION=(\d+)\.(\d+)`).FindStringSubmatch(string(data))
	}
	if m == nil {
		t.Fatalf("%s: image %q is no cp-kafka-connect this test knows the layout of", where, image)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	if major < 7 || major == 7 && minor < 2 {
		t.Fatalf("%s: cp-kafka-connect %s.%s predates /usr/share/filestream-connectors (7.2): extend the layout table", where, m[1], m[2])
	}
	return cpLayout
}

// exampleClasses are the connector classes of ../connectors/.
func exampleClasses(t *testing.T) []string {
	t.Helper()
	var classes []string
	for _, name := range sortedKeys(exampleConnectors(t)) {
		classes = append(classes, exampleConnectors(t)[name].Config["connector.class"])
	}
	return classes
}

// TestExamplesLoadTheirConnectors: every worker of the Compose, Swarm and
// Kubernetes examples can load the connectors ../connectors/ defines on
// the image the example names, so `connect-init apply` meets no class
// Connect cannot find.
func TestExamplesLoadTheirConnectors(t *testing.T) {
	classes := exampleClasses(t)
	var fileClasses int
	for _, c := range classes {
		if strings.HasPrefix(c, fileConnectorPrefix) {
			fileClasses++
		}
	}
	if fileClasses == 0 {
		t.Fatalf("connectors/ uses no file connector (%v): this test checks nothing then; point it at the classes used", classes)
	}
	type worker struct {
		where, image string
		env          map[string]string
	}
	var workers []worker
	df := loadDockerfile(t)
	for _, file := range []string{"compose/docker-compose.yml", "swarm/stack.yml"} {
		doc := loadYAML(t, file)[0]
		raw := asMap(doc["services"])
		for _, s := range servicesByRole(composeServices(t, file, doc, df), "run") {
			workers = append(workers, worker{s.String(), asString(asMap(raw[s.name])["image"]), s.env})
		}
	}
	for _, sts := range k8sObjects(loadYAML(t, "kubernetes/statefulset.yaml"))["StatefulSet"] {
		for _, c := range asList(dig(sts, "spec", "template", "spec", "containers")) {
			cm := asMap(c)
			env := map[string]string{}
			for _, e := range asList(cm["env"]) {
				em := asMap(e)
				if _, ok := em["value"]; ok {
					env[asString(em["name"])] = asString(em["value"])
				}
			}
			workers = append(workers, worker{"kubernetes/statefulset.yaml: " + asString(cm["name"]), asString(cm["image"]), env})
		}
	}
	if len(workers) < 3 {
		t.Fatalf("found %d worker definitions, want the Compose, Swarm and Kubernetes ones", len(workers))
	}
	for _, w := range workers {
		l := layoutOf(t, w.where, w.image)
		for _, c := range classes {
			if p := pluginPathProblem(l, w.env, c); p != "" {
				t.Errorf("%s (%s): %s", w.where, w.image, p)
			}
		}
	}
}

// TestPluginPathProblem: the check refuses what the real image refuses
// (the default plugin path, a path without the directory, the
// directory's sibling) and accepts every form Connect accepts.
func TestPluginPathProblem(t *testing.T) {
	const class = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	for _, tc := range []struct {
		env  map[string]string
		want bool // a problem
	}{
		{map[string]string{}, true},
		{map[string]string{"CONNECT_PLUGIN_PATH": "/usr/share/java/"}, true},
		{map[string]string{"CONNECT_PLUGIN_PATH": "/usr/share/java/,/usr/share/confluent-hub-components/"}, true},
		{map[string]string{"CONNECT_PLUGIN_PATH": "/usr/share/filestream"}, true},
		{map[string]string{"CONNECT_PLUGIN_PATH": ""}, true},
		{map[string]string{"CONNECT_PLUGIN_PATH": "/usr/share/java/,/usr/share/filestream-connectors"}, false},
		{map[string]string{"CONNECT_PLUGIN_PATH": "/usr/share/filestream-connectors/"}, false},
		{map[string]string{"CONNECT_PLUGIN_PATH": "/usr/share"}, false},
		{map[string]string{"CONNECT_PLUGIN_PATH": "/usr/share/filestream-connectors/connect-file-7.9.0-ccs.jar"}, false},
	} {
		p := pluginPathProblem(cpLayout, tc.env, class)
		if (p != "") != tc.want {
			t.Errorf("%v: problem %q, want one: %v", tc.env, p, tc.want)
		}
		if p != "" && !strings.Contains(p, "/usr/share/filestream-connectors") {
			t.Errorf("%v: the problem does not name the directory to add: %s", tc.env, p)
		}
	}
	if p := pluginPathProblem(cpLayout, map[string]string{}, "io.confluent.connect.jdbc.JdbcSourceConnector"); p != "" {
		t.Errorf("a class outside Kafka's file connectors is not this check's: %s", p)
	}
}

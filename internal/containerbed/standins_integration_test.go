//go:build integration

package containerbed

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// configJSON is the part of `connect-init config --json` this test reads.
type configJSON struct {
	Flavour struct {
		Name     string `json:"name"`
		Detected bool   `json:"detected"`
		Evidence string `json:"evidence"`
	} `json:"flavour"`
	BaseFile string `json:"base_file"`
	Worker   []struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	} `json:"worker"`
}

// standinEnv is a worker's settings in the variables each image reads.
func standinEnv(flavour string) []string {
	switch flavour {
	case "debezium":
		return []string{"BOOTSTRAP_SERVERS=kafka-1:9092", "GROUP_ID=standin", "CONFIG_STORAGE_TOPIC=_standin-configs",
			"OFFSET_STORAGE_TOPIC=_standin-offsets", "STATUS_STORAGE_TOPIC=_standin-status", "ADVERTISED_HOST_NAME=standin",
			"CONNECT_OFFSET_STORAGE_PARTITIONS=3"}
	case "apache":
		return nil // a mounted worker file
	}
	return []string{"CONNECT_BOOTSTRAP_SERVERS=kafka-1:9092", "CONNECT_GROUP_ID=standin", "CONNECT_CONFIG_STORAGE_TOPIC=_standin-configs",
		"CONNECT_OFFSET_STORAGE_TOPIC=_standin-offsets", "CONNECT_STATUS_STORAGE_TOPIC=_standin-status",
		"CONNECT_KEY_CONVERTER=org.apache.kafka.connect.json.JsonConverter", "CONNECT_VALUE_CONVERTER=org.apache.kafka.connect.json.JsonConverter",
		"CONNECT_REST_ADVERTISED_HOST_NAME=standin", "CONNECT_OFFSET_STORAGE_PARTITIONS=3",
		// A single-letter segment: dub renders a.b.c, ub a.b_c.
		"CONNECT_X_Y_Z=1", "CONNECT_METRIC_REPORTERS=left.out"}
}

// TestStandinsDetected: connect-init, inside each stand-in, detects the
// image the stand-in is for (`connect-init config --json`), reads the
// worker settings the stand-in's own launcher renders (the launcher run
// up to the worker file, its JVM replaced by `cat`), and the image runs as
// the real image's user and uid. No broker is needed: nothing connects.
func TestStandinsDetected(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := filepath.Join(bed.Dir, "standins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The apache flavour's worker file, and a launcher stand-in that
	// prints the file it is given instead of starting Connect.
	worker := filepath.Join(dir, "worker.properties")
	if err := os.WriteFile(worker, []byte("bootstrap.servers=kafka-1:9092\ngroup.id=standin\nconfig.storage.topic=_standin-configs\noffset.storage.topic=_standin-offsets\nstatus.storage.topic=_standin-status\nkey.converter=org.apache.kafka.connect.json.JsonConverter\nvalue.converter=org.apache.kafka.connect.json.JsonConverter\nrest.advertised.host.name=standin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	catLauncher := filepath.Join(dir, "cat-launcher")
	if err := os.WriteFile(catLauncher, []byte("#!/bin/sh\n# the worker file the launcher was given, instead of the worker\necho '"+fileMarker+"'\nexec cat \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantUser := map[string]string{"confluent-dub": "1000 appuser", "confluent-ub": "1000 appuser", "debezium": "1001 kafka", "apache": "1000 appuser"}
	for _, s := range Standins() {
		if s.Flavour == "" {
			continue
		}
		t.Run(s.Target, func(t *testing.T) {
			image := bed.Image + s.Suffix
			args := []string{"run", "--rm", "--label", Label}
			for _, e := range standinEnv(s.Flavour) {
				args = append(args, "--env", e)
			}
			var launcher []string // the image's launcher, run up to its worker file
			switch s.Flavour {
			case "apache":
				args = append(args, "--mount", "type=bind,src="+worker+",dst=/etc/kafka-connect/worker.properties,readonly")
			case "debezium":
				args = append(args, "--mount", "type=bind,src="+catLauncher+",dst=/kafka/bin/connect-distributed.sh,readonly")
				launcher = []string{"/docker-entrypoint.sh", "start"}
			default:
				args = append(args, "--mount", "type=bind,src="+catLauncher+",dst=/usr/bin/connect-distributed,readonly")
				// configure and launch, as run calls them; ensure's
				// kafka-ready needs a broker and renders nothing.
				launcher = []string{"/bin/sh", "-c", ". /etc/confluent/docker/bash-config; . /etc/confluent/docker/apply-mesos-overrides; /etc/confluent/docker/configure >&2 && exec /etc/confluent/docker/launch"}
			}
			run := func(argv ...string) string {
				t.Helper()
				a := append(append([]string{}, args...), "--entrypoint", argv[0], image)
				out, err := Docker(ctx, append(a, argv[1:]...)...)
				if err != nil {
					t.Fatalf("%v: %v\n%s", argv, err, out)
				}
				return out
			}
			var wrapped struct {
				Result configJSON `json:"result"`
				Errors []struct {
					Problem string `json:"problem"`
				} `json:"errors"`
			}
			out := run("connect-init", "config", "--json")
			if err := json.Unmarshal([]byte(out), &wrapped); err != nil {
				t.Fatalf("config --json: %v\n%s", err, out)
			}
			doc := wrapped.Result
			t.Logf("%s: flavour %s (detected %v: %s), base file %q", s.Image, doc.Flavour.Name, doc.Flavour.Detected, doc.Flavour.Evidence, doc.BaseFile)
			if doc.Flavour.Name != s.Flavour || !doc.Flavour.Detected {
				t.Errorf("connect-init detected %q (detected=%v, %s), want %s", doc.Flavour.Name, doc.Flavour.Detected, doc.Flavour.Evidence, s.Flavour)
			}
			if len(wrapped.Errors) > 0 {
				t.Errorf("settings refused: %+v", wrapped.Errors)
			}
			if u := run("/bin/sh", "-c", "echo $(id -u) $(id -un)"); u != wantUser[s.Flavour] {
				t.Errorf("runs as %q, want %q", u, wantUser[s.Flavour])
			}
			if launcher == nil {
				return
			}
			// What connect-init reads is what the launcher renders.
			rendered := run(launcher...)
			_, file, found := strings.Cut(rendered, fileMarker)
			if !found {
				t.Fatalf("the launcher never reached connect-distributed:\n%s", rendered)
			}
			got := map[string]string{}
			for _, l := range strings.Split(file, "\n") {
				if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") || !strings.Contains(l, "=") {
					continue
				}
				k, v, _ := strings.Cut(l, "=")
				got[k] = v
			}
			want := map[string]string{}
			for _, w := range doc.Worker {
				want[w.Key] = w.Value
			}
			if diff := diffProps(want, got); diff != "" {
				t.Errorf("connect-init's worker settings differ from the file the launcher wrote:\n%s\nlauncher output:\n%s", diff, rendered)
			}
			t.Logf("the launcher rendered %d properties, the same as connect-init read", len(got))
		})
	}
}

// fileMarker precedes the worker file in the output of a launcher whose
// connect-distributed is replaced by cat.
const fileMarker = "--- the worker file connect-distributed was given:"

// diffProps lists the keys whose values differ.
func diffProps(want, got map[string]string) string {
	var lines []string
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			lines = append(lines, "  "+k+": connect-init "+v+", launcher "+g)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			lines = append(lines, "  "+k+": launcher only, "+v)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestStandinFileConnectors: on the cp-kafka-connect stand-in, as on the
// image, Kafka's FileStream connectors load only with the plugin path the
// examples set: Kafka's own `connect-plugin-path list` (ConnectPluginPath,
// the worker's plugin scan) on the worker file the image's configure
// renders finds FileStreamSourceConnector with the Compose example's
// CONNECT_PLUGIN_PATH, in /usr/share/filestream-connectors, and nowhere
// with the image's default, so that an example without it fails here as
// it would on the image.
func TestStandinFileConnectors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	data, err := os.ReadFile("../../examples/compose/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	examplePath, _ := doc["x-connect-env"].(map[string]any)["CONNECT_PLUGIN_PATH"].(string)
	if examplePath == "" {
		t.Fatal("examples/compose/docker-compose.yml sets no CONNECT_PLUGIN_PATH in x-connect-env: update this test")
	}
	const class = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	list := ". /etc/confluent/docker/bash-config; . /etc/confluent/docker/apply-mesos-overrides; /etc/confluent/docker/configure >&2 && " +
		"exec java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile=/etc/kafka/log4j2.properties -cp '/usr/share/java/kafka/*' " +
		"org.apache.kafka.tools.ConnectPluginPath list --worker-config /etc/kafka-connect/kafka-connect.properties"
	for _, tc := range []struct {
		name, pluginPath string // "" is the image's default
		wantIn           string // the location listing the class, "" for none
	}{
		{"image-default", "", ""},
		{"example", examplePath, "/usr/share/filestream-connectors/connect-file-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"run", "--rm", "--label", Label}
			for _, e := range standinEnv("confluent-dub") {
				args = append(args, "--env", e)
			}
			if tc.pluginPath != "" {
				args = append(args, "--env", "CONNECT_PLUGIN_PATH="+tc.pluginPath)
			}
			out, err := Docker(ctx, append(args, "--entrypoint", "/bin/sh", bed.Image, "-c", list)...)
			if err != nil {
				t.Fatalf("connect-plugin-path list: %v\n%s", err, tail(out, 4000))
			}
			var rows []string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), class) {
					rows = append(rows, l)
				}
			}
			t.Logf("CONNECT_PLUGIN_PATH=%q: %d row(s) of %s: %v", tc.pluginPath, len(rows), class, rows)
			switch {
			case tc.wantIn == "" && len(rows) > 0:
				t.Errorf("the worker loads %s without the examples' plugin path; the image does not (KAFKA-13748): %v", class, rows)
			case tc.wantIn != "" && (len(rows) == 0 || !strings.Contains(strings.Join(rows, "\n"), tc.wantIn)):
				t.Errorf("the worker does not load %s from %s*.jar with the example's plugin path:\n%s", class, tc.wantIn, tail(out, 4000))
			}
		})
	}
}

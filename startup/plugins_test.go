package startup

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/connect-init/connect-init/connect/plugins"
	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// A java command line's classpath is its own; a launcher script's is
// $CLASSPATH then the image's library directories that exist.
func TestWorkerClasspath(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"usr/share/java/kafka", "usr/share/java/kafka-serde-tools"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	java := &entrypoint.Command{Path: "/usr/bin/java", Argv: []string{"java", "-Xmx1g", "-cp", "/a/*:/b.jar", "org.apache.kafka.connect.cli.ConnectDistributed", "w.properties"},
		Env: []string{"CLASSPATH=/ignored.jar"}}
	if got := workerClasspath(workerconfig.ConfluentDub, java, root); !slices.Equal(got, []string{"/a/*", "/b.jar"}) {
		t.Errorf("java command: %v", got)
	}
	run := &entrypoint.Command{Path: "/etc/confluent/docker/run", Argv: []string{"/etc/confluent/docker/run"}, Env: []string{"CLASSPATH=/extra/x.jar"}}
	want := []string{"/extra/x.jar", filepath.Join(root, "usr/share/java/kafka/*"), filepath.Join(root, "usr/share/java/kafka-serde-tools/*")}
	if got := workerClasspath(workerconfig.ConfluentDub, run, root); !slices.Equal(got, want) {
		t.Errorf("launcher: %v, want %v", got, want)
	}
	if got := workerClasspath(workerconfig.Apache, run, root); !slices.Equal(got, []string{"/extra/x.jar"}) {
		t.Errorf("apache image without /opt/kafka/libs: %v", got)
	}
}

// plugin.path set but empty is the working directory, as Connect reads
// it; unset is none; a bad plugin.discovery is bad configuration.
func TestScanOptions(t *testing.T) {
	cfg := &settings.Config{Worker: workerconfig.Properties{"plugin.path": " /p1, /p2 ", "plugin.discovery": "SERVICE_LOAD"}}
	o, err := scanOptions(cfg, nil, "")
	if err != nil || o.PluginPath != "/p1, /p2" || o.Discovery != plugins.ServiceLoad {
		t.Fatalf("%+v %v", o, err)
	}
	cfg.Worker = workerconfig.Properties{"plugin.path": "  "}
	if o, _ := scanOptions(cfg, nil, ""); o.PluginPath != "." || o.Discovery != plugins.DefaultDiscovery {
		t.Errorf("empty plugin.path: %+v", o)
	}
	cfg.Worker = workerconfig.Properties{}
	if o, _ := scanOptions(cfg, nil, ""); o.PluginPath != "" {
		t.Errorf("unset plugin.path: %+v", o)
	}
	cfg.Worker = workerconfig.Properties{"plugin.discovery": "fast"}
	if _, err := scanOptions(cfg, nil, ""); !settings.AsConfigError(err) {
		t.Errorf("bad plugin.discovery: %v", err)
	}
}

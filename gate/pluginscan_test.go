package gate

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
	if got := workerClasspath(&settings.Config{Flavour: workerconfig.ConfluentDub}, java, root); !slices.Equal(got, []string{"/a/*", "/b.jar"}) {
		t.Errorf("java command: %v", got)
	}
	run := &entrypoint.Command{Path: "/etc/confluent/docker/run", Argv: []string{"/etc/confluent/docker/run"}, Env: []string{"CLASSPATH=/extra/x.jar"}}
	want := []string{"/extra/x.jar", filepath.Join(root, "usr/share/java/kafka/*"), filepath.Join(root, "usr/share/java/kafka-serde-tools/*")}
	if got := workerClasspath(&settings.Config{Flavour: workerconfig.ConfluentDub}, run, root); !slices.Equal(got, want) {
		t.Errorf("launcher: %v, want %v", got, want)
	}
	if got := workerClasspath(&settings.Config{Flavour: workerconfig.Apache}, run, root); !slices.Equal(got, []string{"/extra/x.jar"}) {
		t.Errorf("apache image without /opt/kafka/libs: %v", got)
	}
	// apache/kafka and Debezium: kafka-run-class.sh lists libs/ file by
	// file and leaves connect-file (KAFKA-13748) and test jars out.
	libs := filepath.Join(root, "opt/kafka/libs")
	if err := os.MkdirAll(libs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"connect-file-4.0.0.jar", "connect-runtime-4.0.0.jar", "kafka-clients-4.0.0.jar", "kafka_2.13-4.0.0-test.jar"} {
		if err := os.WriteFile(filepath.Join(libs, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantApache := []string{"/extra/x.jar", filepath.Join(libs, "connect-runtime-4.0.0.jar"), filepath.Join(libs, "kafka-clients-4.0.0.jar")}
	if got := workerClasspath(&settings.Config{Flavour: workerconfig.Apache}, run, root); !slices.Equal(got, wantApache) {
		t.Errorf("apache image: %v, want %v", got, wantApache)
	}
	// doctor has no command: $CLASSPATH of its environment, then the
	// image's directories.
	doctor := &settings.Config{Flavour: workerconfig.ConfluentUB, Environ: []string{"CLASSPATH=/extra/x.jar"}}
	if got := workerClasspath(doctor, nil, root); !slices.Equal(got, want) {
		t.Errorf("no command: %v, want %v", got, want)
	}
}

// plugin.path set but empty is the working directory, as Connect reads
// it; unset is none; a bad plugin.discovery is bad configuration.
func TestScanOptions(t *testing.T) {
	cfg := &settings.Config{Worker: workerconfig.Properties{"plugin.path": " /p1, /p2 ", "plugin.discovery": "SERVICE_LOAD"}}
	o, err := PluginScanOptions(cfg, nil, "")
	if err != nil || o.PluginPath != "/p1, /p2" || o.Discovery != plugins.ServiceLoad {
		t.Fatalf("%+v %v", o, err)
	}
	cfg.Worker = workerconfig.Properties{"plugin.path": "  "}
	if o, _ := PluginScanOptions(cfg, nil, ""); o.PluginPath != "." || o.Discovery != plugins.DefaultDiscovery {
		t.Errorf("empty plugin.path: %+v", o)
	}
	cfg.Worker = workerconfig.Properties{}
	if o, _ := PluginScanOptions(cfg, nil, ""); o.PluginPath != "" {
		t.Errorf("unset plugin.path: %+v", o)
	}
	cfg.Worker = workerconfig.Properties{"plugin.discovery": "fast"}
	if _, err := PluginScanOptions(cfg, nil, ""); !settings.AsConfigError(err) {
		t.Errorf("bad plugin.discovery: %v", err)
	}
}

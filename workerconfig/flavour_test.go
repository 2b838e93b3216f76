package workerconfig

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vector is one case rendered by an image's own implementation
// (testdata/flavours/README.md says how they were made).
type vector struct {
	Name     string   `json:"name"`
	Env      []string `json:"env"`
	Exit     int      `json:"exit"`
	Rendered *string  `json:"rendered"`
}

func readVectors(t *testing.T, flavour string) []vector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "flavours", "vectors-"+flavour+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatalf("no vectors for %s", flavour)
	}
	return vs
}

func diffProps(t *testing.T, name string, got, want Properties) {
	t.Helper()
	if maps.Equal(got, want) {
		return
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: %s = %q (present %v), the image gives %q", name, k, got[k], ok, v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s = %q, which the image does not set", name, k, v)
		}
	}
}

// TestConfluentRulesAgreeWithImages renders each case with our dub and ub
// rules and compares with what Python dub and Go ub rendered from the same
// environment (the worker then reads both files with Java's rules).
func TestConfluentRulesAgreeWithImages(t *testing.T) {
	for _, flavour := range []Flavour{ConfluentDub, ConfluentUB} {
		for _, v := range readVectors(t, string(flavour)) {
			want, err := Parse([]byte(*v.Rendered))
			if err != nil {
				t.Fatalf("%s/%s: %v", flavour, v.Name, err)
			}
			render := renderDub
			if flavour == ConfluentUB {
				render = renderUB
			}
			text, _ := render(v.Env)
			got, err := Parse([]byte(text))
			if err != nil {
				t.Fatalf("%s/%s: %v", flavour, v.Name, err)
			}
			diffProps(t, string(flavour)+"/"+v.Name, got, want)
		}
	}
}

// TestConfluentOneLetterNamesDiffer pins the CP 8.1 difference the vectors
// show: the same variable names give different properties under dub and ub.
func TestConfluentOneLetterNamesDiffer(t *testing.T) {
	for env, want := range map[string][2]string{
		"CONNECT_X_Y_Z":                      {"x.y.z", "x.y_z"},
		"CONNECT_CONFIG_PROVIDERS_X_PARAM_A": {"config.providers.x.param.a", "config.providers.x_param.a"},
		"CONNECT_GROUP_ID":                   {"group.id", "group.id"},
	} {
		d, _ := PropertyName(env)
		u, _ := PropertyNameUB(env)
		if d != want[0] || u != want[1] {
			t.Errorf("%s: dub %q ub %q, want %q %q", env, d, u, want[0], want[1])
		}
	}
	if _, ok := PropertyName("CONNECT_METRIC_REPORTERS"); ok {
		t.Error("dub excludes CONNECT_METRIC_REPORTERS")
	}
	if p, ok := PropertyNameUB("CONNECT_METRIC_REPORTERS"); !ok || p != "metric.reporters" {
		t.Error("ub does not exclude CONNECT_METRIC_REPORTERS")
	}
}

func debeziumRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "kafka", "config.orig")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base, err := os.ReadFile(filepath.Join("testdata", "flavours", "debezium-base.properties"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "connect-distributed.properties"), base, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestDebeziumAgreesWithEntrypoint loads each case as connect-init does on
// Debezium's image and compares with the file Debezium's own
// /docker-entrypoint.sh handed to connect-distributed.sh.
func TestDebeziumAgreesWithEntrypoint(t *testing.T) {
	for _, v := range readVectors(t, "debezium") {
		l, err := LoadFor(LoadOptions{Flavour: Debezium, Environ: v.Env, Root: debeziumRoot(t),
			HostAddress: func() (string, error) { return "192.0.2.1", nil }})
		if v.Rendered == nil {
			if err == nil {
				t.Errorf("%s: the entrypoint exits %d before starting the worker, connect-init accepts it", v.Name, v.Exit)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", v.Name, err)
			continue
		}
		want, err := Parse([]byte(*v.Rendered))
		if err != nil {
			t.Fatal(err)
		}
		diffProps(t, "debezium/"+v.Name, l.Props, want)
	}
}

func TestDebeziumSources(t *testing.T) {
	env := []string{"BOOTSTRAP_SERVERS=kafka:9092", "CONFIG_STORAGE_TOPIC=c", "OFFSET_STORAGE_TOPIC=o", "CONNECT_GROUP_ID=mine"}
	l, err := LoadFor(LoadOptions{Flavour: Debezium, Environ: env, Root: debeziumRoot(t),
		HostAddress: func() (string, error) { return "192.0.2.1", nil }})
	if err != nil {
		t.Fatal(err)
	}
	for prop, want := range map[string]string{
		"bootstrap.servers":         "BOOTSTRAP_SERVERS",
		"group.id":                  "GROUP_ID (Debezium entrypoint default 1)",
		"rest.advertised.host.name": "HOST_NAME (Debezium entrypoint: this container's address 192.0.2.1)",
		"status.storage.topic":      "/kafka/config.orig/connect-distributed.properties:14",
	} {
		got := l.Sources[prop].String()
		if strings.HasPrefix(want, "/") {
			got = strings.TrimPrefix(got, strings.TrimSuffix(l.BaseFile, "/kafka/config.orig/connect-distributed.properties"))
		}
		if got != want {
			t.Errorf("source of %s = %q, want %q", prop, got, want)
		}
	}
	if l.Props["group.id"] != "1" || l.Props["rest.advertised.host.name"] != "192.0.2.1" {
		t.Errorf("group.id %q, advertised host %q", l.Props["group.id"], l.Props["rest.advertised.host.name"])
	}
	if len(l.Ignored) != 1 || !strings.Contains(l.Ignored[0], "CONNECT_GROUP_ID is overwritten") {
		t.Errorf("warnings = %q", l.Ignored)
	}
}

func TestDebeziumRequired(t *testing.T) {
	root := debeziumRoot(t)
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"CONFIG_STORAGE_TOPIC=c", "OFFSET_STORAGE_TOPIC=o", "CONNECT_BOOTSTRAP_SERVERS=k:9092"}, "BOOTSTRAP_SERVERS (worker property bootstrap.servers) is not set"},
		{[]string{"BOOTSTRAP_SERVERS=k:9092", "CONNECT_CONFIG_STORAGE_TOPIC=c", "OFFSET_STORAGE_TOPIC=o"}, "CONFIG_STORAGE_TOPIC (worker property config.storage.topic) is not set"},
		{[]string{"BOOTSTRAP_SERVERS=k:9092", "CONFIG_STORAGE_TOPIC=c"}, "OFFSET_STORAGE_TOPIC"},
	} {
		_, err := LoadFor(LoadOptions{Flavour: Debezium, Environ: c.env, Root: root, HostAddress: func() (string, error) { return "192.0.2.1", nil }})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want prefix %q", c.env, err, c.want)
		}
	}
	// Docker links fill BOOTSTRAP_SERVERS as the entrypoint does.
	l, err := LoadFor(LoadOptions{Flavour: Debezium, Root: root, HostAddress: func() (string, error) { return "192.0.2.1", nil },
		Environ: []string{"KAFKA_PORT_9092_TCP=tcp://172.17.0.2:9092", "CONFIG_STORAGE_TOPIC=c", "OFFSET_STORAGE_TOPIC=o"}})
	if err != nil || l.Props["bootstrap.servers"] != "172.17.0.2:9092" {
		t.Errorf("links: %v %q", err, l.Props["bootstrap.servers"])
	}
}

func TestConfluentEnsure(t *testing.T) {
	full := []string{"CONNECT_BOOTSTRAP_SERVERS=k:9092", "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c", "CONNECT_OFFSET_STORAGE_TOPIC=o",
		"CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_KEY_CONVERTER=k", "CONNECT_VALUE_CONVERTER=v", "CONNECT_REST_ADVERTISED_HOST_NAME=w"}
	without := func(name string, extra ...string) []string {
		var out []string
		for _, kv := range full {
			if !strings.HasPrefix(kv, name+"=") {
				out = append(out, kv)
			}
		}
		return append(out, extra...)
	}
	for _, c := range []struct {
		f    Flavour
		env  []string
		want string // "" = accepted
	}{
		{ConfluentDub, full, ""},
		{ConfluentUB, full, ""},
		{ConfluentDub, without("CONNECT_KEY_CONVERTER"), "CONNECT_KEY_CONVERTER (worker property key.converter) is not set"},
		{ConfluentUB, without("CONNECT_REST_ADVERTISED_HOST_NAME"), "CONNECT_REST_ADVERTISED_HOST_NAME"},
		{ConfluentDub, without("CONNECT_REST_ADVERTISED_HOST_NAME", "HOST=mesos"), ""},
		{ConfluentDub, without("CONNECT_VALUE_CONVERTER", "CONNECT_VALUE_CONVERTER="), "CONNECT_VALUE_CONVERTER (worker property value.converter) is empty"},
		{ConfluentUB, without("CONNECT_VALUE_CONVERTER", "CONNECT_VALUE_CONVERTER="), ""},
		{ConfluentDub, without("CONNECT_VALUE_CONVERTER", "CONNECT_VALUE_CONVERTER="+avroConverter), "CONNECT_VALUE_CONVERTER_SCHEMA_REGISTRY_URL"},
		{ConfluentUB, without("CONNECT_KEY_CONVERTER", "CONNECT_KEY_CONVERTER="+avroConverter, "CONNECT_KEY_CONVERTER_SCHEMA_REGISTRY_URL=http://sr:8081"), ""},
	} {
		_, err := LoadFor(LoadOptions{Flavour: c.f, Environ: c.env})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %v: %v", c.f, c.env, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s %v: err = %v, want prefix %q", c.f, c.env, err, c.want)
		}
	}
}

func TestDetect(t *testing.T) {
	write := func(root, rel, content string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]func(root string){
		"confluent-dub": func(r string) {
			write(r, confluentTemplate, "{% set connect_props = env_to_props('CONNECT_', '', exclude=excluded_props) -%}")
		},
		"confluent-ub": func(r string) {
			write(r, confluentTemplate, `{{- $connect_props := envToProps "CONNECT_" "" nil nil $excluded_props -}}`)
		},
		"debezium": func(r string) {
			write(r, debeziumEntrypoint, "export CONNECT_OFFSET_STORAGE_TOPIC=$OFFSET_STORAGE_TOPIC\nsed -i x $KAFKA_HOME/config/connect-distributed.properties\n")
			write(r, "opt/kafka/bin/connect-distributed.sh", "#!/bin/sh\n")
		},
		"apache": func(r string) {
			write(r, apacheConnectStart, "#!/bin/sh\n")
			write(r, debeziumEntrypoint, "#!/bin/sh\nexec \"$@\"\n") // some other entrypoint
		},
	}
	for want, setup := range cases {
		root := t.TempDir()
		setup(root)
		d := Detect(root)
		if string(d.Flavour) != want || !d.Found || d.Evidence == "" {
			t.Errorf("%s: detected %+v", want, d)
		}
	}
	if d := Detect(t.TempDir()); d.Found || d.Flavour != ConfluentDub {
		t.Errorf("empty root: %+v", d)
	}
}

func TestPropertiesOnlyIgnoresVariables(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "worker.properties")
	os.WriteFile(file, []byte("# worker\nbootstrap.servers=b:9092\n\ngroup.id=g\n"), 0o600)
	env := []string{"CONNECT_PORT=tcp://10.0.0.1:8083", "CONNECT_GROUP_ID=service-link"}
	for _, f := range []Flavour{Apache, PropertiesFile} {
		l, err := LoadFor(LoadOptions{Flavour: f, Environ: env, File: file})
		if err != nil {
			t.Fatal(err)
		}
		if l.Props["group.id"] != "g" || len(l.Props) != 2 || len(l.Ignored) != 2 {
			t.Errorf("%s: props %v ignored %v", f, l.Props, l.Ignored)
		}
		if got := l.Sources["group.id"].String(); got != file+":4" {
			t.Errorf("source %q", got)
		}
		_, err = LoadFor(LoadOptions{Flavour: f, Environ: env})
		if err == nil || !strings.HasPrefix(err.Error(), "CONNECT_INIT_WORKER_CONFIG") {
			t.Errorf("%s without a file: %v", f, err)
		}
		_, err = LoadFor(LoadOptions{Flavour: f, Environ: env, File: filepath.Join(dir, "nope")})
		if err == nil || !strings.Contains(err.Error(), "CONNECT_INIT_WORKER_CONFIG") || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("%s missing file: %v", f, err)
		}
	}
}

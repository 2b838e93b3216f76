package plugins

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/checks"
)

func TestReadClassHeader(t *testing.T) {
	var sc classScratch
	tests := []struct {
		name  string
		class cls
		want  classHeader
		inst  bool
	}{
		{"public concrete", pub("a.B", "a.Base", "x.I", "y.J"), classHeader{name: "a.B", super: "a.Base", interfaces: []string{"x.I", "y.J"}, access: accPublic}, true},
		{"nested", pub("a.Outer$Key", "a.Outer"), classHeader{name: "a.Outer$Key", super: "a.Outer", access: accPublic}, true},
		{"abstract", cls{name: "a.A", super: "java.lang.Object", access: accPublic | accAbstract}, classHeader{name: "a.A", super: "java.lang.Object", access: accPublic | accAbstract}, false},
		{"interface", cls{name: "a.I", super: "java.lang.Object", access: accPublic | accInterface | accAbstract}, classHeader{name: "a.I", super: "java.lang.Object", access: accPublic | accInterface | accAbstract}, false},
		{"package-private", cls{name: "a.P", super: "java.lang.Object"}, classHeader{name: "a.P", super: "java.lang.Object"}, false},
		{"no superclass (java.lang.Object itself)", cls{name: "java.lang.Object", access: accPublic}, classHeader{name: "java.lang.Object", access: accPublic}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := readClassHeader(bytes.NewReader(classBytes(tc.class)), &sc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(h, tc.want) {
				t.Errorf("got %+v, want %+v", h, tc.want)
			}
			if h.instantiable() != tc.inst {
				t.Errorf("instantiable = %v", h.instantiable())
			}
		})
	}
	for name, data := range map[string][]byte{
		"empty":     nil,
		"bad magic": []byte("PK\x03\x04 not a class at all"),
		"truncated": classBytes(pub("a.B", "a.C"))[:30],
		"bad tag":   append([]byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 61, 0, 2}, 99),
	} {
		if _, err := readClassHeader(bytes.NewReader(data), &sc); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestVersions(t *testing.T) {
	cmp := []struct {
		a, b string
		want int
	}{
		{"1.0", "1", 0}, {"1.0.0", "1.0", 0}, {"2.7.3.Final", "2.7.3", 0}, {"1.0-GA", "1.0", 0},
		{"1.10", "1.9", 1}, {"10.7.4", "10.8.0", -1}, {"1.0-SNAPSHOT", "1.0", -1}, {"1.0-rc1", "1.0-SNAPSHOT", -1},
		{"1.0-alpha", "1.0-beta", -1}, {"1.0-sp1", "1.0", 1}, {"4.1.1", "4.1.1", 0}, {"1.0.1", "1.0-sp", 1},
	}
	for _, c := range cmp {
		if got := compareVersions(c.a, c.b); got != c.want {
			t.Errorf("compare(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	ranges := []struct {
		spec    string
		in, out []string
	}{
		{"", []string{"1.0", "anything"}, nil},
		{"latest", []string{"0.1"}, nil},
		{"2.5.0", []string{"2.5.0", "2.5"}, []string{"2.5.1", "2.4.9"}},
		{"[1.0,2.0)", []string{"1.0", "1.9.9"}, []string{"2.0", "0.9"}},
		{"(1.0,]", []string{"1.0.1", "99"}, []string{"1.0"}},
		{"[1.0,1.1),[3.0,)", []string{"1.0.5", "3.0", "4"}, []string{"2.0", "1.1"}},
		{"[4.1.1]", []string{"4.1.1"}, []string{"4.1.2"}},
	}
	for _, r := range ranges {
		vr, err := parseVersionRange(r.spec)
		if err != nil {
			t.Fatalf("%q: %v", r.spec, err)
		}
		for _, v := range r.in {
			if !vr.contains(v) {
				t.Errorf("%q should contain %q", r.spec, v)
			}
		}
		for _, v := range r.out {
			if vr.contains(v) {
				t.Errorf("%q should not contain %q", r.spec, v)
			}
		}
	}
	for _, bad := range []string{"[1.0", "(1.0)", "[1.0,2.0) x"} {
		if _, err := parseVersionRange(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestJarMetadata(t *testing.T) {
	names := map[string]string{
		"debezium-connector-postgres-2.7.3.Final.jar": "2.7.3.Final",
		"kafka-connect-jdbc-10.7.4.jar":               "10.7.4",
		"jackson-datatype-jdk8-2.19.0.jar":            "2.19.0",
		"zstd-jni-1.5.6-10.jar":                       "1.5.6-10",
		"kafka_2.13-4.1.1.jar":                        "4.1.1",
		"uber.jar":                                    "",
		"plugin-latest.ZIP":                           "",
		"notes-1.0.txt":                               "",
	}
	for name, want := range names {
		if got := versionInFileName(name); got != want {
			t.Errorf("versionInFileName(%q) = %q, want %q", name, got, want)
		}
	}
	mf := "Manifest-Version: 1.0\r\nImplementation-Title: a very long title that\r\n  continues\r\nImplementation-Version: 3.2\r\n .1-beta\r\nBuilt-By: x\r\n\r\nName: section\r\nImplementation-Version: 9\r\n"
	if got := manifestAttr(strings.NewReader(mf), "Implementation-Version"); got != "3.2.1-beta" {
		t.Errorf("manifestAttr = %q", got)
	}
	if got := manifestAttr(strings.NewReader("Manifest-Version: 1.0\n\nName: a\nImplementation-Version: 9\n"), "Implementation-Version"); got != "" {
		t.Errorf("a section's attribute was taken: %q", got)
	}
	svc := "# header\n\n  a.B  # why\nc.D\n#e.F\n"
	if got := serviceClasses(strings.NewReader(svc)); !reflect.DeepEqual(got, []string{"a.B", "c.D"}) {
		t.Errorf("serviceClasses = %v", got)
	}
}

func TestIsolation(t *testing.T) {
	for name, want := range map[string]bool{
		"io.debezium.connector.postgresql.PostgresConnector":                               true,
		"org.apache.kafka.connect.file.FileStreamSourceConnector":                          true,
		"org.apache.kafka.connect.transforms.Cast$Key":                                     true,
		"org.apache.kafka.connect.transforms.Transformation":                               false,
		"org.apache.kafka.connect.transforms.predicates.Predicate":                         false,
		"org.apache.kafka.connect.transforms.predicates.HasHeaderKey":                      true,
		"org.apache.kafka.connect.storage.StringConverter":                                 true,
		"org.apache.kafka.connect.storage.Converter":                                       false,
		"org.apache.kafka.connect.connector.policy.AllConnectorClientConfigOverridePolicy": true,
		"org.apache.kafka.connect.connector.policy.ConnectorClientConfigOverridePolicy":    false,
		"org.apache.kafka.common.config.provider.FileConfigProvider":                       true,
		"org.apache.kafka.common.config.provider.ConfigProvider":                           false,
		"org.apache.kafka.connect.runtime.WorkerConfig":                                    false,
		"java.lang.String":  false,
		"javax.ws.rs.Path":  false,
		"javax.money.Money": true,
		"org.slf4j.Logger":  false,
	} {
		if got := loadsInIsolation(name); got != want {
			t.Errorf("loadsInIsolation(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestAliases(t *testing.T) {
	plugins := []Plugin{
		{Class: "org.apache.kafka.connect.file.FileStreamSourceConnector", Kind: KindSource},
		{Class: "org.apache.kafka.connect.json.JsonConverter", Kind: KindConverter},
		{Class: "org.apache.kafka.connect.json.JsonConverter", Kind: KindHeaderConverter},
		{Class: "org.apache.kafka.connect.transforms.Cast$Key", Kind: KindTransformation},
		{Class: "org.apache.kafka.connect.transforms.ExtractField$Key", Kind: KindTransformation},
		{Class: "a.MyConnectorSourceConnector", Kind: KindSource},
		{Class: "b.Filter", Kind: KindTransformation},
		{Class: "c.Filter", Kind: KindPredicate},
		{Class: "d.OnlyByNameConverter", Kind: KindConverter, Found: FoundClasspath},
	}
	tests := []struct {
		value string
		want  Kind
		class string // "" when nothing resolves
	}{
		{"FileStreamSource", KindConnector, "org.apache.kafka.connect.file.FileStreamSourceConnector"},
		{"FileStreamSourceConnector", KindConnector, "org.apache.kafka.connect.file.FileStreamSourceConnector"},
		{"org.apache.kafka.connect.file.FileStreamSourceConnector", KindConnector, "org.apache.kafka.connect.file.FileStreamSourceConnector"},
		{"FileStreamSource", KindConverter, ""}, // an alias of another type
		{"Json", KindHeaderConverter, "org.apache.kafka.connect.json.JsonConverter"},
		{"Key", KindTransformation, ""},    // two classes: ambiguous, no alias
		{"Filter", KindTransformation, ""}, // b.Filter and c.Filter
		{"MyConnectorSource", KindConnector, "a.MyConnectorSourceConnector"},
		{"MyConnector", KindConnector, ""}, // the suffix is cut at its last occurrence only
		{"OnlyByName", KindConverter, ""},  // aliases do not reach classpath classes
		{"d.OnlyByNameConverter", KindConverter, "d.OnlyByNameConverter"},
	}
	for _, tc := range tests {
		got := lookup(plugins, tc.value, tc.want)
		class := ""
		if len(got) > 0 {
			class = got[0].Class
		}
		if class != tc.class {
			t.Errorf("lookup(%q, %s) = %q, want %q", tc.value, tc.want, class, tc.class)
		}
	}
}

func TestClasspathFromArgs(t *testing.T) {
	tests := []struct {
		argv []string
		env  string
		want []string
	}{
		{[]string{"java", "-Xmx1G", "-cp", "/a/*:/b.jar", "org.apache.kafka.connect.cli.ConnectDistributed", "w.properties"}, "/env/*", []string{"/a/*", "/b.jar"}},
		{[]string{"java", "-classpath", "/x", "-cp", "/y", "Main"}, "", []string{"/y"}},
		{[]string{"java", "--class-path=/z::/w", "Main", "-cp", "/not-the-jvm's"}, "", []string{"/z", "/w"}},
		{[]string{"java", "--add-opens", "java.base/java.lang=ALL-UNNAMED", "Main", "-cp", "/program-arg"}, "/env/*:/env2", []string{"/env/*", "/env2"}},
		{[]string{"/etc/confluent/docker/run"}, "", nil},
	}
	for _, tc := range tests {
		if got := ClasspathFromArgs(tc.argv, tc.env); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ClasspathFromArgs(%v, %q) = %v, want %v", tc.argv, tc.env, got, tc.want)
		}
	}
}

func TestParseModes(t *testing.T) {
	for in, want := range map[string]DiscoveryMode{"": HybridWarn, " SERVICE_LOAD ": ServiceLoad, "only_scan": OnlyScan, "hybrid_fail": HybridFail} {
		if got, err := ParseDiscoveryMode(in); err != nil || got != want {
			t.Errorf("ParseDiscoveryMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseDiscoveryMode("scan_only"); err == nil || !strings.Contains(err.Error(), "only_scan, hybrid_warn, hybrid_fail, service_load") {
		t.Errorf("bad plugin.discovery: %v", err)
	}
	for in, want := range map[string]CheckMode{"": CheckFail, "fail": CheckFail, " WARN": CheckWarn, "off": CheckOff} {
		if got, err := ParseCheckMode(in); err != nil || got != want {
			t.Errorf("ParseCheckMode(%q) = %q, %v", in, got, err)
		}
	}
	_, err := ParseCheckMode("true")
	if err == nil || !strings.Contains(err.Error(), `CONNECT_INIT_PLUGIN_CHECK "true"`) || !strings.Contains(err.Error(), "fail") {
		t.Errorf("bad CONNECT_INIT_PLUGIN_CHECK: %v", err)
	}
}

func TestCheckModeApply(t *testing.T) {
	fs := []Finding{{Result: checks.Result{ID: IDPluginMissing, Severity: checks.Error}}, {Result: checks.Result{ID: IDPluginNoManifest, Severity: checks.Info}}}
	if refuse, out := CheckFail.Apply(fs); !refuse || len(out) != 2 || out[0].Severity != checks.Error {
		t.Errorf("fail: refuse=%v %v", refuse, out)
	}
	if refuse, out := CheckWarn.Apply(fs); refuse || out[0].Severity != checks.Warning || fs[0].Severity != checks.Error {
		t.Errorf("warn: refuse=%v %v (input changed: %v)", refuse, out, fs[0].Severity)
	}
	if refuse, out := CheckOff.Apply(fs); refuse || out != nil {
		t.Errorf("off: refuse=%v %v", refuse, out)
	}
}

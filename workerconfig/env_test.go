package workerconfig

import (
	"fmt"
	"testing"
)

// Expected names were produced by running env_to_props from
// confluentinc/confluent-docker-utils confluent/docker_utils/dub.py
// (commit bb515b8) under Python 3.11 on each variable.
func TestPropertyNameMatchesDub(t *testing.T) {
	cases := []struct{ env, prop string }{
		{"CONNECT_BOOTSTRAP_SERVERS", "bootstrap.servers"},
		{"CONNECT_X_Y_Z", "x.y.z"}, // Go ub yields x.y_z
		{"CONNECT_A_B_C_D_E", "a.b.c.d.e"},
		{"CONNECT_A__B", "a_b"},
		{"CONNECT_A___B", "a-b"},
		{"CONNECT_A____B", "a-_b"},
		{"CONNECT_A_____B", "a-_b"},
		{"CONNECT__A", "_a"},
		{"CONNECT_A_", "a_"},
		{"CONNECT___A", "_a"},
		{"CONNECT_A__", "a_"},
		{"CONNECT_X_Y__Z___W", "x.y_z-w"},
		{"CONNECT_CONFIG_PROVIDERS_FILE_CLASS", "config.providers.file.class"},
		{"CONNECT_LOG4J_ROOT_LOGLEVEL", "log4j.root.loglevel"}, // not excluded by Confluent
		{"CONNECT_CUB_KAFKA_TIMEOUT", "cub.kafka.timeout"},     // not excluded by Confluent
		{"CONNECT_Producer_Override", "producer.override"},
		{"CONNECT_A_1_B", "a.1.b"},
		{"CONNECT_\u0130X", "i\u0307x"},
		{"CONNECT_ÄÖ_Ü", "äö.ü"},
		{"CONNECT__", "_"},
		{"CONNECT____", "-"},
		{"CONNECT_A.B_C", "a.b.c"},
	}
	for _, c := range cases {
		got, ok := PropertyName(c.env)
		if !ok || got != c.prop {
			t.Errorf("PropertyName(%q) = %q, %v; want %q", c.env, got, ok, c.prop)
		}
	}
}

func TestPropertyNameExcluded(t *testing.T) {
	for _, env := range []string{"CONNECT_INIT_TIMEOUT", "CONNECT_INIT_", "CONNECT_METRIC_REPORTERS", "CONNECT_", "KAFKA_HEAP_OPTS", "connect_group_id", "XCONNECT_A"} {
		if p, ok := PropertyName(env); ok {
			t.Errorf("PropertyName(%q) = %q, want not a worker property", env, p)
		}
	}
	// Only the exact name is excluded, as in Confluent's template.
	if p, ok := PropertyName("CONNECT_METRIC_REPORTERS_X"); !ok || p != "metric.reporters.x" {
		t.Errorf("CONNECT_METRIC_REPORTERS_X = %q, %v", p, ok)
	}
}

func TestFromEnviron(t *testing.T) {
	env := []string{
		"PATH=/bin",
		"CONNECT_GROUP_ID=  g1",              // leading blanks dropped by Java
		`CONNECT_PLUGIN_PATH=C:\plugins\new`, // escapes interpreted: \p -> p, \n -> newline
		"CONNECT_A=x\nb.injected=1",          // newline starts a new property
		"CONNECT_TRAIL=one\\",                // trailing backslash joins the next line
		"CONNECT_NEXT=two",
		"CONNECT_UTF8=\xc3\xa9",                 // read as ISO-8859-1
		"CONNECT_REF=${file:/s/x.properties:k}", // kept literally
		"CONNECT_INIT_TIMEOUT=5m",
		"CONNECT_METRIC_REPORTERS=x",
		"NOEQUALS",
	}
	got := FromEnviron(env)
	want := Properties{
		"group.id":    "g1",
		"plugin.path": "C:plugins\new",
		"a":           "x",
		"b.injected":  "1",
		"trail":       "onenext=two",
		"utf8":        "\u00c3\u00a9",
		"ref":         "${file:/s/x.properties:k}",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("FromEnviron =\n%q\nwant\n%q", got, want)
	}
}

func TestFromEnvironDuplicateOrder(t *testing.T) {
	// CONNECT_a and CONNECT_A both map to "a": the later value wins at the
	// earlier position (Python dict), so an injected line after it still
	// overrides.
	env := []string{"CONNECT_A=1", "CONNECT_X=y\na=3", "CONNECT_a=2"}
	if got := FromEnviron(env)["a"]; got != "3" {
		t.Errorf("a = %q, want 3", got)
	}
	if got := RenderEnv(env); got != "a=2\nx=y\na=3\n" {
		t.Errorf("RenderEnv = %q", got)
	}
}

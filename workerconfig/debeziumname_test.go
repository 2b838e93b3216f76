package workerconfig

import "testing"

// Debezium's entrypoint names a property with `tr '[:upper:]' '[:lower:]'
// | tr _ .` of what follows CONNECT_ (debeziumTr, the one home of that
// rule): no escapes, ASCII letters only; connect-init's own variables and
// a bare CONNECT_ name none.
func TestPropertyNameDebezium(t *testing.T) {
	for _, c := range []struct {
		env, prop string
		ok        bool
	}{
		{"CONNECT_GROUP_ID", "group.id", true},
		{"CONNECT_A__B", "a..b", true},
		{"CONNECT_REST_ADVERTISED_HOST_NAME", "rest.advertised.host.name", true},
		{"CONNECT_X9_Y", "x9.y", true},
		{"CONNECT_", "", false},
		{"CONNECT_INIT_EXPECTED_BROKERS", "", false},
		{"KAFKA_HEAP_OPTS", "", false},
	} {
		prop, ok := PropertyNameDebezium(c.env)
		if prop != c.prop || ok != c.ok {
			t.Errorf("PropertyNameDebezium(%q) = %q, %v; want %q, %v", c.env, prop, ok, c.prop, c.ok)
		}
	}
}

package workerconfig

import "testing"

func TestEnvNameInvertsPropertyName(t *testing.T) {
	for _, prop := range []string{"group.id", "config.storage.replication.factor", "x.y.z", "a_b.c", "rest.advertised-host", "consumer.max.poll.records"} {
		env := EnvName(prop)
		back, ok := PropertyName(env)
		if !ok || back != prop {
			t.Errorf("PropertyName(EnvName(%q)) = %q (%s), want the property back", prop, back, env)
		}
	}
	if got := EnvName("config.storage.topic"); got != "CONNECT_CONFIG_STORAGE_TOPIC" {
		t.Errorf("EnvName = %s", got)
	}
}

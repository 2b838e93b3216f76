package settings

import (
	"strings"
	"testing"
)

func baseWorkerEnv() []string {
	return []string{
		"CONNECT_BOOTSTRAP_SERVERS=k1:9092,k2:9092,PLAINTEXT://k2:9092",
		"CONNECT_GROUP_ID=connect-cluster",
		"CONNECT_CONFIG_STORAGE_TOPIC=_connect-configs",
		"CONNECT_OFFSET_STORAGE_TOPIC=_connect-offsets",
		"CONNECT_STATUS_STORAGE_TOPIC=_connect-status",
	}
}

func loadConfig(t *testing.T, env []string) (*Config, error) {
	t.Helper()
	s, err := LoadSettings(env)
	if err != nil {
		t.Fatal(err)
	}
	return LoadConfig(env, s)
}

func TestLoadConfigTopicSpecs(t *testing.T) {
	env := append(baseWorkerEnv(),
		"CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR=2",
		"CONNECT_CONFIG_STORAGE_PARTITIONS=7", // Connect ignores it: always 1
		"CONNECT_OFFSET_STORAGE_PARTITIONS=50",
		"CONNECT_STATUS_STORAGE_REPLICATION_FACTOR=-1",
		"CONNECT_OFFSET_STORAGE_CLEANUP_POLICY=delete", // Connect ignores it: always compact
		"CONNECT_STATUS_STORAGE_MIN_INSYNC_REPLICAS=2",
	)
	c, err := loadConfig(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.BootstrapServers) != 2 {
		t.Errorf("bootstrap servers not deduplicated: %v", c.BootstrapServers)
	}
	cfgT, offT, stT := c.Topics[0], c.Topics[1], c.Topics[2]
	if cfgT.Partitions != 1 || cfgT.ReplicationFactor != 2 {
		t.Errorf("config topic spec %+v", cfgT)
	}
	if offT.Partitions != 50 || offT.ReplicationFactor != 3 || offT.Configs["cleanup.policy"] != "compact" {
		t.Errorf("offset topic spec %+v", offT)
	}
	if stT.Partitions != 5 || stT.ReplicationFactor != -1 || stT.Configs["min.insync.replicas"] != "2" {
		t.Errorf("status topic spec %+v", stT)
	}
	if c.ExpectedBrokers != 3 {
		t.Errorf("expected brokers = %d, want 3 (the highest replication factor)", c.ExpectedBrokers)
	}
}

func TestLoadConfigExpectedBrokers(t *testing.T) {
	env := append(baseWorkerEnv(), "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR=1", "CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR=1",
		"CONNECT_STATUS_STORAGE_REPLICATION_FACTOR=1")
	c, err := loadConfig(t, env)
	if err != nil || c.ExpectedBrokers != 2 {
		t.Fatalf("want 2 (distinct bootstrap addresses), got %d %v", c.ExpectedBrokers, err)
	}
	c, err = loadConfig(t, append(env, "CONNECT_CUB_KAFKA_MIN_BROKERS=4"))
	if err != nil || c.ExpectedBrokers != 4 {
		t.Fatalf("want 4 (CONNECT_CUB_KAFKA_MIN_BROKERS), got %d %v", c.ExpectedBrokers, err)
	}
	c, err = loadConfig(t, append(env, "CONNECT_CUB_KAFKA_MIN_BROKERS=4", "CONNECT_INIT_EXPECTED_BROKERS=1"))
	if err != nil || c.ExpectedBrokers != 1 {
		t.Fatalf("want 1 (CONNECT_INIT_EXPECTED_BROKERS wins), got %d %v", c.ExpectedBrokers, err)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	without := func(key string) []string {
		var out []string
		for _, kv := range baseWorkerEnv() {
			if !strings.HasPrefix(kv, key+"=") {
				out = append(out, kv)
			}
		}
		return out
	}
	cases := []struct {
		env  []string
		want string
	}{
		{without("CONNECT_GROUP_ID"), "CONNECT_GROUP_ID"},
		{without("CONNECT_BOOTSTRAP_SERVERS"), "CONNECT_BOOTSTRAP_SERVERS"},
		{without("CONNECT_STATUS_STORAGE_TOPIC"), "CONNECT_STATUS_STORAGE_TOPIC"},
		{append(baseWorkerEnv(), "CONNECT_STATUS_STORAGE_TOPIC=_connect-configs"), "same topic"},
		{append(baseWorkerEnv(), "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR=0"), "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR"},
		{append(baseWorkerEnv(), "CONNECT_OFFSET_STORAGE_PARTITIONS=many"), "CONNECT_OFFSET_STORAGE_PARTITIONS"},
		{append(baseWorkerEnv(), "CONNECT_BOOTSTRAP_SERVERS=kafka"), "CONNECT_BOOTSTRAP_SERVERS"},
	}
	for _, c := range cases {
		_, err := loadConfig(t, c.env)
		if err == nil || !AsConfigError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want a configuration error mentioning %q, got %v", c.want, err)
		}
	}
}

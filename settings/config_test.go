package settings

import (
	"crypto/tls"
	"strings"
	"testing"
	"time"
)

func baseWorkerEnv() []string {
	return []string{
		"CONNECT_BOOTSTRAP_SERVERS=k1:9092,k2:9092,PLAINTEXT://k2:9092",
		"CONNECT_GROUP_ID=connect-cluster",
		"CONNECT_CONFIG_STORAGE_TOPIC=_connect-configs",
		"CONNECT_OFFSET_STORAGE_TOPIC=_connect-offsets",
		"CONNECT_STATUS_STORAGE_TOPIC=_connect-status",
		"CONNECT_KEY_CONVERTER=org.apache.kafka.connect.json.JsonConverter", "CONNECT_VALUE_CONVERTER=org.apache.kafka.connect.json.JsonConverter",
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

// TestDerivedOnce: the settings gate derives the advertised URL, the
// topics by role, the lock topic and its replication factor (the config
// topic's, found by role, not by position).
func TestDerivedOnce(t *testing.T) {
	env := append(baseWorkerEnv(), "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR=2", "CONNECT_REST_ADVERTISED_HOST_NAME=w-1",
		"CONNECT_LISTENERS=http://0.0.0.0:18083", "CONNECT_INIT_LOCK_TOPIC=my-lock")
	c, err := loadConfig(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.AdvertisedURL != "http://w-1:18083/" || c.LockTopic != "my-lock" || c.LockReplicationFactor != 2 {
		t.Errorf("url %q lock %q rf %d", c.AdvertisedURL, c.LockTopic, c.LockReplicationFactor)
	}
	if c.ConfigTopic().Name != "_connect-configs" || c.OffsetTopic().Name != "_connect-offsets" || c.StatusTopic().Name != "_connect-status" {
		t.Errorf("topics by role: %+v", c.Topics)
	}
	if c.RESTClientTLS == nil || c.RESTServerTLS != nil {
		t.Errorf("REST TLS: client %v server %v", c.RESTClientTLS != nil, c.RESTServerTLS != nil)
	}
	if got := c.Sources["group.id"].Var; got != "CONNECT_GROUP_ID" {
		t.Errorf("source of group.id = %q", got)
	}
}

func TestTopicNameRules(t *testing.T) {
	for name, ok := range map[string]bool{
		"connect-configs": true, "a.b_c-D9": true, strings.Repeat("x", 249): true,
		"": false, ".": false, "..": false, strings.Repeat("x", 250): false, "a b": false, "a/b": false, "é": false,
	} {
		if err := checkTopicName(name, "V"); (err == nil) != ok {
			t.Errorf("%q: %v", name, err)
		}
	}
}

func TestPeerEntries(t *testing.T) {
	for p, ok := range map[string]bool{
		"tasks.connect": true, "connect-1:8083": true, "[::1]:8083": true, "::1": true, "http://c:8083": true, "https://c:8443/": true,
		"c:0": false, "c:65536": false, "c:http": false, ":8083": false, "ftp://c:21": false, "http://c:8083/x": false, "a b": false, "[::1": false,
	} {
		if err := checkPeer(p); (err == nil) != ok {
			t.Errorf("%q: %v", p, err)
		}
	}
}

// TestRESTTLSAllOrNothing: Connect's REST client and server take the
// listeners.https.* settings as a whole when any exists
// (AbstractConfig.valuesWithPrefixAllOrNothing), else the top-level ssl.*:
// with a listeners.https.* setting present, a broken top-level truststore
// is not read; without one, it is, and it names its variable.
func TestRESTTLSAllOrNothing(t *testing.T) {
	broken := "CONNECT_SSL_TRUSTSTORE_LOCATION=/nonexistent/truststore.jks"
	c, err := loadConfig(t, append(baseWorkerEnv(), broken, "CONNECT_LISTENERS_HTTPS_SSL_ENABLED_PROTOCOLS=TLSv1.3"))
	if err != nil || c.RESTClientTLS == nil || c.RESTClientTLS.MinVersion != tls.VersionTLS13 {
		t.Fatalf("with listeners.https.*: tls=%+v err=%v; want the listeners.https.* view only", c.RESTClientTLS, err)
	}
	_, err = loadConfig(t, append(baseWorkerEnv(), broken))
	if err == nil || !strings.Contains(err.Error(), "CONNECT_SSL_TRUSTSTORE_LOCATION") {
		t.Fatalf("without listeners.https.*: %v; want the top-level truststore read and named", err)
	}
}

// worker.sync.timeout.ms is read as Connect reads it (an INT of
// milliseconds, 3000 by default): the group gate's window gives a member
// behind the assignment that long and a margin (gate.BehindForSync).
func TestWorkerSyncTimeout(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want time.Duration
	}{
		{nil, 3 * time.Second},
		{[]string{"CONNECT_WORKER_SYNC_TIMEOUT_MS=10000"}, 10 * time.Second},
	} {
		cfg, err := LoadConfig(append(baseWorkerEnv(), c.env...), Settings{})
		if err != nil || cfg.WorkerSyncTimeout != c.want {
			t.Errorf("%v: WorkerSyncTimeout %v, %v; want %v", c.env, cfg.WorkerSyncTimeout, err, c.want)
		}
	}
}

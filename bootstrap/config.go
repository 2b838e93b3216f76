package bootstrap

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/connect-init/connect-init/bootstrap/workerconfig"
)

// Topic roles, in the order Connect reads its internal topics.
const (
	RoleConfig = "config"
	RoleOffset = "offset"
	RoleStatus = "status"
)

// Connect's defaults (DistributedConfig).
const (
	defaultReplicationFactor = 3
	defaultOffsetPartitions  = 25
	defaultStatusPartitions  = 5
)

// TopicSpec is the layout connect-init creates, or expects, for one of
// Connect's internal topics.
type TopicSpec struct {
	Role string // config, offset or status
	Name string
	// Partitions is 1 for the config topic; -1 means the broker default.
	Partitions int32
	// ReplicationFactor -1 means the broker default.
	ReplicationFactor int16
	// Configs are the topic configs applied at creation: the role's
	// <role>.storage.* worker settings plus cleanup.policy=compact.
	Configs map[string]string
}

// Config is everything a command needs: connect-init's settings and the
// worker's, with what is derived from them.
type Config struct {
	Settings Settings
	Worker   workerconfig.Properties
	// Environ is the process environment the config was read from.
	Environ          []string
	GroupID          string
	BootstrapServers []string
	Topics           []TopicSpec
	// ExpectedBrokers is the number of brokers the broker gate waits for.
	ExpectedBrokers int
}

// LoadConfig reads the worker settings (file, then CONNECT_* environment,
// then config providers) and derives the topic specs and the expected
// broker count. Every problem is a configuration error naming the variable.
func LoadConfig(environ []string, s Settings) (*Config, error) {
	props, err := workerconfig.Load(environ, s.WorkerConfig)
	if err != nil {
		return nil, err
	}
	c := &Config{Settings: s, Worker: props, Environ: environ}

	for _, key := range []string{"bootstrap.servers", "group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic"} {
		if props.Get(key, "") == "" {
			return nil, &ConfigError{Setting: workerconfig.EnvName(key), Problem: fmt.Sprintf("is not set (worker property %s is required)", key),
				Fix: "set it in the environment or in the worker properties file"}
		}
	}
	c.GroupID = props.Get("group.id", "")
	seen := map[string]bool{}
	for _, a := range strings.Split(props.Get("bootstrap.servers", ""), ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if i := strings.Index(a, "://"); i >= 0 {
			a = a[i+3:] // Kafka's clients accept and ignore a PROTOCOL:// prefix
		}
		if _, _, err := splitHostPort(a); err != nil {
			return nil, &ConfigError{Setting: workerconfig.EnvName("bootstrap.servers"), Problem: fmt.Sprintf("has an entry %q that is not host:port", a), Fix: "list brokers as host1:9092,host2:9092"}
		}
		if !seen[a] {
			seen[a] = true
			c.BootstrapServers = append(c.BootstrapServers, a)
		}
	}
	if len(c.BootstrapServers) == 0 {
		return nil, &ConfigError{Setting: workerconfig.EnvName("bootstrap.servers"), Problem: "lists no broker", Fix: "list brokers as host1:9092,host2:9092"}
	}

	for _, role := range []string{RoleConfig, RoleOffset, RoleStatus} {
		spec, err := topicSpec(props, role)
		if err != nil {
			return nil, err
		}
		c.Topics = append(c.Topics, spec)
	}
	names := map[string]string{}
	for _, t := range c.Topics {
		if other, dup := names[t.Name]; dup {
			return nil, &ConfigError{Setting: workerconfig.EnvName(t.Role + ".storage.topic"),
				Problem: fmt.Sprintf("names the same topic %q as %s", t.Name, workerconfig.EnvName(other+".storage.topic")),
				Fix:     "give the config, offset and status topics three different names"}
		}
		names[t.Name] = t.Role
	}

	c.ExpectedBrokers = s.ExpectedBrokers
	if c.ExpectedBrokers == 0 {
		c.ExpectedBrokers = len(c.BootstrapServers)
		for _, t := range c.Topics {
			if int(t.ReplicationFactor) > c.ExpectedBrokers {
				c.ExpectedBrokers = int(t.ReplicationFactor)
			}
		}
		if v := lookup(environ, "CONNECT_CUB_KAFKA_MIN_BROKERS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, &ConfigError{Setting: "CONNECT_CUB_KAFKA_MIN_BROKERS", Problem: fmt.Sprintf("is not a whole number (got %q)", v)}
			}
			if n > c.ExpectedBrokers {
				c.ExpectedBrokers = n
			}
		}
	}
	return c, nil
}

func topicSpec(props workerconfig.Properties, role string) (TopicSpec, error) {
	prefix := role + ".storage."
	spec := TopicSpec{Role: role, Name: props.Get(prefix+"topic", ""), Configs: map[string]string{}}
	rf, err := props.Int(prefix+"replication.factor", defaultReplicationFactor)
	if err != nil {
		return spec, &ConfigError{Setting: workerconfig.EnvName(prefix + "replication.factor"), Problem: "is not a whole number", Fix: "use e.g. 3, or -1 for the broker default"}
	}
	if rf == 0 || rf < -1 || rf > 32767 {
		return spec, &ConfigError{Setting: workerconfig.EnvName(prefix + "replication.factor"), Problem: fmt.Sprintf("must be a positive number or -1 (got %d)", rf), Fix: "use e.g. 3, or -1 for the broker default"}
	}
	spec.ReplicationFactor = int16(rf)
	switch role {
	case RoleConfig:
		spec.Partitions = 1 // Connect ignores config.storage.partitions
	default:
		def := defaultOffsetPartitions
		if role == RoleStatus {
			def = defaultStatusPartitions
		}
		p, err := props.Int(prefix+"partitions", def)
		if err != nil || p == 0 || p < -1 {
			return spec, &ConfigError{Setting: workerconfig.EnvName(prefix + "partitions"), Problem: fmt.Sprintf("must be a positive number or -1 (got %q)", props.Get(prefix+"partitions", "")), Fix: fmt.Sprintf("use e.g. %d, or -1 for the broker default", def)}
		}
		spec.Partitions = int32(p)
	}
	for k, v := range props.WithPrefix(prefix) {
		switch k {
		case "topic", "replication.factor", "partitions", "cleanup.policy":
			continue // Connect removes these from the topic settings
		}
		spec.Configs[k] = v
	}
	spec.Configs["cleanup.policy"] = "compact"
	return spec, nil
}

func splitHostPort(a string) (string, int, error) {
	i := strings.LastIndex(a, ":")
	if i <= 0 || i == len(a)-1 {
		return "", 0, fmt.Errorf("missing port in %q", a)
	}
	port, err := strconv.Atoi(a[i+1:])
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port in %q", a)
	}
	return strings.Trim(a[:i], "[]"), port, nil
}

// TopicNames returns the internal topic names in role order.
func (c *Config) TopicNames() []string {
	var names []string
	for _, t := range c.Topics {
		names = append(names, t.Name)
	}
	return names
}

// sortedKeys is a helper for stable output.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

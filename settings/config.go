package settings

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/restclient"
	"github.com/connect-init/connect-init/security"
	"github.com/connect-init/connect-init/workerconfig"
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

// Config is everything a command needs, derived once by the settings gate:
// connect-init's settings, the worker's configuration as the worker will see
// it (with where each value came from), and what the later gates use.
type Config struct {
	Settings Settings
	Worker   workerconfig.Properties
	// Sources says where each worker property came from.
	Sources workerconfig.Sources
	// Flavour is the image flavour the worker settings were read with, and
	// Detection how it was chosen.
	Flavour   workerconfig.Flavour
	Detection workerconfig.Detection
	// BaseFile is the properties file the worker settings start from.
	BaseFile string
	// Notes are things worth a log line: variables the image overwrites or
	// ignores.
	Notes []string
	// Environ is the process environment the config was read from.
	Environ          []string
	GroupID          string
	BootstrapServers []string
	// Topics are the internal topics in role order (config, offset,
	// status); use ConfigTopic, OffsetTopic and StatusTopic by role.
	Topics []TopicSpec
	// ExpectedBrokers is the number of brokers the broker gate waits for.
	ExpectedBrokers int
	// WorkerSyncTimeout is the worker's worker.sync.timeout.ms (Connect's
	// default 3 s): how long a worker that joined behind the assignment
	// reads the config topic before it rejoins or leaves. The group gate
	// gives a member behind that long, plus a margin (gate.BehindForSync).
	WorkerSyncTimeout time.Duration
	// LockTopic is the startup lock's topic (never a storage topic) and
	// LockReplicationFactor the factor it is created with (the config
	// topic's).
	LockTopic             string
	LockReplicationFactor int16
	// AdvertisedURL is the REST URL this worker will advertise, exactly as
	// Connect prints it.
	AdvertisedURL string
	// RESTClientTLS is the TLS configuration Connect's REST client uses to
	// reach other workers; RESTServerTLS the one its https listener serves
	// with (nil without an https listener).
	RESTClientTLS *tls.Config
	RESTServerTLS *tls.Config
}

// Options are what LoadConfig needs beyond the environment: where the
// image's files are and how to find this machine's addresses, so that tests
// can stand in for an image.
type Options struct {
	// Root is the image's file system root ("" is "/").
	Root string
	// HostAddress is Debezium's HOST_NAME fallback (nil: this machine's).
	HostAddress func() (string, error)
	// LocalHostAddress is Java's InetAddress.getLocalHost() for
	// host-less listeners (nil: this machine's).
	LocalHostAddress func() (string, error)
}

// LoadConfig is Options{}.Load.
func LoadConfig(environ []string, s Settings) (*Config, error) {
	return Options{}.Load(environ, s)
}

// Load reads the worker settings the way the image's flavour hands them to
// the worker, checks every value connect-init will use (required settings,
// bootstrap servers, topic names and layouts, the lock topic, the REST
// listeners and advertised URL, the TLS and SASL settings of both clients
// and of the REST server) and derives what the gates need. It opens no
// connection. Every error names what the user set (a variable, a file and
// line) and is exit 2 material.
func (o Options) Load(environ []string, s Settings) (*Config, error) {
	c, err := o.Inspect(environ, s)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Inspect is Load that also returns what it could derive when a check
// fails (the flavour, and the worker settings once they could be read), for
// `connect-init config`, which shows the configuration next to the error.
func (o Options) Inspect(environ []string, s Settings) (*Config, error) {
	c, err := o.inspect(environ, s)
	return c, c.suggestTypo(err)
}

func (o Options) inspect(environ []string, s Settings) (*Config, error) {
	c := &Config{Settings: s, Environ: environ}
	if f, ok := workerconfig.ParseFlavour(s.Image); ok {
		c.Detection = workerconfig.Detection{Flavour: f, Evidence: s.Name("CONNECT_INIT_IMAGE") + "=" + string(f), Found: true}
	} else {
		c.Detection = workerconfig.Detect(o.Root)
	}
	c.Flavour = c.Detection.Flavour
	l, err := workerconfig.LoadFor(workerconfig.LoadOptions{
		Flavour: c.Flavour, Environ: environ, File: s.WorkerConfig, Root: o.Root, HostAddress: o.HostAddress,
		// Without image files there is no image script to reproduce: read
		// the names with dub's rule, require only what Connect requires.
		NoImageChecks: !c.Detection.Found,
	})
	if err != nil {
		return c, c.fileSetting(err)
	}
	c.Worker, c.Sources, c.BaseFile, c.Notes = l.Props, l.Sources, l.BaseFile, l.Ignored
	if !c.Flavour.UsesEnv() && len(l.Ignored) > 0 {
		c.Notes = []string{fmt.Sprintf("%d CONNECT_* variables are not worker settings on the %s image (e.g. Kubernetes service links); ignored", len(l.Ignored), c.Flavour)}
	}

	// Every missing required setting at once: one run names them all.
	var missing Problems
	for _, key := range requiredWorkerProps {
		if c.Worker.Get(key, "") == "" {
			missing = append(missing, &ConfigError{Setting: c.setting(key), Problem: c.missingProblem(key), Fix: c.setFix()})
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		return c, missing[0]
	default:
		return c, missing
	}
	c.GroupID = c.Worker.Get("group.id", "")
	if err := c.bootstrapServers(); err != nil {
		return c, err
	}
	if err := c.topics(); err != nil {
		return c, err
	}
	if err := c.expectedBrokers(); err != nil {
		return c, err
	}
	if err := c.workerSyncTimeout(); err != nil {
		return c, err
	}
	if err := c.rest(o); err != nil {
		return c, err
	}
	if err := c.clients(); err != nil {
		return c, err
	}
	return c, nil
}

// suggestTypo adds to the error about a required worker variable (unset or
// empty) the likely cause when the environment has a variable one edit
// away that is not itself a required one: CONNECT_BOOTSTRAP_SERVER for
// CONNECT_BOOTSTRAP_SERVERS.
func (c *Config) suggestTypo(err error) error {
	if err == nil || !c.Flavour.UsesEnv() {
		return err
	}
	required := map[string]bool{}
	for _, key := range requiredWorkerProps {
		required[c.setting(key)] = true
	}
	for _, p := range Each(err) {
		var ce *ConfigError
		var we *workerconfig.Error
		var setting, fix *string
		switch {
		case errors.As(p, &ce):
			setting, fix = &ce.Setting, &ce.Fix
		case errors.As(p, &we):
			setting, fix = &we.Setting, &we.Fix
		default:
			continue
		}
		if !required[*setting] {
			continue
		}
		if typo, ok := SimilarVariable(c.Environ, *setting, func(k string) bool { return required[k] }); ok {
			if *fix != "" {
				*fix = typoFix(typo, *setting) + "; or " + *fix
			} else {
				*fix = typoFix(typo, *setting)
			}
		}
	}
	return err
}

// requiredWorkerProps are the worker properties without a default that
// Connect refuses to start without: unset, ConnectDistributed 4.3.1 stops
// with `Missing required configuration "key.converter" which has no
// default value`, and empty (ub lets an empty variable through) with
// `Invalid value  for configuration key.converter: Class  could not be
// found`.
var requiredWorkerProps = []string{"bootstrap.servers", "group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic",
	"key.converter", "value.converter"}

// NoWorkerSettings reports whether environ and s give no worker setting at
// all: no worker file, and none of the required worker properties in the
// variables the image's flavour reads (CONNECT_*, or Debezium's unprefixed
// ones). That is a CI runner's environment, or `docker run` of a worker
// image for a one-off apply, not a worker's with a typo: an incomplete set
// is a mistake to name (Load's error), and complete settings are loaded.
// The image's own checks (which refuse before reading anything when its
// required variables are unset) do not decide it.
func (o Options) NoWorkerSettings(environ []string, s Settings) bool {
	if s.WorkerConfig != "" {
		return false
	}
	c, err := o.Inspect(environ, s)
	if err == nil || c == nil {
		return false
	}
	if !c.Flavour.UsesEnv() {
		return true // the settings come only from the file, and there is none
	}
	if c.Flavour == workerconfig.Debezium {
		// Debezium's entrypoint refuses before reading when BOOTSTRAP_SERVERS
		// is unset: look for its inputs of the required properties, and
		// their CONNECT_* forms, which it also reads.
		for _, kv := range workerconfig.WithoutOwn(environ) {
			name, _, _ := strings.Cut(kv, "=")
			switch strings.TrimPrefix(name, "CONNECT_") {
			case "BOOTSTRAP_SERVERS", "GROUP_ID", "CONFIG_STORAGE_TOPIC", "OFFSET_STORAGE_TOPIC", "STATUS_STORAGE_TOPIC":
				return false
			}
			if strings.Contains(name, "PORT_9092_TCP") {
				return false // a Docker link to a broker
			}
		}
		return true
	}
	l, lerr := workerconfig.LoadFor(workerconfig.LoadOptions{Flavour: c.Flavour, Environ: environ, Root: o.Root, HostAddress: o.HostAddress, NoImageChecks: true})
	if lerr != nil {
		return false
	}
	for _, key := range requiredWorkerProps {
		if _, set := l.Props[key]; set {
			return false
		}
	}
	return true
}

// missingProblem says what is wrong with a required worker property that
// has no value: unset, or set but empty. Confluent's ub (CP >= 8.1)
// checks only that its required variables exist, so an empty one passes
// the image and fails the worker; the message says so, since the user
// may have read that ub allows it.
func (c *Config) missingProblem(key string) string {
	if _, set := c.Worker[key]; !set {
		return fmt.Sprintf("is not set (worker property %s is required)", key)
	}
	if c.Flavour == workerconfig.ConfluentUB && c.Sources[key].Var != "" {
		return fmt.Sprintf("is empty: the image's ub accepts an empty value, but the worker cannot start with an empty %s", key)
	}
	return fmt.Sprintf("is empty (worker property %s is required)", key)
}

func (c *Config) setFix() string {
	if c.Flavour.UsesEnv() {
		return "set it in the container's environment"
	}
	return "set it in the worker properties file"
}

// setting names the setting behind worker property prop.
func (c *Config) setting(prop string) string {
	return c.Sources.Setting(c.Flavour, prop, c.Settings.WorkerConfig)
}

// fileSetting makes an error about CONNECT_INIT_WORKER_CONFIG name the flag
// when the file came from --worker-config.
func (c *Config) fileSetting(err error) error {
	var we *workerconfig.Error
	if errors.As(err, &we) && we.Setting == "CONNECT_INIT_WORKER_CONFIG" {
		we.Setting = c.Settings.Name("CONNECT_INIT_WORKER_CONFIG")
	}
	return err
}

// Attribute fills in which setting a worker-property error is about (the
// variable, or the file and line), for errors that come from code that only
// knows property names. Other errors are returned unchanged.
func (c *Config) Attribute(err error) error {
	var we *workerconfig.Error
	if errors.As(err, &we) && we.Setting == "" && we.Property != "" && we.Property != "-" {
		we.Setting = c.setting(we.Property)
	}
	return err
}

// attributeRole is Attribute for an error from the view of one client role:
// a property the role's prefix (admin.) overrides is named by the prefixed
// setting the user set.
func (c *Config) attributeRole(err error, prefix string) error {
	var we *workerconfig.Error
	if prefix != "" && errors.As(err, &we) && we.Setting == "" {
		if _, ok := c.Worker[prefix+we.Property]; ok {
			we.Setting = c.setting(prefix + we.Property)
			we.Property = prefix + we.Property
		}
	}
	return c.Attribute(err)
}

func (c *Config) bootstrapServers() error {
	seen := map[string]bool{}
	name := c.setting("bootstrap.servers")
	for _, a := range strings.Split(c.Worker.Get("bootstrap.servers", ""), ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if i := strings.Index(a, "://"); i >= 0 {
			a = a[i+3:] // Kafka's clients accept and ignore a PROTOCOL:// prefix
		}
		if _, _, err := splitHostPort(a); err != nil {
			return &ConfigError{Setting: name, Problem: fmt.Sprintf("has an entry %q that is not host:port (%v)", a, err),
				Fix: "list brokers as host1:9092,host2:9092 (an IPv6 address in brackets: [::1]:9092)"}
		}
		if !seen[a] {
			seen[a] = true
			c.BootstrapServers = append(c.BootstrapServers, a)
		}
	}
	if len(c.BootstrapServers) == 0 {
		return &ConfigError{Setting: name, Problem: "lists no broker", Fix: "list brokers as host1:9092,host2:9092"}
	}
	return nil
}

func (c *Config) topics() error {
	for _, role := range []string{RoleConfig, RoleOffset, RoleStatus} {
		spec, err := c.topicSpec(role)
		if err != nil {
			return err
		}
		if err := checkTopicName(spec.Name, c.setting(role+".storage.topic")); err != nil {
			return err
		}
		c.Topics = append(c.Topics, spec)
	}
	names := map[string]string{}
	collide := map[string]string{}
	for _, t := range c.Topics {
		if other, dup := names[t.Name]; dup {
			return &ConfigError{Setting: c.setting(t.Role + ".storage.topic"),
				Problem: fmt.Sprintf("names the same topic %q as %s", t.Name, c.setting(other+".storage.topic")),
				Fix:     "give the config, offset and status topics three different names"}
		}
		if other, dup := collide[collisionKey(t.Name)]; dup {
			return &ConfigError{Setting: c.setting(t.Role + ".storage.topic"),
				Problem: fmt.Sprintf("names topic %q, which differs from %s's %q only by '.' versus '_': Kafka refuses to create both", t.Name, c.setting(other+".storage.topic"), c.Topic(other).Name),
				Fix:     "name the internal topics so that they differ in more than '.' and '_'"}
		}
		names[t.Name] = t.Role
		collide[collisionKey(t.Name)] = t.Role
	}
	c.LockTopic = c.Settings.LockTopic
	own := []struct{ name, variable, what, def string }{
		{c.LockTopic, "CONNECT_INIT_LOCK_TOPIC", "lock's", "_connect-init-lock"},
		{c.Settings.RegistryTopic, "CONNECT_INIT_REGISTRY_TOPIC", "registry's", "_connect-init-registry"},
	}
	for _, o := range own {
		setting := c.Settings.Name(o.variable)
		fix := "leave " + o.variable + " unset (default " + o.def + ") or name a topic of its own"
		for _, t := range c.Topics {
			switch {
			case o.name == t.Name:
				return &ConfigError{Setting: setting,
					Problem: fmt.Sprintf("is %q, Connect's %s topic (%s): the %s records would land among Connect's own", t.Name, t.Role, c.setting(t.Role+".storage.topic"), o.what),
					Fix:     fix}
			case collisionKey(o.name) == collisionKey(t.Name):
				return &ConfigError{Setting: setting,
					Problem: fmt.Sprintf("is %q, which differs from Connect's %s topic %q only by '.' versus '_': Kafka refuses to create both", o.name, t.Role, t.Name),
					Fix:     fix}
			}
		}
	}
	c.LockReplicationFactor = c.ConfigTopic().ReplicationFactor
	return nil
}

// collisionKey is Kafka's Topic.unifyCollisionChars: '.' and '_' collide
// in metric names, so a broker refuses a topic that differs from an
// existing one only there.
func collisionKey(name string) string { return strings.ReplaceAll(name, ".", "_") }

// checkTopicName applies Kafka's Topic.validate: non-empty, at most 249
// characters, not "." or "..", only ASCII letters, digits, '.', '_', '-'.
func checkTopicName(name, setting string) error {
	bad := func(problem string) error {
		return &ConfigError{Setting: setting, Problem: problem, Fix: "use at most 249 of a-z A-Z 0-9 . _ -, and not \".\" or \"..\""}
	}
	switch {
	case name == "":
		return bad("is an empty topic name")
	case name == "." || name == "..":
		return bad(fmt.Sprintf("is %q, which Kafka does not allow as a topic name", name))
	case len(name) > 249:
		return bad(fmt.Sprintf("is a topic name of %d characters; Kafka allows at most 249", len(name)))
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return bad(fmt.Sprintf("is topic name %q, which has the character %q that Kafka does not allow", name, r))
		}
	}
	return nil
}

// Topic returns the internal topic of role (config, offset or status).
func (c *Config) Topic(role string) TopicSpec {
	for _, t := range c.Topics {
		if t.Role == role {
			return t
		}
	}
	return TopicSpec{}
}

// ConfigTopic is Connect's config topic.
func (c *Config) ConfigTopic() TopicSpec { return c.Topic(RoleConfig) }

// OffsetTopic is Connect's offset topic.
func (c *Config) OffsetTopic() TopicSpec { return c.Topic(RoleOffset) }

// StatusTopic is Connect's status topic.
func (c *Config) StatusTopic() TopicSpec { return c.Topic(RoleStatus) }

func (c *Config) topicSpec(role string) (TopicSpec, error) {
	props := c.Worker
	prefix := role + ".storage."
	spec := TopicSpec{Role: role, Name: props.Get(prefix+"topic", ""), Configs: map[string]string{}}
	rf, err := props.Int(prefix+"replication.factor", defaultReplicationFactor)
	if err != nil {
		problem := "is not a whole number"
		if v := strings.TrimSpace(props.Get(prefix+"replication.factor", "")); digits(strings.TrimPrefix(v, "-")) {
			problem = "is too large: at most 32767" // Kafka's replication factor is a 16-bit number
		}
		return spec, &ConfigError{Setting: c.setting(prefix + "replication.factor"), Problem: problem, Fix: "use e.g. 3, or -1 for the broker default"}
	}
	if rf == 0 || rf < -1 || rf > 32767 {
		return spec, &ConfigError{Setting: c.setting(prefix + "replication.factor"), Problem: fmt.Sprintf("must be a positive number or -1 (got %d)", rf), Fix: "use e.g. 3, or -1 for the broker default"}
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
			return spec, &ConfigError{Setting: c.setting(prefix + "partitions"), Problem: fmt.Sprintf("must be a positive number or -1 (got %q)", props.Get(prefix+"partitions", "")), Fix: fmt.Sprintf("use e.g. %d, or -1 for the broker default", def)}
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

func (c *Config) expectedBrokers() error {
	c.ExpectedBrokers = c.Settings.ExpectedBrokers
	if c.ExpectedBrokers != 0 {
		return nil
	}
	c.ExpectedBrokers = len(c.BootstrapServers)
	for _, t := range c.Topics {
		if int(t.ReplicationFactor) > c.ExpectedBrokers {
			c.ExpectedBrokers = int(t.ReplicationFactor)
		}
	}
	if v := Lookup(c.Environ, "CONNECT_CUB_KAFKA_MIN_BROKERS"); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		switch {
		case err == nil && n > MaxCount, errors.Is(err, strconv.ErrRange) && n > 0:
			return &ConfigError{Setting: "CONNECT_CUB_KAFKA_MIN_BROKERS", Problem: fmt.Sprintf("is too large (got %q): at most %d", v, MaxCount), Fix: "use the number of brokers, e.g. 3"}
		case err != nil || n < 0:
			return &ConfigError{Setting: "CONNECT_CUB_KAFKA_MIN_BROKERS", Problem: fmt.Sprintf("is not a whole number (got %q)", v), Fix: "use the number of brokers, e.g. 3"}
		}
		if n > c.ExpectedBrokers {
			c.ExpectedBrokers = n
		}
	}
	return nil
}

// DefaultWorkerSyncTimeout is Connect's worker.sync.timeout.ms default
// (DistributedConfig.WORKER_SYNC_TIMEOUT_MS_DEFAULT).
const DefaultWorkerSyncTimeout = 3 * time.Second

// workerSyncTimeout reads worker.sync.timeout.ms: Connect's INT setting,
// which the worker refuses to start with when it is not a whole number.
func (c *Config) workerSyncTimeout() error {
	const key = "worker.sync.timeout.ms"
	ms, err := c.Worker.Int(key, int(DefaultWorkerSyncTimeout/time.Millisecond))
	if err != nil || ms < 0 {
		return &ConfigError{Setting: c.setting(key), Problem: fmt.Sprintf("is not a whole number of milliseconds (got %q)", c.Worker.Get(key, "")),
			Fix: "use e.g. 3000 (Connect's default), or leave it unset"}
	}
	c.WorkerSyncTimeout = time.Duration(ms) * time.Millisecond
	return nil
}

// httpsPrefix is the prefix of the REST server's own TLS settings.
const httpsPrefix = "listeners.https."

// rest derives the advertised URL and both REST TLS configurations.
func (c *Config) rest(o Options) error {
	url, err := workerconfig.RESTOptions{LocalHostAddress: o.LocalHostAddress}.AdvertisedURL(c.Worker)
	if err != nil {
		return c.Attribute(err)
	}
	c.AdvertisedURL = url
	// Connect's REST client and server take listeners.https.* when any
	// such setting exists (all or nothing), else the top-level ssl.*.
	view, prefix := c.Worker, ""
	for k := range c.Worker {
		if strings.HasPrefix(k, httpsPrefix) {
			view, prefix = c.Worker.WithPrefix(httpsPrefix), httpsPrefix
			break
		}
	}
	client, err := security.TLSConfig(view)
	if err != nil {
		return c.attributeRole(err, prefix)
	}
	c.RESTClientTLS = client
	if strings.Contains(strings.ToLower(c.Worker.Get("listeners", "")), "https://") {
		if len(client.Certificates) == 0 {
			return &ConfigError{Setting: c.setting("listeners"), Problem: "has an https listener but no keystore is configured, so the worker's REST server cannot start",
				Fix: "set " + workerconfig.EnvNameFor(c.Flavour, httpsPrefix+"ssl.keystore.location") + " (or the top-level ssl.keystore.*) to the REST server's keystore"}
		}
		server := client.Clone()
		server.RootCAs = nil
		server.ClientCAs = client.RootCAs
		switch strings.ToLower(view.Get("ssl.client.auth", "none")) {
		case "required":
			server.ClientAuth = tls.RequireAndVerifyClientCert
		case "requested":
			server.ClientAuth = tls.VerifyClientCertIfGiven
		case "none":
			server.ClientAuth = tls.NoClientCert
		default:
			return &ConfigError{Setting: c.setting(prefix + "ssl.client.auth"), Problem: fmt.Sprintf("must be required, requested or none (got %q)", view.Get("ssl.client.auth", "")), Fix: "use required, requested or none"}
		}
		c.RESTServerTLS = server
	}
	return nil
}

// clients checks the TLS and SASL settings of both Kafka clients (stores
// opened, passwords tried, JAAS parsed) without connecting, so that a bad
// one is named here rather than after a timeout.
func (c *Config) clients() error {
	for _, kind := range workerconfig.ClientKinds() {
		props := workerconfig.ClientProps(c.Worker, kind)
		if _, err := workerconfig.ClientID(props); err != nil {
			return c.attributeRole(err, kind.Prefix())
		}
		if _, err := workerconfig.RequestTimeout(props); err != nil {
			return c.attributeRole(err, kind.Prefix())
		}
		if err := security.Configure(sarama.NewConfig(), props); err != nil {
			return c.attributeRole(err, kind.Prefix())
		}
	}
	return nil
}

// splitHostPort splits one bootstrap entry as Kafka's clients do
// (Utils.getHost, getPort): the port after the last ':', an IPv6 address
// in brackets. A bracket that is not closed right before the port, or
// brackets with nothing inside, would leave the worker with a host it
// cannot resolve, so they are refused here, while nothing is connected.
func splitHostPort(a string) (string, int, error) {
	i := strings.LastIndex(a, ":")
	if i <= 0 || i == len(a)-1 {
		return "", 0, errors.New("it has no port")
	}
	port, err := strconv.Atoi(a[i+1:])
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("its port %q is not a number from 1 to 65535", a[i+1:])
	}
	host := a[:i]
	if strings.HasPrefix(host, "[") || strings.HasSuffix(host, "]") {
		inner, ok := strings.CutPrefix(host, "[")
		if ok {
			inner, ok = strings.CutSuffix(inner, "]")
		}
		switch {
		case !ok || strings.ContainsAny(inner, "[]"):
			return "", 0, errors.New("its brackets do not enclose the host right before the port")
		case inner == "":
			return "", 0, errors.New("its brackets hold no address")
		}
		host = inner
	}
	return host, port, nil
}

// checkPeer checks one CONNECT_INIT_PEERS entry with the peers gate's own
// parser (restclient.ParsePeer).
func checkPeer(p string) error {
	_, err := restclient.ParsePeer(p, "http", "8083")
	return err
}

// TopicNames returns the internal topic names in role order.
func (c *Config) TopicNames() []string {
	var names []string
	for _, t := range c.Topics {
		names = append(names, t.Name)
	}
	return names
}

// digits reports whether s is one or more decimal digits.
func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// Package settings is connect-init's settings gate: it reads connect-init's
// own CONNECT_INIT_* settings and the worker's configuration exactly as the
// image at hand hands it to the worker, checks every value connect-init will
// use, and derives once what the later gates need (bootstrap servers, the
// internal topics by role, the lock topic, the advertised REST URL, the REST
// TLS configurations). It opens no connection, so a bad setting stops
// connect-init before anything is touched.
//
// It is a leaf: it imports only workerconfig, security and connect/plugins
// (the one reading of CONNECT_INIT_PLUGIN_CHECK), and the gates, the lock
// and the REST checks receive values from it.
package settings

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/connect-init/connect-init/connect/plugins"
	"github.com/connect-init/connect-init/workerconfig"
)

// EnvPrefix is envconfig's spelling of connect-init's own prefix
// (workerconfig.OwnEnvPrefix without its "_"): variables with it are never
// passed to the worker.
const EnvPrefix = "CONNECT_INIT"

// Settings are connect-init's own settings, read from CONNECT_INIT_*
// variables (field names split on capitals: ExpectedBrokers ->
// CONNECT_INIT_EXPECTED_BROKERS) and overridden by command-line flags.
//
// The fields carry split_words rather than envconfig:"NAME" tags on
// purpose: with an explicit name envconfig also falls back to the
// unprefixed variable (TIMEOUT, LOCK, PEERS...), which a container may well
// have for other reasons.
type Settings struct {
	// Timeout bounds all gates together. Unset: CONNECT_CUB_KAFKA_TIMEOUT
	// seconds (Confluent's image), else 5m.
	Timeout time.Duration `split_words:"true"`
	// ExpectedBrokers overrides the computed number of brokers to wait for.
	ExpectedBrokers int `split_words:"true"`
	// WorkerConfig is a worker .properties file read before CONNECT_* variables.
	WorkerConfig string `split_words:"true"`
	// Lock enables the startup lock in run.
	Lock bool `split_words:"true" default:"true"`
	// LockTopic is the compacted topic holding the startup-lock queue.
	LockTopic string `split_words:"true" default:"_connect-init-lock"`
	// LockLease is how long a holder keeps the lock if it never gets ready.
	LockLease time.Duration `split_words:"true" default:"3m"`
	// LockPermits is how many workers may start at once.
	LockPermits int `split_words:"true" default:"1"`
	// LockUnavailableAfter is how long run waits in the lock queue while
	// the lock topic cannot be written (no leader, or fewer in-sync
	// replicas than min.insync.replicas) before it starts the worker
	// without the lock, with a warning; 0 waits without bound.
	LockUnavailableAfter time.Duration `split_words:"true" default:"2m"`
	// LockMode is where a worker waits for its turn: auto (in the worker,
	// after its plugin scan, when the provider jar is installed and the
	// command's configuration can be extended), worker, or exec (before
	// the exec).
	LockMode string `split_words:"true" default:"auto"`
	// LockJar is the in-worker lock's ConfigProvider jar; empty means the
	// first one found in the images' classpath directories.
	LockJar string `split_words:"true"`
	// Peers are extra REST peers to check (host or host:port).
	Peers []string `split_words:"true"`
	// PeerCheck is fail, warn or off; empty means the default policy.
	PeerCheck string `split_words:"true"`
	// PluginCheck is fail, warn or off: whether the plugins step refuses a
	// worker that lacks a plugin its peers load (plugins.CheckMode).
	PluginCheck string `split_words:"true" default:"fail"`
	// Strict turns warnings about the coordinator partition, and group
	// members the group gate could not verify, into errors.
	Strict bool `split_words:"true"`
	// RegistryTopic is the compacted topic of the cluster registry (which
	// Connect cluster owns which group.id; see connect/registry).
	RegistryTopic string `split_words:"true" default:"_connect-init-registry"`
	// GroupHandover names the config topic of the Connect cluster that
	// owns the group in the registry, to hand the group over to this
	// cluster on purpose.
	GroupHandover string `split_words:"true"`
	// LogFormat is text or json.
	LogFormat string `split_words:"true" default:"text"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `split_words:"true" default:"info"`
	// ConnectorsDir is the directory of connector definitions `connect-init
	// apply` reads (its --dir); in run, setting it starts a one-shot
	// `apply --wait-local` beside the worker.
	ConnectorsDir string `split_words:"true"`
	// ApplyWatch keeps run's apply child running as the watcher of the
	// desired state (apply --watch): one active per Connect cluster, the
	// one beside the group's leader.
	ApplyWatch bool `split_words:"true"`
	// ApplyWatchInterval is the watcher's pause between two looks (apply
	// --watch-interval); its default is apply.DefaultWatchInterval's, and
	// ApplyRestartBackoff's apply.DefaultRestartUnit's.
	ApplyWatchInterval time.Duration `split_words:"true" default:"30s"`
	// ApplyRestartBackoff is the unit of the watcher's restart backoff
	// (apply --restart-backoff): restart n+1 of a connector follows
	// restart n by min(n*n+n, 60) units.
	ApplyRestartBackoff time.Duration `split_words:"true" default:"1m"`
	// Image is the image flavour (confluent-dub, confluent-ub, debezium,
	// apache, properties); empty means detect it from the image's files.
	Image string `split_words:"true"`

	// Flags lists the variables whose value came from a command-line flag
	// ("CONNECT_INIT_TIMEOUT" -> "--timeout"), so that messages name what
	// the user actually typed.
	Flags map[string]string `ignored:"true"`
}

// MinLockLease is the shortest CONNECT_INIT_LOCK_LEASE: the lock's own
// minimum waiter lease (lock.MinLease); a shorter one is refused rather than
// silently raised.
const MinLockLease = time.Second

// MinLockUnavailableAfter is the shortest nonzero
// CONNECT_INIT_LOCK_UNAVAILABLE_AFTER: a KRaft cluster replaces a dead
// partition leader after broker.session.timeout.ms (9 s) and an election,
// and a bound shorter than that would start workers without the lock at
// every routine failover.
const MinLockUnavailableAfter = 15 * time.Second

// Name is how messages name the setting whose variable is envName: the flag
// when the value came from one, else the variable.
func (s Settings) Name(envName string) string {
	if f, ok := s.Flags[envName]; ok {
		return f
	}
	return envName
}

// envMu serialises LoadSettings: envconfig reads the process environment,
// so the injected environment is installed for the duration of the call.
var envMu sync.Mutex

// LoadSettings reads Settings from environ. A variable that is set but
// empty counts as unset (envconfig would otherwise neither apply the
// default nor complain).
func LoadSettings(environ []string) (Settings, error) {
	envMu.Lock()
	defer envMu.Unlock()

	// Install exactly environ's CONNECT_INIT_* variables, restore afterwards.
	saved := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, workerconfig.OwnEnvPrefix) {
			saved[k] = v
			os.Unsetenv(k)
		}
	}
	var set []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, workerconfig.OwnEnvPrefix) && strings.TrimSpace(v) != "" {
			os.Setenv(k, strings.TrimSpace(v))
			set = append(set, k)
		}
	}
	defer func() {
		for _, k := range set {
			os.Unsetenv(k)
		}
		for k, v := range saved {
			os.Setenv(k, v)
		}
	}()

	var s Settings
	if err := envconfig.Process(EnvPrefix, &s); err != nil {
		var pe *envconfig.ParseError
		if errors.As(err, &pe) {
			return s, &ConfigError{Setting: pe.KeyName, Problem: fmt.Sprintf("cannot be parsed as %s (got %q)", pe.TypeName, pe.Value), Fix: settingHint(pe.TypeName)}
		}
		return s, &ConfigError{Setting: EnvPrefix + "_*", Problem: err.Error()}
	}
	if Lookup(environ, "CONNECT_INIT_TIMEOUT") != "" && s.Timeout == 0 {
		return s, &ConfigError{Setting: "CONNECT_INIT_TIMEOUT", Problem: "is zero, which would leave no time for any gate", Fix: settingHint("time.Duration")}
	}
	// A zero from envconfig cannot be told from unset (derive the number),
	// so an explicit 0 is caught here, where the variable is still seen.
	if Lookup(environ, "CONNECT_INIT_EXPECTED_BROKERS") != "" && s.ExpectedBrokers == 0 {
		return s, expectedBrokersError("CONNECT_INIT_EXPECTED_BROKERS", 0)
	}
	if s.Timeout == 0 {
		s.Timeout = 5 * time.Minute
		if v := Lookup(environ, "CONNECT_CUB_KAFKA_TIMEOUT"); v != "" {
			secs, err := strconv.Atoi(v)
			if err != nil || secs <= 0 {
				return s, &ConfigError{Setting: "CONNECT_CUB_KAFKA_TIMEOUT", Problem: fmt.Sprintf("is not a positive number of seconds (got %q)", v), Fix: "set it to e.g. 40, or set CONNECT_INIT_TIMEOUT=5m"}
			}
			s.Timeout = time.Duration(secs) * time.Second
		}
	}
	return s, s.Validate()
}

// expectedBrokersError refuses an expected broker count below 1: the
// broker gate would have no broker to wait for, and leaving the setting
// unset is how a user asks for the derived number.
func expectedBrokersError(setting string, n int) error {
	return &ConfigError{Setting: setting, Problem: fmt.Sprintf("must be at least 1 (got %d)", n),
		Fix: "set the number of brokers to wait for, or leave it unset to derive it from the bootstrap servers and replication factors"}
}

func settingHint(typeName string) string {
	switch typeName {
	case "time.Duration", "Duration":
		return "use a Go duration such as 90s, 5m or 1h"
	case "bool":
		return "use true or false"
	case "int":
		return "use a whole number"
	}
	return ""
}

// Validate checks values that parse but make no sense. Errors name the
// flag when the value came from one.
func (s Settings) Validate() error {
	for _, validate := range []func() error{
		s.validateLimits,
		s.validateModes,
		s.validateLock,
		s.validateRegistry,
		s.validateApplyWatch,
		s.validatePeers,
	} {
		if err := validate(); err != nil {
			return err
		}
	}
	return nil
}

// badSetting is the ConfigError for the setting whose variable is env,
// named as the user gave it (see Name).
func (s Settings) badSetting(env, problem, fix string) error {
	return &ConfigError{Setting: s.Name(env), Problem: problem, Fix: fix}
}

// validateLimits checks the durations and counts: the timeout, the expected
// brokers, and the lock's permits and lease.
func (s Settings) validateLimits() error {
	switch {
	case s.Timeout <= 0:
		return s.badSetting("CONNECT_INIT_TIMEOUT", fmt.Sprintf("must be positive (got %s)", s.Timeout), "use a Go duration such as 90s, 5m or 1h")
	case s.ExpectedBrokers < 0, s.ExpectedBrokers == 0 && s.Flags["CONNECT_INIT_EXPECTED_BROKERS"] != "":
		return expectedBrokersError(s.Name("CONNECT_INIT_EXPECTED_BROKERS"), s.ExpectedBrokers)
	case s.LockPermits < 1:
		return s.badSetting("CONNECT_INIT_LOCK_PERMITS", fmt.Sprintf("must be at least 1 (got %d)", s.LockPermits), "use 1 to start workers one at a time")
	case s.LockLease <= 0:
		return s.badSetting("CONNECT_INIT_LOCK_LEASE", fmt.Sprintf("must be positive (got %s)", s.LockLease), "use e.g. 3m")
	case s.LockLease < MinLockLease:
		return s.badSetting("CONNECT_INIT_LOCK_LEASE", fmt.Sprintf("is %s, below the lock's minimum of %s", s.LockLease, MinLockLease),
			"use at least 1s; the lease should cover a worker's start, e.g. 3m")
	case s.LockUnavailableAfter < 0, s.LockUnavailableAfter > 0 && s.LockUnavailableAfter < MinLockUnavailableAfter:
		return s.badSetting("CONNECT_INIT_LOCK_UNAVAILABLE_AFTER", fmt.Sprintf("is %s; it must be 0 (wait without bound) or at least %s, longer than a broker failover", s.LockUnavailableAfter, MinLockUnavailableAfter),
			"use e.g. 2m, or 0 to never start without the lock")
	}
	return nil
}

// validateModes checks the settings that must be one of a few words: the
// peer and plugin checks, the log format and level, and the image flavour.
func (s Settings) validateModes() error {
	switch s.PeerCheck {
	case "", "fail", "warn", "off":
	default:
		return s.badSetting("CONNECT_INIT_PEER_CHECK", fmt.Sprintf("must be fail, warn or off (got %q)", s.PeerCheck), "use fail, warn or off, or leave it unset")
	}
	if _, err := plugins.ParseCheckMode(s.PluginCheck); err != nil {
		return s.badSetting("CONNECT_INIT_PLUGIN_CHECK", fmt.Sprintf("must be fail, warn or off (got %q)", s.PluginCheck), "use fail (refuse a worker that lacks a plugin its peers load), warn or off, or leave it unset")
	}
	switch s.LogFormat {
	case "text", "json":
	default:
		return s.badSetting("CONNECT_INIT_LOG_FORMAT", fmt.Sprintf("must be text or json (got %q)", s.LogFormat), "use text or json")
	}
	if _, ok := ParseLogLevel(s.LogLevel); !ok {
		return s.badSetting("CONNECT_INIT_LOG_LEVEL", fmt.Sprintf("must be debug, info, warn or error (got %q)", s.LogLevel), "use debug, info, warn or error")
	}
	if s.Image != "" {
		if _, ok := workerconfig.ParseFlavour(s.Image); !ok {
			return s.badSetting("CONNECT_INIT_IMAGE", fmt.Sprintf("names no known image flavour (got %q)", s.Image), "use one of "+flavourList()+", or leave it unset to detect the image")
		}
	}
	return nil
}

// validateLock checks the startup lock's topic name and mode.
func (s Settings) validateLock() error {
	if err := checkTopicName(s.LockTopic, s.Name("CONNECT_INIT_LOCK_TOPIC")); err != nil {
		return err
	}
	switch strings.ToLower(strings.TrimSpace(s.LockMode)) {
	case "", "auto", "worker", "exec":
	default:
		return s.badSetting("CONNECT_INIT_LOCK_MODE", fmt.Sprintf("must be auto, worker or exec (got %q)", s.LockMode), "leave it unset (auto: in the worker when its jar is installed, else before the exec)")
	}
	return nil
}

// validateRegistry checks the cluster registry's topic, which must not be
// the lock's, and the config topic named for a group handover.
func (s Settings) validateRegistry() error {
	if err := checkTopicName(s.RegistryTopic, s.Name("CONNECT_INIT_REGISTRY_TOPIC")); err != nil {
		return err
	}
	if collisionKey(s.RegistryTopic) == collisionKey(s.LockTopic) {
		return &ConfigError{Setting: s.Name("CONNECT_INIT_REGISTRY_TOPIC"),
			Problem: fmt.Sprintf("is %q, the startup lock's topic (CONNECT_INIT_LOCK_TOPIC %q) or one Kafka cannot tell from it", s.RegistryTopic, s.LockTopic),
			Fix:     "leave CONNECT_INIT_REGISTRY_TOPIC unset (default _connect-init-registry) or name a topic of its own"}
	}
	if s.GroupHandover != "" {
		if err := checkTopicName(s.GroupHandover, s.Name("CONNECT_INIT_GROUP_HANDOVER")); err != nil {
			return err
		}
	}
	return nil
}

// validateApplyWatch checks the watcher's settings, which also back apply's
// --watch-interval and --restart-backoff.
func (s Settings) validateApplyWatch() error {
	switch {
	case s.ApplyWatch && strings.TrimSpace(s.ConnectorsDir) == "":
		return s.badSetting("CONNECT_INIT_APPLY_WATCH", "is true, but CONNECT_INIT_CONNECTORS_DIR is not set: there is no desired state to keep",
			"set CONNECT_INIT_CONNECTORS_DIR to the directory of connector definitions, or leave CONNECT_INIT_APPLY_WATCH unset")
	case s.ApplyWatchInterval <= 0:
		return s.badSetting("CONNECT_INIT_APPLY_WATCH_INTERVAL", fmt.Sprintf("must be positive (got %s)", s.ApplyWatchInterval), "use a Go duration such as 30s")
	case s.ApplyRestartBackoff <= 0:
		return s.badSetting("CONNECT_INIT_APPLY_RESTART_BACKOFF", fmt.Sprintf("must be positive (got %s)", s.ApplyRestartBackoff), "use a Go duration such as 1m (Strimzi's unit)")
	}
	return nil
}

// validatePeers checks each extra REST peer is a host or host:port.
func (s Settings) validatePeers() error {
	for _, p := range s.Peers {
		if err := checkPeer(p); err != nil {
			return &ConfigError{Setting: s.Name("CONNECT_INIT_PEERS"), Problem: fmt.Sprintf("entry %q %s", p, err.Error()),
				Fix: "list peers as host or host:port (e.g. tasks.connect or connect-1:8083), comma-separated"}
		}
	}
	return nil
}

// ParseLogLevel reads CONNECT_INIT_LOG_LEVEL (debug, info, warn or
// warning, error; any case): the one reading for validation and logger.
func ParseLogLevel(s string) (slog.Level, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, true
	case "info":
		return slog.LevelInfo, true
	case "warn", "warning":
		return slog.LevelWarn, true
	case "error":
		return slog.LevelError, true
	}
	return slog.LevelInfo, false
}

func flavourList() string {
	var names []string
	for _, f := range workerconfig.Flavours {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// Lookup is the trimmed last value of key in environ (workerconfig.LookupEnv):
// the value the image and the JVM see when a name occurs twice.
func Lookup(environ []string, key string) string {
	v, _ := workerconfig.LookupEnv(environ, key)
	return strings.TrimSpace(v)
}

// ConfigError is bad configuration or usage: connect-init exits 2 and
// touches nothing. It names the setting and never carries a secret.
type ConfigError struct {
	Setting string
	Problem string
	Fix     string
}

// Error names the setting, the problem and the fix, on one line.
func (e *ConfigError) Error() string {
	msg := e.Setting + " " + e.Problem
	if e.Fix != "" {
		msg += ": " + e.Fix
	}
	return msg
}

// AsConfigError reports whether err is bad configuration (exit 2), whether
// it came from connect-init's own settings or from a worker property.
func AsConfigError(err error) bool {
	var ce *ConfigError
	var we *workerconfig.Error
	return errors.As(err, &ce) || errors.As(err, &we)
}

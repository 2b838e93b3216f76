// Package bootstrap holds connect-init's settings and the gates that run
// before a Kafka Connect worker starts: every broker up, internal topics
// right, the worker group's coordinator safe. Each gate returns a typed
// report so that run, prepare and doctor share one implementation.
package bootstrap

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/connect-init/connect-init/bootstrap/workerconfig"
)

// EnvPrefix is the prefix of connect-init's own settings. Variables with it
// are never passed to the worker.
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
	// Peers are extra REST peers to check (host or host:port).
	Peers []string `split_words:"true"`
	// PeerCheck is fail, warn or off; empty means the default policy.
	PeerCheck string `split_words:"true"`
	// Strict turns warnings about the coordinator partition, and group
	// members the group gate could not verify, into errors.
	Strict bool `split_words:"true"`
	// RegistryTopic is the compacted topic of the cluster registry (which
	// Connect cluster owns which group.id; see bootstrap/registry).
	RegistryTopic string `split_words:"true" default:"_connect-init-registry"`
	// GroupHandover names the config topic of the Connect cluster that
	// owns the group in the registry, to hand the group over to this
	// cluster on purpose.
	GroupHandover string `split_words:"true"`
	// LogFormat is text or json.
	LogFormat string `split_words:"true" default:"text"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `split_words:"true" default:"info"`
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
		if strings.HasPrefix(k, EnvPrefix+"_") {
			saved[k] = v
			os.Unsetenv(k)
		}
	}
	var set []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, EnvPrefix+"_") && strings.TrimSpace(v) != "" {
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
	if s.Timeout == 0 {
		s.Timeout = 5 * time.Minute
		if v := lookup(environ, "CONNECT_CUB_KAFKA_TIMEOUT"); v != "" {
			secs, err := strconv.Atoi(v)
			if err != nil || secs <= 0 {
				return s, &ConfigError{Setting: "CONNECT_CUB_KAFKA_TIMEOUT", Problem: fmt.Sprintf("is not a positive number of seconds (got %q)", v), Fix: "set it to e.g. 40, or set CONNECT_INIT_TIMEOUT=5m"}
			}
			s.Timeout = time.Duration(secs) * time.Second
		}
	}
	return s, s.Validate()
}

func settingHint(typeName string) string {
	switch typeName {
	case "Duration":
		return "use a Go duration such as 90s, 5m or 1h"
	case "bool":
		return "use true or false"
	case "int":
		return "use a whole number"
	}
	return ""
}

// Validate checks values that parse but make no sense.
func (s Settings) Validate() error {
	switch {
	case s.Timeout < 0:
		return &ConfigError{Setting: "CONNECT_INIT_TIMEOUT", Problem: "is negative", Fix: "use e.g. 5m"}
	case s.ExpectedBrokers < 0:
		return &ConfigError{Setting: "CONNECT_INIT_EXPECTED_BROKERS", Problem: "is negative", Fix: "leave it unset or use the number of brokers"}
	case s.LockPermits < 1:
		return &ConfigError{Setting: "CONNECT_INIT_LOCK_PERMITS", Problem: fmt.Sprintf("must be at least 1 (got %d)", s.LockPermits), Fix: "use 1 to start workers one at a time"}
	case s.LockLease <= 0:
		return &ConfigError{Setting: "CONNECT_INIT_LOCK_LEASE", Problem: "must be positive", Fix: "use e.g. 3m"}
	}
	switch s.PeerCheck {
	case "", "fail", "warn", "off":
	default:
		return &ConfigError{Setting: "CONNECT_INIT_PEER_CHECK", Problem: fmt.Sprintf("must be fail, warn or off (got %q)", s.PeerCheck)}
	}
	switch s.LogFormat {
	case "text", "json":
	default:
		return &ConfigError{Setting: "CONNECT_INIT_LOG_FORMAT", Problem: fmt.Sprintf("must be text or json (got %q)", s.LogFormat)}
	}
	switch strings.ToLower(s.LogLevel) {
	case "debug", "info", "warn", "warning", "error":
	default:
		return &ConfigError{Setting: "CONNECT_INIT_LOG_LEVEL", Problem: fmt.Sprintf("must be debug, info, warn or error (got %q)", s.LogLevel)}
	}
	return nil
}

func lookup(environ []string, key string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		k, v, _ := strings.Cut(environ[i], "=")
		if k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
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

// GateError is a gate that failed or timed out: exit 1.
type GateError struct {
	Gate string // "brokers", "topics", "coordinator", "group", "lock", "peers"
	Err  error
	Fix  string
}

// Error names the gate, what failed and the fix.
func (e *GateError) Error() string {
	msg := e.Gate + " gate: " + e.Err.Error()
	if e.Fix != "" {
		msg += "; fix: " + e.Fix
	}
	return msg
}

// Unwrap exposes the cause, so errors.Is/As see through the gate.
func (e *GateError) Unwrap() error { return e.Err }

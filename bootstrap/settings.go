// Package bootstrap holds the gates that run before a Kafka Connect worker
// starts: every broker up, internal topics right, the worker group's
// coordinator safe. Each gate returns a typed report so that run, prepare
// and doctor share one implementation. The settings gate lives in package
// settings; the names below keep callers compiling while they move to it.
package bootstrap

import (
	"sort"

	"github.com/connect-init/connect-init/settings"
)

// EnvPrefix is the prefix of connect-init's own settings.
const EnvPrefix = settings.EnvPrefix

// Topic roles (settings.RoleConfig...).
const (
	RoleConfig = settings.RoleConfig
	RoleOffset = settings.RoleOffset
	RoleStatus = settings.RoleStatus
)

// Settings are connect-init's own settings (settings.Settings).
type Settings = settings.Settings

// Config is the settings gate's result (settings.Config).
type Config = settings.Config

// TopicSpec is one internal topic's layout (settings.TopicSpec).
type TopicSpec = settings.TopicSpec

// ConfigError is bad configuration: exit 2 (settings.ConfigError).
type ConfigError = settings.ConfigError

// LoadSettings is settings.LoadSettings.
func LoadSettings(environ []string) (Settings, error) { return settings.LoadSettings(environ) }

// LoadConfig is settings.LoadConfig.
func LoadConfig(environ []string, s Settings) (*Config, error) {
	return settings.LoadConfig(environ, s)
}

// AsConfigError is settings.AsConfigError.
func AsConfigError(err error) bool { return settings.AsConfigError(err) }

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

// sortedKeys is a helper for stable output.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

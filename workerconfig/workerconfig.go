// Package workerconfig reads a Kafka Connect worker's settings the way the
// worker itself and Confluent's images do: an optional Java .properties file,
// overlaid by CONNECT_* environment variables (Confluent's dub rule), with
// config-provider references (${file:...}, ${env:...}, ${directory:...})
// resolved as Connect resolves them.
//
// connect-init must talk to Kafka with exactly the settings the worker will
// use, or its checks prove nothing; this package is the single place where
// those settings are derived. Every rule here was checked against the
// upstream sources; where connect-init is deliberately stricter than Connect
// (it refuses references Connect would silently leave unresolved), the doc
// comment says so.
package workerconfig

import (
	"sort"
	"strconv"
	"strings"
)

// EnvPrefix is the prefix of environment variables that carry worker properties.
const EnvPrefix = "CONNECT_"

// OwnEnvPrefix is the prefix of connect-init's own settings. These variables
// are removed from the environment before Connect is exec'd, so they are
// never worker properties and are invisible to Connect's EnvVarConfigProvider.
const OwnEnvPrefix = "CONNECT_INIT_"

// WithoutOwn drops connect-init's own CONNECT_INIT_* variables: the worker,
// its config providers and its children see the environment as if
// connect-init had never been there.
func WithoutOwn(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if !strings.HasPrefix(kv, OwnEnvPrefix) {
			out = append(out, kv)
		}
	}
	return out
}

// Properties holds worker properties, keyed by property name
// ("bootstrap.servers", "group.id", ...). Values are kept exactly as Connect
// receives them (no trimming); accessors apply Kafka's ConfigDef trimming.
type Properties map[string]string

// Get returns the value of key with surrounding whitespace removed (Kafka's
// ConfigDef trims STRING, INT and LIST values before use), or def when the
// key is absent or blank.
func (p Properties) Get(key, def string) string {
	if v, ok := p[key]; ok {
		if t := javaTrim(v); t != "" {
			return t
		}
	}
	return def
}

// Int returns key as a 32-bit int (Kafka's INT type), def when absent or
// blank. A malformed value is a *Error naming the property.
func (p Properties) Int(key string, def int) (int, error) {
	v := p.Get(key, "")
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, &Error{Property: key, Problem: "is not a 32-bit integer", Value: v}
	}
	return int(n), nil
}

// WithPrefix returns the properties whose name starts with prefix, with the
// prefix removed ("admin.request.timeout.ms" -> "request.timeout.ms" for
// prefix "admin."). This is how Connect derives admin.*, producer.* and
// consumer.* client overrides.
func (p Properties) WithPrefix(prefix string) Properties {
	out := Properties{}
	for k, v := range p {
		if strings.HasPrefix(k, prefix) && len(k) > len(prefix) {
			out[strings.TrimPrefix(k, prefix)] = v
		}
	}
	return out
}

// Keys returns the property names in sorted order, for deterministic output.
func (p Properties) Keys() []string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Hidden is what Redacted shows instead of a sensitive value; it is the
// string Kafka prints for a PASSWORD-type config, so logs of connect-init
// and of the worker look alike.
const Hidden = "[hidden]"

// Redacted returns a copy of p that is safe to log: the value of every
// property for which IsSensitive is true is replaced by Hidden.
func (p Properties) Redacted() map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		if IsSensitive(k) {
			v = Hidden
		}
		out[k] = v
	}
	return out
}

// Error is a bad worker setting: exit code 2 material. It names the property
// so the operator knows what to fix, and it never carries a sensitive value:
// Value is printed only when the property is not sensitive.
type Error struct {
	// Setting, when known, is what the user set: a variable
	// (CONNECT_SSL_TRUSTSTORE_LOCATION), a file and line, or the property
	// with the image default it came from. Messages lead with it.
	Setting  string
	Property string
	Problem  string
	Value    string // shown only when the property is not sensitive
	Fix      string
	Err      error // underlying cause, if any (never carries a secret)
}

// Error renders the problem as one line: property, problem, value (unless
// sensitive), fix.
func (e *Error) Error() string {
	msg := "worker property " + strconv.Quote(e.Property) + " " + e.Problem
	switch {
	case e.Setting != "" && e.Property != "" && e.Property != "-":
		msg = e.Setting + " (worker property " + e.Property + ") " + e.Problem
	case e.Setting != "":
		// A file or a connect-init setting, not one property ("-").
		msg = e.Setting + " " + e.Problem
	}
	if e.Value != "" && !IsSensitive(e.Property) {
		msg += " (got " + strconv.Quote(e.Value) + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

// Unwrap returns the underlying cause, for errors.Is/As.
func (e *Error) Unwrap() error { return e.Err }

// javaTrim is Java's String.trim: it strips every char <= ' ' from both ends
// (control characters included), which is what ConfigDef.parseType does.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

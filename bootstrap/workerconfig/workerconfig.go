// Package workerconfig reads a Kafka Connect worker's settings the way the
// worker itself and Confluent's images do: an optional Java .properties file,
// overlaid by CONNECT_* environment variables (Confluent's dub rule), with
// config-provider references (${file:...}, ${env:...}, ${directory:...})
// resolved as Connect resolves them.
//
// connect-init must talk to Kafka with exactly the settings the worker will
// use, or its checks prove nothing; this package is the single place where
// those settings are derived.
package workerconfig

import (
	"sort"
	"strconv"
	"strings"
)

// EnvPrefix is the prefix of environment variables that carry worker properties.
const EnvPrefix = "CONNECT_"

// Properties holds resolved worker properties, keyed by property name
// ("bootstrap.servers", "group.id", ...).
type Properties map[string]string

// PropertyName maps a CONNECT_* environment variable name to the worker
// property it sets, with the rule of Confluent's Python dub
// (env_to_props): strip the prefix, lower-case, then "___" -> "-",
// "__" -> "_", "_" -> ".". ok is false for names that are not worker
// properties (no prefix, or connect-init's own CONNECT_INIT_* settings).
func PropertyName(envName string) (prop string, ok bool) {
	if !strings.HasPrefix(envName, EnvPrefix) || strings.HasPrefix(envName, "CONNECT_INIT_") {
		return "", false
	}
	rest := strings.ToLower(strings.TrimPrefix(envName, EnvPrefix))
	if rest == "" {
		return "", false
	}
	rest = strings.ReplaceAll(rest, "___", "-")
	rest = strings.ReplaceAll(rest, "__", "\x00")
	rest = strings.ReplaceAll(rest, "_", ".")
	rest = strings.ReplaceAll(rest, "\x00", "_")
	return rest, true
}

// FromEnviron returns the worker properties set by CONNECT_* variables in
// environ ("KEY=value" entries, as os.Environ returns them).
func FromEnviron(environ []string) Properties {
	p := Properties{}
	for _, kv := range environ {
		k, v, found := strings.Cut(kv, "=")
		if !found {
			continue
		}
		if name, ok := PropertyName(k); ok {
			p[name] = v
		}
	}
	return p
}

// Get returns the value of key, or def when the key is absent or empty.
func (p Properties) Get(key, def string) string {
	if v, ok := p[key]; ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return def
}

// Int returns key as an int, def when absent or empty.
func (p Properties) Int(key string, def int) (int, error) {
	v := p.Get(key, "")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, &Error{Property: key, Problem: "is not an integer", Value: v}
	}
	return n, nil
}

// WithPrefix returns the properties whose name starts with prefix, with the
// prefix removed ("admin.request.timeout.ms" -> "request.timeout.ms" for
// prefix "admin.").
func (p Properties) WithPrefix(prefix string) Properties {
	out := Properties{}
	for k, v := range p {
		if strings.HasPrefix(k, prefix) && len(k) > len(prefix) {
			out[strings.TrimPrefix(k, prefix)] = v
		}
	}
	return out
}

// Keys returns the property names in sorted order.
func (p Properties) Keys() []string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Error is a bad worker setting. It names the property and never carries a
// sensitive value.
type Error struct {
	Property string
	Problem  string
	Value    string // shown only when the property is not sensitive
	Fix      string
}

func (e *Error) Error() string {
	msg := "worker property " + strconv.Quote(e.Property) + " " + e.Problem
	if e.Value != "" && !IsSensitive(e.Property) {
		msg += " (got " + strconv.Quote(e.Value) + ")"
	}
	if e.Fix != "" {
		msg += ": " + e.Fix
	}
	return msg
}

// IsSensitive reports whether a property's value must never be printed:
// passwords, JAAS configurations, secrets, tokens and private keys.
func IsSensitive(key string) bool {
	k := strings.ToLower(key)
	for _, s := range []string{"password", "jaas", "secret", "token", "ssl.keystore.key", "credential"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

package parity

import (
	"sort"
	"strings"

	"github.com/connect-init/connect-init/workerconfig"
)

// Fingerprint is a worker's effective values of the table's rows, as
// published in its cluster registry record: row key (each provider's
// class under its own "config.providers.<name>.class") to value, "" for
// unset without a default. Nil is a worker that predates the
// fingerprint: unknown, never drift.
type Fingerprint map[string]string

// Secret is what a fingerprint holds for a setting whose value may be
// secret: whether it is set, never the value nor a digest of it.
const Secret = "(secret, set)"

// Of is the fingerprint of worker properties p (resolved as the worker
// will see them) for a worker of Kafka Connect version (major.minor, ""
// when unknown: the row is then left out). Connect's defaults apply where
// a setting is unset, so an explicit default and an unset one agree.
func Of(p workerconfig.Properties, version string) Fingerprint {
	f := Fingerprint{}
	for _, r := range Table() {
		switch r.Key {
		case KeyAdvertisedURL:
			// The registry record's key.
		case KeyVersion:
			if version != "" {
				f[r.Key] = version
			}
		case KeyProviderClasses:
			for _, name := range splitList(p.Get("config.providers", "")) {
				k := "config.providers." + name + ".class"
				f[k] = p.Get(k, "")
			}
		default:
			f[r.Key] = Normal(r, p.Get(r.Key, r.Default))
		}
	}
	return redactSecrets(f)
}

// redactSecrets replaces every value of f whose key the project's one
// list of secret names marks (workerconfig.IsSensitive) by Secret: none of
// the table's rows is one, so this only guards a row added later.
func redactSecrets(f Fingerprint) Fingerprint {
	for k := range f {
		if workerconfig.IsSensitive(k) && f[k] != "" {
			f[k] = Secret
		}
	}
	return f
}

// Normal is value as the row compares it: lower-cased for a Fold row,
// its comma-separated items trimmed and sorted for a List row (providers
// and verification algorithms are sets).
func Normal(r Row, value string) string {
	v := strings.TrimSpace(value)
	if r.Fold {
		v = strings.ToLower(v)
	}
	if r.List {
		items := splitList(v)
		sort.Strings(items) // a set: the order means nothing to Connect
		v = strings.Join(items, ",")
	}
	return v
}

// splitList splits a Connect LIST value: comma-separated, items trimmed,
// empty items dropped.
func splitList(s string) []string {
	var out []string
	for _, it := range strings.Split(s, ",") {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}

// Keys are f's keys in table order (each provider's class where the
// table has KeyProviderClasses, by name).
func (f Fingerprint) Keys() []string {
	var out []string
	for _, r := range Table() {
		if r.Key == KeyProviderClasses {
			var ps []string
			for k := range f {
				if isProviderClass(k) {
					ps = append(ps, k)
				}
			}
			sort.Strings(ps)
			out = append(out, ps...)
			continue
		}
		if _, ok := f[r.Key]; ok {
			out = append(out, r.Key)
		}
	}
	return out
}

// isProviderClass reports whether k is config.providers.<name>.class.
func isProviderClass(k string) bool {
	rest, ok := strings.CutPrefix(k, "config.providers.")
	if !ok {
		return false
	}
	name, ok := strings.CutSuffix(rest, ".class")
	return ok && name != "" && !strings.Contains(name, ".")
}

// rowFor is the table row k belongs to.
func rowFor(k string) (Row, bool) {
	if isProviderClass(k) {
		return RowOf(KeyProviderClasses)
	}
	return RowOf(k)
}

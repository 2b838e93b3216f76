package apply

import (
	"regexp"
	"sort"
	"strings"

	"github.com/connect-init/connect-init/workerconfig"
)

// Hidden replaces a secret value in every output.
const Hidden = "[hidden]"

// references matches a value made only of config-provider references
// (${file:/path:key}, ${env:VAR}...): Connect resolves them, so they are
// safe to show and are never rewritten.
var references = regexp.MustCompile(`^(\$\{[^{}]*\})+$`)

// IsReference reports whether v consists only of ${...} references.
func IsReference(v string) bool { return references.MatchString(v) }

// Redactor hides secret values: by key name, by the PASSWORD type
// Connect's validation reports, and, in free text from Connect (validation
// messages, task traces), every secret value it has seen.
type Redactor struct {
	password map[string]bool
	values   map[string]bool
}

// NewRedactor returns an empty Redactor.
func NewRedactor() *Redactor {
	return &Redactor{password: map[string]bool{}, values: map[string]bool{}}
}

// MarkPassword records that Connect types key as PASSWORD.
func (r *Redactor) MarkPassword(key string) { r.password[key] = true }

// Secret reports whether key's value is hidden.
func (r *Redactor) Secret(key string) bool { return r.password[key] || workerconfig.IsSensitive(key) }

// Learn records the secret values of cfg, so that Scrub removes them from
// text.
func (r *Redactor) Learn(cfg map[string]string) {
	for k, v := range cfg {
		if r.Secret(k) && v != "" && !IsReference(v) {
			r.values[v] = true
		}
	}
}

// Value is how key's value v may be printed.
func (r *Redactor) Value(key, v string) string {
	if r.Secret(key) && v != "" && !IsReference(v) {
		return Hidden
	}
	return v
}

// Scrub removes every learned secret value from s, longest first (so that a
// secret containing another is hidden whole).
func (r *Redactor) Scrub(s string) string {
	vals := make([]string, 0, len(r.values))
	for v := range r.values {
		vals = append(vals, v)
	}
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	for _, v := range vals {
		s = strings.ReplaceAll(s, v, Hidden)
	}
	return s
}

package settings

import (
	"fmt"
	"strings"
)

// This file is the one home of "did you mean": for commands, flags,
// CONNECT_INIT_* names and the worker's required variables, by one rule
// (Near). A guess is offered only when a single slip separates the two,
// so that a name that is merely another (CONNECT_INIT_FOO) gets none.

// MaxEdits is the rule's threshold: one letter added, dropped or changed,
// or two neighbours swapped, case aside.
const MaxEdits = 1

// Near reports whether typed is within MaxEdits of name (and not name
// itself, case aside).
func Near(typed, name string) bool {
	d := editDistance(strings.ToLower(typed), strings.ToLower(name))
	return d > 0 && d <= MaxEdits
}

// Suggest is the name of names that typed is a slip of (Near), the first
// such in names; ok is false when none is.
func Suggest(typed string, names []string) (string, bool) {
	for _, n := range names {
		if Near(typed, n) {
			return n, true
		}
	}
	return "", false
}

// unknownSetting refuses a CONNECT_INIT_* name that is no setting:
// connect-init owns the prefix, so a misspelt setting is an error rather
// than a default silently kept.
func unknownSetting(name string) *ConfigError {
	fix := "remove it; `connect-init config` lists every setting"
	if _, ok := Find(strings.ToUpper(name)); ok {
		// Only the case differs (Near needs a slip): that is the guess.
		fix = "did you mean " + strings.ToUpper(name) + "? (`connect-init config` lists every setting)"
	} else if near, ok := Suggest(name, knownNames()); ok {
		fix = "did you mean " + near + "? (`connect-init config` lists every setting)"
	}
	return &ConfigError{Setting: name, Problem: "is not a connect-init setting", Fix: fix}
}

func knownNames() []string {
	names := make([]string, len(table))
	for i, r := range table {
		names[i] = r.Env
	}
	return names
}

// editDistance is the optimal string alignment distance between a and b:
// Levenshtein's insertions, deletions and substitutions, plus the swap of
// two neighbours as one edit (bytes: the names are ASCII).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// SimilarVariable is a variable set in environ that is a slip of want
// (Near) and not itself one of known: the likely misspelling of a required
// variable (CONNECT_BOOTSTRAP_SERVER for CONNECT_BOOTSTRAP_SERVERS), for
// the fix of the error that want is missing.
func SimilarVariable(environ []string, want string, known func(string) bool) (string, bool) {
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if k == want || strings.TrimSpace(v) == "" || known(k) {
			continue
		}
		if Near(k, want) {
			return k, true
		}
	}
	return "", false
}

// typoFix is the fix of a missing required variable when a near name is
// set: that name, as the likely cause.
func typoFix(typo, want string) string {
	return fmt.Sprintf("%s is set: did you mean %s? rename it", typo, want)
}

package settings

import (
	"fmt"
	"strings"
)

// unknownSetting refuses a CONNECT_INIT_* name that is no setting:
// connect-init owns the prefix, so a misspelt setting is an error rather
// than a default silently kept.
func unknownSetting(name string) *ConfigError {
	fix := "remove it; `connect-init config` lists every setting"
	if near, ok := nearest(strings.ToUpper(name), knownNames(), 3); ok {
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

// nearest is the name of names closest to s by edit distance, if within
// max edits (ties: the first in names).
func nearest(s string, names []string, max int) (string, bool) {
	best, bestD := "", max+1
	for _, n := range names {
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best, bestD <= max
}

// editDistance is the Levenshtein distance between a and b (bytes: the
// names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// SimilarVariable is a variable set in environ, one edit away from want
// and not itself one of known: the likely misspelling of a required
// variable (CONNECT_BOOTSTRAP_SERVER for CONNECT_BOOTSTRAP_SERVERS), for
// the fix of the error that want is missing.
func SimilarVariable(environ []string, want string, known func(string) bool) (string, bool) {
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if k == want || strings.TrimSpace(v) == "" || known(k) {
			continue
		}
		if editDistance(k, want) == 1 {
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

package workerconfig

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// excludedEnv lists the CONNECT_* variables Confluent's cp-kafka-connect
// template deliberately keeps out of the worker file
// (kafka-connect-base/include/etc/confluent/docker/kafka-connect.properties.template,
// excluded_props since 2023). CONNECT_LOG4J_*, CONNECT_CUB_* and friends are
// NOT excluded there: they do land in the worker file, where Connect ignores
// them, so they are worker properties here too.
var excludedEnv = map[string]bool{
	"CONNECT_METRIC_REPORTERS": true,
}

// PropertyName maps a CONNECT_* environment variable name to the worker
// property it sets, with exactly the rule of Confluent's Python dub
// (env_to_props in confluent-docker-utils, confluent/docker_utils/dub.py):
// strip the prefix, lower-case, turn every "_" that has a non-"_" on both
// sides into ".", then "___" -> "-", then "__" -> "_". So CONNECT_X_Y_Z is
// x.y.z (the newer Go ub mangles one-letter segments), CONNECT_A__B is a_b,
// CONNECT_A___B is a-b, and leading, trailing or 4+ underscores are kept the
// way dub keeps them (CONNECT__A is _a, CONNECT_A____B is a-_b).
//
// ok is false for names that are not worker properties: no prefix, nothing
// after it, connect-init's own CONNECT_INIT_* settings, and the variables
// Confluent's template excludes (CONNECT_METRIC_REPORTERS).
func PropertyName(envName string) (prop string, ok bool) {
	if !strings.HasPrefix(envName, EnvPrefix) || strings.HasPrefix(envName, OwnEnvPrefix) || excludedEnv[envName] {
		return "", false
	}
	raw := pythonLower(envName[len(EnvPrefix):])
	if raw == "" {
		return "", false
	}
	// re.split('(?<=[^_])_(?=[^_])'): a lone "_" between two non-"_".
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		if raw[i] == '_' && i > 0 && raw[i-1] != '_' && i+1 < len(raw) && raw[i+1] != '_' {
			b.WriteByte('.')
			continue
		}
		b.WriteByte(raw[i])
	}
	s := strings.ReplaceAll(b.String(), "___", "-")
	s = strings.ReplaceAll(s, "__", "_")
	return s, true
}

// pythonLower is Python 3's str.lower for what can appear in an environment
// variable name: ASCII and Unicode simple lower-casing, plus the one
// unconditional multi-rune mapping (U+0130 -> "i̇"). Invalid UTF-8 bytes pass
// through unchanged, as Python's surrogateescape keeps them. Python's
// context-dependent final-sigma rule is not reproduced.
func pythonLower(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w <= 1:
			b.WriteByte(s[i])
		case r == '\u0130':
			b.WriteString("i\u0307")
		default:
			b.WriteRune(unicode.ToLower(r))
		}
		i += w
	}
	return b.String()
}

// FromEnviron returns the worker properties that CONNECT_* variables in
// environ ("KEY=value" entries, as os.Environ returns them) give the worker
// through Confluent's image, exactly as the worker will see them.
//
// Confluent's template writes each variable as a raw "name=value" line into
// the worker file, which connect-distributed then reads with
// Properties.load(InputStream). So the value goes through Java .properties
// parsing: backslash escapes are interpreted ("C:\dir" becomes "C:dir"),
// leading blanks are dropped, a trailing backslash joins the next line, a
// newline in a value starts a new property, and non-ASCII bytes are read as
// ISO-8859-1. FromEnviron renders and parses the same text, so it yields what
// Connect sees, not what the variable literally says. Variables are rendered
// in environ order; when two variables map to the same name, the later value
// wins at the earlier position, as in dub's Python dict.
func FromEnviron(environ []string) Properties {
	p, _ := Parse([]byte(RenderEnv(environ)))
	return p
}

// RenderEnv returns the worker-file text Confluent's dub template renders
// from the CONNECT_* variables in environ ("name=value" lines). It is exposed
// so that a diagnosis can show which line a surprising property came from.
func RenderEnv(environ []string) string {
	text, _ := renderDub(environ)
	return text
}

// LookupEnv returns the last value of name in environ, as Java's
// System.getenv() does when a name occurs twice.
func LookupEnv(environ []string, name string) (string, bool) {
	val, found := "", false
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			val, found = v, true
		}
	}
	return val, found
}

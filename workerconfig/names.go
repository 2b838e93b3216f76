package workerconfig

import "strings"

// PropertyNameUB maps a CONNECT_* variable to the worker property the Go
// `ub` of Confluent Platform 8.1 and later writes for it (ub render-template
// with envToProps in kafka-connect-base's template, since July 2025). Its
// ConvertKey replaces every non-overlapping match of "[^_]_[^_]" (the "_"
// inside the match becomes "."), then "___" -> "-", "__" -> "_", then
// lower-cases. Because a match consumes the character after the "_", a
// one-letter segment loses its second dot: CONNECT_X_Y_Z is x.y_z and
// CONNECT_CONFIG_PROVIDERS_X_PARAM_A is config.providers.x_param.a.
//
// The image's template passes CONNECT_METRIC_REPORTERS in the list of
// excluded *property names*, where it never matches, so ub does not exclude
// it: ok is false only for names without the prefix, with nothing after it,
// and connect-init's own CONNECT_INIT_* settings (removed before the exec).
func PropertyNameUB(envName string) (prop string, ok bool) {
	if !strings.HasPrefix(envName, EnvPrefix) || strings.HasPrefix(envName, OwnEnvPrefix) {
		return "", false
	}
	raw := envName[len(EnvPrefix):]
	if raw == "" {
		return "", false
	}
	rs := []rune(raw)
	var b strings.Builder
	for i := 0; i < len(rs); {
		// A match is three runes: not "_", "_", not "_".
		if i+2 < len(rs) && rs[i] != '_' && rs[i+1] == '_' && rs[i+2] != '_' {
			b.WriteRune(rs[i])
			b.WriteByte('.')
			b.WriteRune(rs[i+2])
			i += 3
			continue
		}
		b.WriteRune(rs[i])
		i++
	}
	s := strings.ReplaceAll(b.String(), "___", "-")
	s = strings.ReplaceAll(s, "__", "_")
	return strings.ToLower(s), true
}

// PropertyNameDebezium maps a CONNECT_* variable to the property Debezium's
// connect-base /docker-entrypoint.sh writes into connect-distributed.properties:
// the name after "CONNECT_" with `tr '[:upper:]' '[:lower:]' | tr _ .`, a
// plain "_" -> "." with no escapes (CONNECT_A__B is a..b). Only ASCII
// letters are lower-cased, as tr does in the image's C.UTF-8 locale for
// the names a shell can export.
func PropertyNameDebezium(envName string) (prop string, ok bool) {
	if !strings.HasPrefix(envName, EnvPrefix) || strings.HasPrefix(envName, OwnEnvPrefix) {
		return "", false
	}
	raw := envName[len(EnvPrefix):]
	if raw == "" {
		return "", false
	}
	return debeziumTr(raw), true
}

// EnvNameFor is the variable that sets prop under flavour f: the inverse
// of the flavour's name rule where one exists ("" for the properties-file
// flavours, where no variable sets a worker property).
func EnvNameFor(f Flavour, prop string) string {
	switch f {
	case Apache, PropertiesFile:
		return ""
	case Debezium:
		return EnvPrefix + strings.ReplaceAll(strings.ToUpper(prop), ".", "_")
	}
	return EnvName(prop)
}

package workerconfig

import "strings"

// EnvName is the CONNECT_* variable that sets worker property prop: the
// inverse of PropertyName. Messages name variables, not properties,
// because users of the images set variables; the test bed configures
// workers the same way.
func EnvName(prop string) string {
	r := strings.NewReplacer("-", "___", "_", "__", ".", "_")
	return EnvPrefix + r.Replace(strings.ToUpper(prop))
}

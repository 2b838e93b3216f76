package settings

import "testing"

// TestSuggestRule: the one did-you-mean rule, one slip (a letter added,
// dropped, changed, or two neighbours swapped, case aside), and nothing
// when the name is merely another.
func TestSuggestRule(t *testing.T) {
	names := []string{"dry-run", "json", "apply", "CONNECT_INIT_LOCK", "CONNECT_INIT_TIMEOUT"}
	for typed, want := range map[string]string{
		"dryrun": "dry-run", "jsn": "json", "aply": "apply", "appyl": "apply", "JSON": "",
		"CONNECT_INIT_FOO": "", "CONNECT_INIT_LOKC": "CONNECT_INIT_LOCK", "connect_init_timeot": "CONNECT_INIT_TIMEOUT",
		"dry": "", "x": "",
	} {
		got, ok := Suggest(typed, names)
		if got != want || ok != (want != "") {
			t.Errorf("Suggest(%q) = %q, %v; want %q", typed, got, ok, want)
		}
	}
}

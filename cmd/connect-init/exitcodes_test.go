package main

import (
	"strings"
	"testing"

	"github.com/connect-init/connect-init/exitcode"
)

// TestExitCodesAreInTheirTables: what each command really exits with on
// help, bad usage and bad settings is a row of its table in package
// exitcode (which docs/exit-codes.md is generated from).
func TestExitCodesAreInTheirTables(t *testing.T) {
	env, conns := interfaceEnv(t)
	badEnv := append(append([]string{}, env...), "CONNECT_INIT_TIMEOUT=soon")
	for _, sc := range subcommands() {
		cmd := []string{sc.name}
		if sc.name == "lock" {
			cmd = []string{"lock", "acquire"}
		}
		table, ok := exitcode.For(strings.Join(cmd, " "))
		if !ok {
			t.Errorf("%s has no table in package exitcode", sc.name)
			continue
		}
		for _, tc := range []struct {
			env  []string
			args []string
		}{
			{env, []string{"-h"}},
			{env, []string{"--no-such-flag"}},
			{badEnv, nil},
		} {
			if sc.name == "run" && tc.args == nil {
				tc.args = []string{"--", "true"}
			}
			if sc.name == "version" || sc.name == "help" {
				tc.env = env
			}
			code, _, _ := runIn(t, tc.env, append(append([]string{}, cmd...), tc.args...)...)
			if !table.Has(code) {
				t.Errorf("%q exits %d, which is not in its table %+v", append(cmd, tc.args...), code, table.Codes)
			}
		}
	}
	if n := conns(); n != 0 {
		t.Errorf("%d connections made", n)
	}
}

package main

import (
	"strings"
	"testing"

	"github.com/connect-init/connect-init/exitcode"
)

// TestHelp: -h, --help and help list the commands; help CMD and CMD -h
// are that command's help, the same text, on stdout, exit 0; internal
// flags are not listed; each command's --timeout says what it bounds
// there.
func TestHelp(t *testing.T) {
	env, conns := interfaceEnv(t)
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"help", "help"}, {"help", "-h"}} {
		code, stdout, stderr := runIn(t, env, args...)
		if code != exitcode.OK || stderr != "" {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
		for _, sc := range subcommands() {
			if !strings.Contains(stdout, "\n  "+sc.name+" ") {
				t.Errorf("%q does not list %s:\n%s", args, sc.name, stdout)
			}
		}
	}
	timeoutHelp := map[string]string{}
	for _, cmd := range [][]string{{"run"}, {"prepare"}, {"doctor"}, {"config"}, {"healthcheck"}, {"apply"}, {"repair"}, {"lock", "acquire"}, {"offsets"}, {"version"}} {
		code, viaHelp, stderr := runIn(t, env, append([]string{"help"}, cmd...)...)
		name := strings.Join(cmd, " ")
		if code != exitcode.OK || stderr != "" || !strings.HasPrefix(viaHelp, "usage of connect-init "+name) {
			t.Errorf("help %s: exit %d, stdout %q, stderr %q", name, code, viaHelp, stderr)
		}
		code, viaFlag, _ := runIn(t, env, append(cmd, "-h")...)
		if code != exitcode.OK || viaFlag != viaHelp {
			t.Errorf("%s -h: exit %d, differs from help %s:\n%s\n---\n%s", name, code, name, viaFlag, viaHelp)
		}
		for _, internal := range []string{"--wait-local", "--watch-stdin"} {
			if strings.Contains(viaHelp, "  "+internal) {
				t.Errorf("help %s lists the internal flag %s", name, internal)
			}
		}
		for _, l := range strings.Split(viaHelp, "\n  --timeout")[1:] {
			l, _, _ = strings.Cut(l, "\n  --")
			timeoutHelp[name] = l
		}
	}
	seen := map[string]string{}
	for name, h := range timeoutHelp {
		if other, ok := seen[h]; ok && !(name == "run" || other == "run") {
			t.Errorf("--timeout of %s and %s say the same: %s", name, other, h)
		}
		seen[h] = name
	}
	if h := timeoutHelp["healthcheck"]; !strings.Contains(h, "local worker") {
		t.Errorf("healthcheck's --timeout help speaks of something else: %s", h)
	}
	if code, _, _ := runIn(t, env, "help", "nope"); code != exitcode.Config {
		t.Errorf("help nope: exit %d, want 2", code)
	}
	if n := conns(); n != 0 {
		t.Errorf("help opened %d connections", n)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/exitcode"
)

// TestEveryProblemAtOnce: four bad flags and two bad settings in one call
// are six entries, on stderr and in the JSON document's errors, each
// naming its flag or setting with a fix; a bad flag no longer hides the
// others, nor the settings (issue 52). apply adds its files' problems.
func TestEveryProblemAtOnce(t *testing.T) {
	env, conns := interfaceEnv(t)
	bad := append(append([]string{}, env...), "CONNECT_INIT_TIMEOUT=abc", "CONNECT_INIT_LOCK_PERMITS=x")
	flags := []string{"--lock-lease=zz", "--timeout=yy", "--bogus", "--log-level=loud"}
	want := []string{"--lock-lease", "--timeout", "--bogus", "--log-level", "CONNECT_INIT_TIMEOUT", "CONNECT_INIT_LOCK_PERMITS"}
	check := func(args []string, entries []string) {
		t.Helper()
		if len(entries) != len(want) {
			t.Errorf("%q: %d entries, want %d:\n%s", args, len(entries), len(want), strings.Join(entries, "\n"))
			return
		}
		for _, w := range want {
			found := false
			for _, e := range entries {
				found = found || strings.Contains(e, w)
			}
			if !found {
				t.Errorf("%q: no entry names %s:\n%s", args, w, strings.Join(entries, "\n"))
			}
		}
	}
	for _, cmd := range [][]string{{"config", "--json"}, {"doctor", "--json"}, {"config"}, {"prepare"}, {"repair"}} {
		args := append(append([]string{}, cmd...), flags...)
		code, stdout, stderr := runIn(t, bad, args...)
		if code != exitcode.Config {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
		check(args, errorEvents(stderr))
		if cmd[len(cmd)-1] == "--json" {
			var entries []string
			for _, e := range decodeEnvelope(t, stdout, nil).Errors {
				if e.Fix == "" {
					t.Errorf("%q: entry without a fix: %+v", args, e)
				}
				entries = append(entries, e.Setting+e.Flag+" "+e.Problem)
			}
			check(args, entries)
		}
	}
	// apply: the flags, the settings and a bad definition file.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "t.json"), []byte("{\n \"name\": \"x\",\n \"confg\": {\"connector.class\": \"C\"}\n}\n"), 0o644)
	args := append([]string{"apply", "--dir", dir, "--dry-run", "--json", "--url", "http://127.0.0.1:1", "--max-restarts=x"}, flags[:3]...)
	code, stdout, stderr := runIn(t, []string{"CONNECT_INIT_TIMEOUT=abc"}, args...)
	doc := decodeEnvelope(t, stdout, nil)
	var names []string
	for _, e := range doc.Errors {
		names = append(names, e.Setting+e.File)
	}
	if code != exitcode.Config || len(doc.Errors) != 6 || !strings.Contains(strings.Join(names, " "), "t.json") {
		t.Errorf("apply: exit %d, errors %q; want 2 with 6 (4 flags, a setting, the file):\n%s", code, names, stderr)
	}
	if n := conns(); n != 0 {
		t.Errorf("%d connections", n)
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/settings"
)

// interfaceEnv is a valid worker environment whose bootstrap server is a
// counting listener: a test of bad input proves nothing was touched.
func interfaceEnv(t *testing.T) ([]string, func() int64) {
	t.Helper()
	addr, conns := countingListener(t)
	env := []string{"CONNECT_BOOTSTRAP_SERVERS=" + addr, "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_KEY_CONVERTER=x", "CONNECT_VALUE_CONVERTER=x",
		"CONNECT_REST_ADVERTISED_HOST_NAME=worker-1"}
	return env, conns.Load
}

// runIn runs connect-init with args and env, an exec that must not happen.
func runIn(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := newCLI(env, &out, &errOut)
	c.exec = func(cmd *entrypoint.Command) error {
		t.Errorf("%q reached the exec of %v", args, cmd.Argv)
		return nil
	}
	code = c.run(context.Background(), args)
	return code, out.String(), errOut.String()
}

// errorEvents are the "bad configuration" events of a text log.
func errorEvents(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, `msg="bad configuration"`) {
			out = append(out, l)
		}
	}
	return out
}

// TestFlagsBelongToTheirCommand: a flag that means nothing for a command
// is refused (exit 2, one event naming it, nothing touched); -h works for
// every command and --version at the top.
func TestFlagsBelongToTheirCommand(t *testing.T) {
	env, conns := interfaceEnv(t)
	for _, args := range [][]string{
		{"healthcheck", "--json"}, {"prepare", "--watch"}, {"run", "--json", "--", "true"}, {"healthcheck", "--lock-topic=x"},
		{"repair", "--lock-lease=1m"}, {"apply", "--dir", t.TempDir(), "--strict"}, {"lock", "acquire", "--json"},
	} {
		code, stdout, stderr := runIn(t, env, args...)
		ev := errorEvents(stderr)
		flagName, _, _ := strings.Cut(strings.TrimPrefix(args[len(args)-1], "--"), "=")
		if args[0] == "run" {
			flagName = "json"
		}
		want := exitcode.Config
		if args[0] == "healthcheck" {
			want = exitcode.Unhealthy // Docker reserves 2
		}
		if code != want || len(ev) != 1 || !strings.Contains(ev[0], "flag=--"+flagName) || !strings.Contains(ev[0], "is not a flag of connect-init") || stdout != "" {
			t.Errorf("%q: exit %d, want %d with one event naming --%s:\n%s%s", args, code, want, flagName, stdout, stderr)
		}
	}
	code, _, stderr := runIn(t, env, "doctor", "x", "--json")
	if code != exitcode.Config || !strings.Contains(stderr, "doctor takes no arguments") {
		t.Errorf("doctor x --json: exit %d, want 2 refusing the argument:\n%s", code, stderr)
	}

	for _, args := range [][]string{{"lock", "-h"}, {"version", "-h"}, {"lock", "acquire", "-h"}, {"run", "-h"}, {"prepare", "-h"},
		{"doctor", "-h"}, {"healthcheck", "-h"}, {"config", "-h"}, {"apply", "-h"}, {"repair", "-h"}, {"-h"}} {
		if code, stdout, stderr := runIn(t, env, args...); code != exitcode.OK || stdout+stderr == "" {
			t.Errorf("%q: exit %d, want 0 with help:\n%s%s", args, code, stdout, stderr)
		}
	}
	// Flags other parts pass on: run's apply child (startup/applychild.go),
	// the docs' config example. -h last: exit 0 only if the rest parsed.
	for _, args := range [][]string{
		{"apply", "--wait-local", "--dir", t.TempDir(), "--timeout", "1m", "--log-format", "json", "--log-level", "info", "-h"},
		{"config", "--lock-lease=5m", "-h"},
		{"lock", "acquire", "--watch-stdin", "--timeout=1m", "--lock-topic=t", "--peers=a:8083", "--strict", "-h"},
	} {
		if code, stdout, stderr := runIn(t, env, args...); code != exitcode.OK {
			t.Errorf("%q: exit %d, want 0:\n%s%s", args, code, stdout, stderr)
		}
	}
	if code, stdout, _ := runIn(t, env, "--version"); code != exitcode.OK || stdout != "connect-init "+version+"\n" {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
	if n := conns(); n != 0 {
		t.Errorf("bad flags opened %d connections", n)
	}
}

// TestHelpComesFromTheTable: each command's -h lists exactly the settings
// the table gives it, flags and variables alike, and no other command's
// flags.
func TestHelpComesFromTheTable(t *testing.T) {
	for _, cmd := range []struct {
		args    []string
		name    settings.Command
		notHere []string
	}{
		{[]string{"run", "-h"}, settings.Run, []string{"--json", "--watch", "--interval", "--dir"}},
		{[]string{"healthcheck", "-h"}, settings.Healthcheck, []string{"--json", "--lock-topic", "--strict"}},
		{[]string{"apply", "-h"}, settings.Apply, []string{"--strict", "--lock-lease"}},
		{[]string{"lock", "acquire", "-h"}, settings.LockAcquire, []string{"--json", "--lock\n"}},
	} {
		_, help, _ := runIn(t, nil, cmd.args...) // help is on stdout
		for _, r := range settings.Table() {
			switch {
			case r.FlagFor(cmd.name) && !strings.Contains(help, "  --"+r.Flag+" ") && !strings.Contains(help, "  --"+r.Flag+"\n"):
				t.Errorf("%q does not offer --%s:\n%s", cmd.args, r.Flag, help)
			case r.AppliesTo(cmd.name) && !strings.Contains(help, r.Env):
				t.Errorf("%q does not list %s:\n%s", cmd.args, r.Env, help)
			case !r.AppliesTo(cmd.name) && strings.Contains(help, r.Env+":"):
				t.Errorf("%q lists %s, which means nothing for it", cmd.args, r.Env)
			}
		}
		for _, f := range cmd.notHere {
			if strings.Contains(help, "  "+f) {
				t.Errorf("%q offers %s:\n%s", cmd.args, strings.TrimSpace(f), help)
			}
		}
	}
}

// TestEveryBadSettingInOneRun: two bad values, a misspelt CONNECT_INIT_
// name and a missing worker setting are four events, each naming its
// setting with its fix, in one run of every command that reads them.
func TestEveryBadSettingInOneRun(t *testing.T) {
	env, conns := interfaceEnv(t)
	var bad []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CONNECT_GROUP_ID=") {
			bad = append(bad, kv)
		}
	}
	bad = append(bad, "CONNECT_INIT_TIMEOUT=30", "CONNECT_INIT_LOCK_PERMITS=0", "CONNECT_INIT_EXPECTED_BROKER=3", "CONNECT_GROUP_IDS=g")
	want := []string{"setting=CONNECT_INIT_EXPECTED_BROKER ", "setting=CONNECT_INIT_TIMEOUT ", "setting=CONNECT_INIT_LOCK_PERMITS ", "setting=CONNECT_GROUP_ID "}
	for _, args := range [][]string{{"run", "--", "true"}, {"prepare"}, {"doctor"}, {"config"}, {"repair"}} {
		code, _, stderr := runIn(t, bad, args...)
		ev := errorEvents(stderr)
		wantN := len(want)
		if code != exitcode.Config || len(ev) != wantN {
			t.Errorf("%q: exit %d with %d events, want 2 with %d:\n%s", args, code, len(ev), wantN, stderr)
			continue
		}
		for i, w := range want[:wantN] {
			if !strings.Contains(ev[i], w) || !strings.Contains(ev[i], "fix=") {
				t.Errorf("%q: event %d does not name %s with a fix:\n%s", args, i, w, ev[i])
			}
		}
		if wantN == 4 && !strings.Contains(ev[3], "CONNECT_GROUP_IDS is set: did you mean CONNECT_GROUP_ID?") {
			t.Errorf("%q: the missing group id does not name the typo:\n%s", args, ev[3])
		}
		if !strings.Contains(ev[0], "did you mean CONNECT_INIT_EXPECTED_BROKERS?") {
			t.Errorf("%q: the misspelt name gets no suggestion:\n%s", args, ev[0])
		}
	}
	if n := conns(); n != 0 {
		t.Errorf("bad settings opened %d connections", n)
	}
}

// TestJSONIsAlwaysOneDocument: config --json and doctor --json print one
// JSON document with an errors list when the settings are bad, and config
// lists every setting of the table.
func TestJSONIsAlwaysOneDocument(t *testing.T) {
	env, conns := interfaceEnv(t)
	bad := append(append([]string{}, env...), "CONNECT_INIT_TIMEOUT=30", "CONNECT_INIT_LOCK_MODE=wrker")
	for _, args := range [][]string{{"config", "--json"}, {"doctor", "--json"}} {
		code, stdout, stderr := runIn(t, bad, args...)
		var doc struct {
			Errors   []errorEntry
			Settings []configEntry `json:"settings"`
		}
		env := decodeEnvelope(t, stdout, &doc)
		doc.Errors = env.Errors
		if code != exitcode.Config || len(doc.Errors) != 2 || doc.Errors[0].Setting != "CONNECT_INIT_TIMEOUT" || doc.Errors[1].Setting != "CONNECT_INIT_LOCK_MODE" ||
			doc.Errors[0].Problem == "" || doc.Errors[0].Fix == "" {
			t.Errorf("%q: exit %d, errors %+v; want 2 with CONNECT_INIT_TIMEOUT and CONNECT_INIT_LOCK_MODE:\n%s", args, code, doc.Errors, stderr)
		}
		if args[0] == "config" {
			var keys []string
			for _, e := range doc.Settings {
				keys = append(keys, e.Key)
				if e.Key == "CONNECT_INIT_TIMEOUT" && (e.Value != "30" || e.Source != "CONNECT_INIT_TIMEOUT") {
					t.Errorf("config shows the bad timeout as %+v, want what the user set", e)
				}
			}
			var want []string
			for _, r := range settings.Table() {
				want = append(want, r.Env)
			}
			if strings.Join(keys, " ") != strings.Join(want, " ") {
				t.Errorf("config lists %v, want the table's %v", keys, want)
			}
		}
	}
	code, stdout, _ := runIn(t, append(append([]string{}, env...), "CONNECT_CUB_KAFKA_MIN_BROKERS=5"), "config", "--json")
	var doc configDoc
	if decodeEnvelope(t, stdout, &doc); code != exitcode.OK {
		t.Fatalf("config --json: exit %d", code)
	}
	for _, e := range doc.Settings {
		if e.Key == "CONNECT_INIT_EXPECTED_BROKERS" && (e.Value != "5" || e.Source != "derived") {
			t.Errorf("with CONNECT_CUB_KAFKA_MIN_BROKERS=5 config shows %+v, want 5 derived", e)
		}
	}
	if n := conns(); n != 0 {
		t.Errorf("config and doctor with bad settings opened %d connections", n)
	}
}

// TestConnectorsDirIsASetting: a missing CONNECT_INIT_CONNECTORS_DIR, or
// one with a broken definition, stops run, prepare and config at the
// settings step (exit 2, the directory or the file and line named),
// before anything is touched.
func TestConnectorsDirIsASetting(t *testing.T) {
	env, conns := interfaceEnv(t)
	broken := t.TempDir()
	file := filepath.Join(broken, "typo.json")
	if err := os.WriteFile(file, []byte("{\n \"name\": \"x\",\n \"config\": {\"connector.class\": \"C\" \"topic\": \"t\"}\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{"/nonexistent/connectors": "cannot read the connectors directory", broken: file + ":3:"} {
		for _, args := range [][]string{{"run", "--", "true"}, {"prepare"}, {"config"}} {
			code, _, stderr := runIn(t, append(append([]string{}, env...), "CONNECT_INIT_CONNECTORS_DIR="+dir), args...)
			ev := errorEvents(stderr)
			if code != exitcode.Config || len(ev) != 1 || !strings.Contains(ev[0], "CONNECT_INIT_CONNECTORS_DIR") || !strings.Contains(ev[0], want) {
				t.Errorf("%q with CONNECT_INIT_CONNECTORS_DIR=%s: exit %d, want 2 naming it and %q:\n%s", args, dir, code, want, stderr)
			}
		}
	}
	// Two bad files: both named in one run, one event each.
	two := t.TempDir()
	fileA, fileB := filepath.Join(two, "a.json"), filepath.Join(two, "b.properties")
	os.WriteFile(fileA, []byte("{\n \"name\": \"a\",\n \"confg\": {\"connector.class\": \"C\"}\n}\n"), 0o644)
	os.WriteFile(fileB, []byte("name=b\ntopic=t\n"), 0o644)
	for _, args := range [][]string{{"run", "--", "true"}, {"prepare"}} {
		code, _, stderr := runIn(t, append(append([]string{}, env...), "CONNECT_INIT_CONNECTORS_DIR="+two), args...)
		ev := errorEvents(stderr)
		if code != exitcode.Config || len(ev) != 2 || !strings.Contains(ev[0], fileA+":3:") || !strings.Contains(ev[1], fileB+": connector.class is missing") {
			t.Errorf("%q with two bad files: exit %d, want 2 with one event per file:\n%s", args, code, stderr)
		}
	}
	if n := conns(); n != 0 {
		t.Errorf("a bad connectors directory opened %d connections", n)
	}
}

// TestEveryMissingWorkerSettingInOneRun: with connect-init's own settings
// good, two missing required worker settings are two events, before any
// connection.
func TestEveryMissingWorkerSettingInOneRun(t *testing.T) {
	env, conns := interfaceEnv(t)
	var bad []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CONNECT_GROUP_ID=") && !strings.HasPrefix(kv, "CONNECT_CONFIG_STORAGE_TOPIC=") {
			bad = append(bad, kv)
		}
	}
	for _, args := range [][]string{{"run", "--", "true"}, {"prepare"}, {"doctor"}, {"config"}} {
		code, _, stderr := runIn(t, bad, args...)
		ev := errorEvents(stderr)
		if code != exitcode.Config || len(ev) != 2 || !strings.Contains(ev[0], "setting=CONNECT_GROUP_ID ") || !strings.Contains(ev[1], "setting=CONNECT_CONFIG_STORAGE_TOPIC ") {
			t.Errorf("%q: exit %d with %d events, want 2 naming CONNECT_GROUP_ID and CONNECT_CONFIG_STORAGE_TOPIC:\n%s", args, code, len(ev), stderr)
		}
	}
	if n := conns(); n != 0 {
		t.Errorf("missing worker settings opened %d connections", n)
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/exitcode"
)

// messageRow is one input, its exit code and what its message must say:
// the input it names and the fix; never what it must not.
type messageRow struct {
	env        []string
	args       []string
	code       int
	wants      []string
	notWant    []string
	skipEvents bool // the output is not JSON events (help, usage text)
	bare       bool // env alone, without the valid worker environment
}

// TestMessagesNameInputAndFix: the messages of issue 52, each input with
// its exit code and a message naming the input and the fix.
func TestMessagesNameInputAndFix(t *testing.T) {
	env, conns := interfaceEnv(t)
	dir := t.TempDir()
	wc := filepath.Join(dir, "worker.properties")
	os.WriteFile(wc, []byte("bootstrap.servers=k:9092\ngroup.id=g\nconfig.storage.topic=\n"), 0o644)
	rows := []messageRow{
		{env: []string{"CONNECT_INIT_WORKER_CONFIG=/nonexistent/worker.properties"}, args: []string{"config"}, code: 2,
			wants: []string{"CONNECT_INIT_WORKER_CONFIG", "/nonexistent/worker.properties", "fix"}, notWant: []string{"(worker property -)"}},
		{env: []string{"CONNECT_INIT_WORKER_CONFIG=" + wc}, bare: true, args: []string{"config"}, code: 2,
			wants: []string{wc + ":3", "config.storage.topic", "fix"}, notWant: []string{"(worker property -)"}},
		{args: []string{"healthcheck", "extra"}, code: exitcode.Unhealthy, wants: []string{"command line: healthcheck takes no arguments", "extra", "connect-init healthcheck -h"}},
		{args: []string{"offsets", "export", "--url", "http://127.0.0.1:1"}, code: 2, wants: []string{"--connector", "name the connector with --connector"}},
		{args: []string{"offsets"}, code: 2, wants: []string{"--connector", "export, apply or reset"}},
		{args: []string{"help", "apply", "extra"}, code: 2, wants: []string{"help takes one command", `apply extra`, "connect-init help apply"}, notWant: []string{"-h"}},
		{args: []string{"lock"}, code: 2, wants: []string{"lock acquire"}, notWant: []string{"watch-stdin"}},
		{args: []string{"apply", "--dir", dir, "--wait=soon"}, code: 2, wants: []string{"--wait", `soon`, "Go duration such as 90s"}, notWant: []string{"parse error"}},
		{args: []string{"doctor", "--interval=soon"}, code: 2, wants: []string{"--interval", "Go duration such as 90s"}, notWant: []string{"parse error"}},
		{args: []string{"apply", "--dir", dir, "--watch", "--max-restarts=-010"}, code: 2, wants: []string{"--max-restarts", "got -10"}},
		{args: []string{"apply", "--dir", dir, "--watch", "--max-restarts=0x10"}, code: 2, wants: []string{"--max-restarts", `0x10`, "whole decimal number"}},
		{args: []string{"repair", "--replication-factor=0x3"}, code: 2, wants: []string{"--replication-factor", "0x3"}},
		{args: []string{"apply", "--dir", dir, "--dry-run", "--url", "http://127.0.0.1:99999"}, code: 2, wants: []string{"--url", "port 99999", "REST port"}},
		{args: []string{"apply", "--dir", dir, "--dry-run", "--url", "127.0.0.1:8083"}, code: 2, wants: []string{"--url", "add http://"}},
		{env: []string{"CONNECT_INIT_EXPECTED_BROKERS=9223372036854775807"}, args: []string{"config"}, code: 2, wants: []string{"CONNECT_INIT_EXPECTED_BROKERS", "too large", "at most 10000"}},
		{env: []string{"CONNECT_CUB_KAFKA_TIMEOUT=18446744074"}, args: []string{"config"}, code: 2, wants: []string{"CONNECT_CUB_KAFKA_TIMEOUT", "too large"}, notWant: []string{"CONNECT_INIT_TIMEOUT must"}},
		{args: []string{"offsets", "reset", "--url", "http://127.0.0.1:1", "--connector", "c", "--file", wc}, code: 2, wants: []string{"--file", "offsets apply --file"}},
		{args: []string{"version", "--json=true"}, code: 0, skipEvents: true},
		{args: []string{"version", "--json=maybe"}, code: 2, wants: []string{"--json", "true or false"}},
	}
	for _, r := range rows {
		base := env
		if r.bare {
			base = nil
		}
		e := append(append(append([]string{}, base...), "CONNECT_INIT_LOG_FORMAT=json"), r.env...)
		code, stdout, stderr := runIn(t, e, r.args...)
		out := stdout + stderr
		if code != r.code {
			t.Errorf("%v %q: exit %d, want %d:\n%s", r.env, r.args, code, r.code, out)
		}
		for _, w := range r.wants {
			if !strings.Contains(out, w) {
				t.Errorf("%v %q: the message lacks %q:\n%s", r.env, r.args, w, out)
			}
		}
		for _, w := range r.notWant {
			if strings.Contains(out, w) {
				t.Errorf("%v %q: the message has %q:\n%s", r.env, r.args, w, out)
			}
		}
		if !r.skipEvents {
			checkSentences(t, strings.Join(r.args, " "), stderr)
		}
	}
	if n := conns(); n != 0 {
		t.Errorf("%d connections", n)
	}
}

// danglingEnd is a sentence cut off: its last word a preposition or "to".
var danglingEnd = regexp.MustCompile(`(?i)\b(to|of|for|with|in|on|at|by|from|into|about|as|the|a|an|and|or)[\s.:;,]*$`)

// checkSentences: every error event's problem and fix (JSON log lines)
// is a whole sentence, never one cut off after a preposition ("name the
// connector whose offsets to ").
func checkSentences(t *testing.T, where, stderr string) {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) != nil || ev["level"] != "ERROR" {
			continue
		}
		for _, k := range []string{"problem", "fix"} {
			if s, _ := ev[k].(string); danglingEnd.MatchString(s) {
				t.Errorf("%s: the %s ends cut off: %q", where, k, s)
			}
		}
	}
}

// TestNoSentenceCutOff runs checkSentences over the bad-input table's
// events and the usage errors, and proves it catches the old offsets fix.
func TestNoSentenceCutOff(t *testing.T) {
	if !danglingEnd.MatchString("name the connector whose offsets to ") {
		t.Fatal("the check does not catch a sentence cut off after 'to'")
	}
	bootstrap, _ := countingListener(t)
	for _, row := range badInputs() {
		e := append(rowEnv(t, row, bootstrap), "CONNECT_INIT_LOG_FORMAT=json")
		cmd := "config"
		if row.cmds != nil {
			cmd = row.cmds[0]
		}
		args := append([]string{}, row.args...)
		if cmd != "" {
			args = append([]string{cmd}, args...)
		}
		_, _, stderr := runIn(t, e, args...)
		checkSentences(t, row.name, stderr)
	}
	for _, args := range [][]string{{"offsets"}, {"offsets", "export"}, {"offsets", "reset"}, {"apply"}, {"lock"}, {"repair", "x"}, {"prepare", "x"}} {
		_, _, stderr := runIn(t, []string{"CONNECT_INIT_LOG_FORMAT=json"}, args...)
		checkSentences(t, strings.Join(args, " "), stderr)
	}
}

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/exitcode"
)

// The failure paths of the standard streams (issue 48, docs/testing.md's
// checklist): stderr closed (the shell's 2>&-) or full (2>/dev/full)
// changes nothing but the logs, which are lost: every command exits with
// the code it has with a working stderr and writes the same answer; and a
// report that could not be written on stdout is a failure.

// runStreams runs the built binary with stderr "closed" (2>&-), a path
// (/dev/full: every write fails) or "" (a pipe, returned), its stdout
// into a file (returned).
func runStreams(t *testing.T, env []string, stderr string, args ...string) (code int, stdout, errText string) {
	t.Helper()
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var cmd *exec.Cmd
	var errBuf bytes.Buffer
	switch stderr {
	case "closed":
		cmd = exec.Command("sh", append([]string{"-c", `exec "$0" "$@" 2>&-`, builtBinary(t)}, args...)...)
	case "":
		cmd = exec.Command(builtBinary(t), args...)
		cmd.Stderr = &errBuf
	default:
		f, err := os.OpenFile(stderr, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd = exec.Command(builtBinary(t), args...)
		cmd.Stderr = f
	}
	cmd.Stdout, cmd.Env, cmd.Dir = out, append([]string{}, env...), dir
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, string(b), errBuf.String()
}

// TestStderrClosedOrFull: each command, with its stderr closed and with
// it full, exits as it does with a working stderr (0, 1, 2 or a dry run's
// 3, each tried) and writes the same answer; a file it writes (offsets
// export --file) is written whole. No command dies of its lost logs, and
// none takes a lost log line for a failure of its own.
func TestStderrClosedOrFull(t *testing.T) {
	worker := []string{"CONNECT_BOOTSTRAP_SERVERS=127.0.0.1:1", "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_KEY_CONVERTER=x", "CONNECT_VALUE_CONVERTER=x",
		"CONNECT_REST_ADVERTISED_HOST_NAME=worker-1", "CONNECT_INIT_TIMEOUT=1s"}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sink.json"), []byte(`{"name": "sink", "config": {"connector.class": "C", "topics": "t"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	connect, offsets := fakeConnectURL(t, false), fakeOffsetsURL(t)
	exported := filepath.Join(t.TempDir(), "offsets.json")
	for _, c := range []struct {
		env  []string
		args []string
		code int
		// same: the answer on stdout does not depend on the time.
		same bool
	}{
		{worker, []string{"config"}, exitcode.OK, true},
		{worker, []string{"config", "--json"}, exitcode.OK, true},
		{nil, []string{"version"}, exitcode.OK, true},
		{nil, []string{"help", "apply"}, exitcode.OK, true},
		{nil, []string{"completion", "bash"}, exitcode.OK, true},
		{append(worker, "CONNECT_INIT_NO_SUCH_SETTING=1"), []string{"prepare"}, exitcode.Config, false},
		{worker, []string{"prepare"}, exitcode.Failed, true},
		{worker, []string{"run", "--", "/bin/true"}, exitcode.Failed, true},
		{worker, []string{"doctor"}, exitcode.Failed, false},
		{worker, []string{"doctor", "--json"}, exitcode.Failed, false},
		{worker, []string{"healthcheck"}, exitcode.Failed, true},
		{worker, []string{"repair"}, exitcode.Failed, true},
		{nil, []string{"apply", "--dir", dir, "--url", connect, "--dry-run", "--json", "--detailed-exitcode"}, exitcode.ChangesPending, true},
		{nil, []string{"offsets", "export", "--url", offsets, "--connector", "c", "--file", exported}, exitcode.OK, true},
	} {
		code, want, errText := runStreams(t, c.env, "", c.args...)
		if code != c.code {
			t.Fatalf("%q with a working stderr: exit %d, want %d\n%s", c.args, code, c.code, errText)
		}
		var file []byte
		if c.args[0] == "offsets" {
			file, _ = os.ReadFile(exported)
			if len(file) == 0 {
				t.Fatalf("%q wrote no file", c.args)
			}
			_ = os.Remove(exported)
		}
		for _, stderr := range []string{"closed", "/dev/full"} {
			got, out, _ := runStreams(t, c.env, stderr, c.args...)
			if got != c.code {
				t.Errorf("%q 2>%s: exit %d, want %d as with a working stderr", c.args, stderr, got, c.code)
			}
			if c.same && out != want || !c.same && (out == "") != (want == "") {
				t.Errorf("%q 2>%s: stdout differs from the one with a working stderr:\n%s\nwant:\n%s", c.args, stderr, out, want)
			}
			if c.args[0] == "offsets" {
				if b, err := os.ReadFile(exported); err != nil || !bytes.Equal(b, file) {
					t.Errorf("%q 2>%s: the exported file differs (%v):\n%s\nwant:\n%s", c.args, stderr, err, b, file)
				}
				_ = os.Remove(exported)
			}
		}
	}
}

// TestReportNotWrittenIsAFailure: doctor's report and JSON document, and a
// completion script, that could not be written on stdout (closed or
// full) say so on stderr, and exit 1 (the commands
// TestAnswerNotWrittenIsAFailure does not try).
func TestReportNotWrittenIsAFailure(t *testing.T) {
	worker := []string{"CONNECT_BOOTSTRAP_SERVERS=127.0.0.1:1", "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_KEY_CONVERTER=x", "CONNECT_VALUE_CONVERTER=x",
		"CONNECT_REST_ADVERTISED_HOST_NAME=worker-1", "CONNECT_INIT_TIMEOUT=1s"}
	for _, c := range []struct {
		env  []string
		args []string
		says string
	}{
		{worker, []string{"doctor"}, "cannot write the report"},
		{worker, []string{"doctor", "--json"}, "cannot write the JSON document"},
		{nil, []string{"completion", "bash"}, "cannot write the answer on stdout"},
	} {
		for _, stdout := range []string{"closed", "/dev/full"} {
			code, stderr := runBinaryOut(t, c.env, stdout, c.args...)
			if code != exitcode.Failed || !strings.Contains(stderr, c.says) {
				t.Errorf("%q >%s: exit %d, want 1 with %q on stderr:\n%s", c.args, stdout, code, c.says, stderr)
			}
		}
	}
}

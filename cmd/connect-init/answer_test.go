package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runBinaryOut runs the built binary with its stdout "closed" (the shell's
// >&-) or the file at that path (/dev/full: every write fails).
func runBinaryOut(t *testing.T, env []string, stdout string, args ...string) (int, string) {
	t.Helper()
	var cmd *exec.Cmd
	if stdout == "closed" {
		cmd = exec.Command("sh", append([]string{"-c", `exec "$0" "$@" >&-`, builtBinary(t)}, args...)...)
	} else {
		f, err := os.OpenFile(stdout, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd = exec.Command(builtBinary(t), args...)
		cmd.Stdout = f
	}
	cmd.Env, cmd.Dir = append([]string{}, env...), t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

// fakeOffsetsURL answers as a Connect 4.3 worker whose connector c has
// one source offset.
func fakeOffsetsURL(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Write([]byte(`{"version":"4.3.1","commit":"c","kafka_cluster_id":"k"}`))
		case "/health":
			w.Write([]byte(`{"status":"healthy","message":"ok"}`))
		case "/connectors/c/offsets":
			w.Write([]byte(`{"offsets":[{"partition":{"file":"a"},"offset":{"position":7}}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestAnswerNotWrittenIsAFailure: a command whose answer could not be
// written (stdout closed, or full, or an export's --file full) exits 1,
// never 0 or a dry run's 3, and says so on stderr; the export never says
// "offsets exported" (issue 48).
func TestAnswerNotWrittenIsAFailure(t *testing.T) {
	worker := []string{"CONNECT_BOOTSTRAP_SERVERS=127.0.0.1:1", "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_KEY_CONVERTER=x", "CONNECT_VALUE_CONVERTER=x",
		"CONNECT_REST_ADVERTISED_HOST_NAME=worker-1"}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sink.json"), []byte(`{"name": "sink", "config": {"connector.class": "C", "topics": "t"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	connect, offsets := fakeConnectURL(t, false), fakeOffsetsURL(t)
	for _, c := range []struct {
		env    []string
		stdout string
		args   []string
	}{
		{worker, "closed", []string{"config"}},
		{worker, "/dev/full", []string{"config"}},
		{worker, "/dev/full", []string{"config", "--json"}},
		{nil, "closed", []string{"version"}},
		{nil, "/dev/full", []string{"version", "--json"}},
		{nil, "/dev/full", []string{"help"}},
		{nil, "/dev/full", []string{"help", "apply"}},
		{nil, "/dev/full", []string{"apply", "--dir", dir, "--url", connect, "--dry-run", "--json", "--detailed-exitcode"}},
		{nil, "/dev/full", []string{"apply", "--dir", dir, "--url", connect, "--dry-run"}},
		{nil, "/dev/full", []string{"offsets", "export", "--url", offsets, "--connector", "c"}},
		{nil, "closed", []string{"offsets", "export", "--url", offsets, "--connector", "c"}},
		{nil, "/dev/null", []string{"offsets", "export", "--url", offsets, "--connector", "c", "--file", "/dev/full"}},
	} {
		code, stderr := runBinaryOut(t, c.env, c.stdout, c.args...)
		if code != 1 || !strings.Contains(stderr, "cannot write") {
			t.Errorf("%q >%s: exit %d, want 1 with an error that the answer was not written:\n%s", c.args, c.stdout, code, stderr)
		}
		if strings.Contains(stderr, "offsets exported") {
			t.Errorf("%q >%s: says the offsets were exported:\n%s", c.args, c.stdout, stderr)
		}
	}
	// A stdout redirected to /dev/null is written: exit 0.
	if code, stderr := runBinaryOut(t, worker, "/dev/null", "config"); code != 0 {
		t.Errorf("config >/dev/null: exit %d\n%s", code, stderr)
	}
}

package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/connect-init/connect-init/exitcode"
)

// TestOffsetsBadInput: every bad flag or file of `connect-init offsets` is
// exit 2 naming it, before any request.
func TestOffsetsBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"offsets": [{"offset": {"x": 1}}]}`), 0o644)
	for _, c := range []struct {
		args  []string
		wants []string
	}{
		{nil, []string{"export, apply or reset"}},
		{[]string{"move", "--url", "http://x:8083", "--connector", "c"}, []string{`got \"move\"`}},
		{[]string{"export", "--connector", "c"}, []string{"--url", "is not given"}},
		{[]string{"export", "--url", "ftp://x"}, []string{"--connector"}},
		{[]string{"export", "--url", "ftp://x", "--connector", "c"}, []string{"--url", "scheme"}},
		{[]string{"apply", "--url", "http://x:8083", "--connector", "c"}, []string{"--file", "is not given"}},
		{[]string{"apply", "--url", "http://x:8083", "--connector", "c", "--file", bad}, []string{"--file", "bad.json", "no \\\"partition\\\""}},
		{[]string{"apply", "--url", "http://x:8083", "--connector", "c", "--file", filepath.Join(dir, "missing.json")}, []string{"--file", "no such file"}},
		{[]string{"reset", "--url", "http://x:8083", "--connector", "c", "--timeout=0s"}, []string{"--timeout"}},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"offsets"}, c.args...), nil, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != exitcode.Config {
			t.Errorf("offsets %q: exit %d, want 2\n%s", c.args, code, out)
		}
		for _, w := range c.wants {
			if !strings.Contains(out, w) {
				t.Errorf("offsets %q: output lacks %q\n%s", c.args, w, out)
			}
		}
	}
}

// TestOffsetsFlagRules: offsets follows every command's flag rules: flags
// before the subcommand, --log-format and --timeout as settings (a bad
// CONNECT_INIT_TIMEOUT is refused, a good one used), every problem at
// once, and errors naming the command as typed.
func TestOffsetsFlagRules(t *testing.T) {
	dead := "http://127.0.0.1:1"
	for _, c := range []struct {
		env   []string
		args  []string
		code  int
		wants []string
	}{
		// Flags first: the subcommand is found, the worker is asked (and
		// refuses the connection): exit 1, not "got \"\"".
		{nil, []string{"--url", dead, "--connector", "c", "export"}, exitcode.Failed, []string{"cannot reach the worker"}},
		{nil, []string{"--url", dead, "export", "--connector", "c", "--log-format=json"}, exitcode.Failed, []string{`"msg":"cannot reach the worker"`}},
		{[]string{"CONNECT_INIT_TIMEOUT=soon"}, []string{"export", "--url", dead, "--connector", "c"}, exitcode.Config, []string{"CONNECT_INIT_TIMEOUT"}},
		{nil, []string{"export", "--url", dead, "--connector", "c", "--timeout=0s"}, exitcode.Config, []string{"flag=--timeout"}},
		{nil, []string{"apply", "--bogus"}, exitcode.Config, []string{"is not a flag of connect-init offsets ", "see connect-init offsets -h"}},
		// Every problem at once.
		{[]string{"CONNECT_INIT_LOG_LEVEL=loud"}, []string{"apply"}, exitcode.Config, []string{"CONNECT_INIT_LOG_LEVEL", "flag=--url", "flag=--connector", "flag=--file"}},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"offsets"}, c.args...), c.env, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != c.code {
			t.Errorf("offsets %q: exit %d, want %d\n%s", c.args, code, c.code, out)
		}
		for _, w := range c.wants {
			if !strings.Contains(out, w) {
				t.Errorf("offsets %q (env %q): output lacks %q\n%s", c.args, c.env, w, out)
			}
		}
		if strings.Contains(out, "connect-init offsets export|apply|reset") {
			t.Errorf("offsets %q: an error names the usage string as the command:\n%s", c.args, out)
		}
	}
}

// TestOffsetsRefusedBeforeConnect: offsets reset with --file (which reset
// would ignore, deleting every offset the user meant to set) and an
// export to a file in a directory that does not exist are bad input: exit
// 2 naming --file and the fix, before any request to Connect (issue 48,
// issue 52).
func TestOffsetsRefusedBeforeConnect(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "c.offsets.json")
	os.WriteFile(file, []byte(`{"offsets": []}`), 0o644)
	for _, c := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"reset", "--url", srv.URL, "--connector", "c", "--file", file}, []string{"--file", "offsets reset", "offsets apply --file " + file}},
		{[]string{"--file", file, "reset", "--url", srv.URL, "--connector", "c"}, []string{"--file", "offsets apply --file"}},
		{[]string{"export", "--url", srv.URL, "--connector", "c", "--file", "/nonexistent-dir/x.json"}, []string{"--file", "/nonexistent-dir", "no such file"}},
		{[]string{"export", "--url", srv.URL, "--connector", "c", "--file", file + "/x.json"}, []string{"--file", "is not a directory"}},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"offsets"}, c.args...), nil, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != exitcode.Config {
			t.Errorf("offsets %q: exit %d, want 2\n%s", c.args, code, out)
		}
		for _, w := range c.wants {
			if !strings.Contains(out, w) {
				t.Errorf("offsets %q: output lacks %q\n%s", c.args, w, out)
			}
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached Connect", n)
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
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

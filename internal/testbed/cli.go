package testbed

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The helpers every package's CLI scenarios use: run the built binary,
// check its words, read a doctor document. One home, so that a scenario
// package holds its scenarios and nothing else.

// RunCLI runs binary with args and env to completion within 2 minutes and
// returns its exit code and combined output; a binary that cannot be run
// ends the test.
func RunCLI(t testing.TB, binary string, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, out, err := Run(ctx, binary, args, env)
	if err != nil {
		t.Fatalf("connect-init %v: %v\n%s", args, err, out)
	}
	return code, out
}

// MustContain reports every want that out (named what) lacks, with the
// end of out.
func MustContain(t testing.TB, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, Tail(out, 6000))
		}
	}
}

// Tail is the last n bytes of s.
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// DoctorJSON runs `doctor --json` and decodes its report, the result of the
// JSON envelope (the output
// also holds the log lines on stderr); no document ends the test.
func DoctorJSON(t testing.TB, binary string, env []string) (int, map[string]any, string) {
	t.Helper()
	code, out := RunCLI(t, binary, env, "doctor", "--json")
	start := strings.Index(out, "{\n")
	if start < 0 {
		start = strings.Index(out, "{")
	}
	var doc map[string]any
	if start < 0 || json.Unmarshal([]byte(out[start:strings.LastIndex(out, "}")+1]), &doc) != nil {
		t.Fatalf("doctor --json printed no document (exit %d):\n%s", code, out)
	}
	// The report is the result of connect-init's JSON envelope
	// (docs/json.md); with bad settings there is none.
	report, _ := doc["result"].(map[string]any)
	if report == nil {
		report = map[string]any{}
	}
	return code, report, out
}

// Findings maps "id/subject" to each finding of a doctor document.
func Findings(doc map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	fs, _ := doc["findings"].([]any)
	for _, f := range fs {
		m, _ := f.(map[string]any)
		id, _ := m["id"].(string)
		subject, _ := m["subject"].(string)
		out[id+"/"+subject] = m
	}
	return out
}

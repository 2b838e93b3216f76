package exitcode

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the exit code tables of docs/exit-codes.md from Tables")

const (
	docsPath  = "../docs/exit-codes.md"
	beginMark = "<!-- exit code tables: generated from exitcode.Tables(); go test ./exitcode -run TestDocsTables -update -->\n"
	endMark   = "<!-- end of exit code tables -->"
)

// TestDocsTables keeps docs/exit-codes.md the tables of the code: a code
// added to a command without its docs fails here.
func TestDocsTables(t *testing.T) {
	b, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, beginMark), strings.Index(doc, endMark)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q ... %q", docsPath, beginMark, endMark)
	}
	got, want := doc[i+len(beginMark):j], "\n"+Markdown()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(docsPath, []byte(doc[:i+len(beginMark)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the exit code tables of %s differ from exitcode.Tables (go test ./exitcode -run TestDocsTables -update rewrites them):\n--- docs\n%s\n--- code\n%s", docsPath, got, want)
}

// TestTables holds the promises machines rely on.
func TestTables(t *testing.T) {
	seen := map[string]bool{}
	for _, tb := range Tables() {
		if seen[tb.Command] {
			t.Errorf("%s has two tables", tb.Command)
		}
		seen[tb.Command] = true
		codes := map[int]bool{}
		for _, c := range tb.Codes {
			if codes[c.Code] {
				t.Errorf("%s: code %d twice", tb.Command, c.Code)
			}
			codes[c.Code] = true
			if strings.TrimSpace(c.Means) == "" {
				t.Errorf("%s: code %d means nothing", tb.Command, c.Code)
			}
			if c.Code == 2 && tb.Command != "healthcheck" && !strings.Contains(c.Means, "bad") {
				t.Errorf("%s: 2 is bad input for every command, got %q", tb.Command, c.Means)
			}
		}
	}
	hc, ok := For("healthcheck")
	if !ok {
		t.Fatal("no healthcheck table")
	}
	for _, c := range hc.Codes {
		if c.Code != OK && c.Code != Unhealthy {
			t.Errorf("healthcheck exits %d: Docker's HEALTHCHECK knows only 0 and 1 (2 is reserved)", c.Code)
		}
	}
	ap, _ := For("apply")
	if !ap.Has(ChangesPending) || ap.Has(2) && strings.Contains(ap.Meaning(2), "pending") {
		t.Errorf("apply: changes pending must be 3, bad input 2: %+v", ap)
	}
	if lk, ok := For("lock"); !ok || lk.Command != "lock acquire" {
		t.Errorf("For(lock) = %+v, %v; want lock acquire's table", lk, ok)
	}
}

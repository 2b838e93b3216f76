package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestDependenciesDoc keeps docs/dependencies.md the list of the modules
// connect-init and its test harness really use: every module go.mod
// requires directly has a row (and no row names a module go.mod does not
// require), and every module linked into the binary (go list -deps) is
// named on the page, so a new import cannot arrive unexplained.
func TestDependenciesDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/dependencies.md")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	required := map[string]bool{}
	direct := map[string]bool{}
	for _, l := range strings.Split(string(mod), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "require "))
		if len(f) < 2 || !strings.Contains(f[0], ".") || f[0] == "module" || f[0] == "go" {
			continue
		}
		required[f[0]] = true
		if !strings.Contains(l, "// indirect") {
			direct[f[0]] = true
		}
	}
	if len(direct) == 0 {
		t.Fatal("go.mod requires nothing directly: the parser is broken")
	}
	// The table's rows: | `module`, `module` | why |
	rows := map[string]bool{}
	cell := regexp.MustCompile("`([a-z0-9.-]+\\.[a-z]+/[^`]+)`")
	for _, l := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(l, "| `") {
			continue
		}
		first := strings.Split(l, "|")[1]
		for _, m := range cell.FindAllStringSubmatch(first, -1) {
			rows[m[1]] = true
		}
	}
	for m := range direct {
		if !rows[m] {
			t.Errorf("go.mod requires %s, which no row of docs/dependencies.md explains", m)
		}
	}
	for m := range rows {
		if !required[m] {
			t.Errorf("docs/dependencies.md has a row for %s, which go.mod does not require", m)
		}
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	linked := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		linked[m] = true
	}
	if !linked["github.com/IBM/sarama"] {
		t.Fatalf("go list -deps does not list sarama: %q", out)
	}
	for m := range linked {
		if !strings.Contains(string(doc), "`"+m+"`") {
			t.Errorf("%s is linked into the binary but docs/dependencies.md does not name it", m)
		}
	}
}

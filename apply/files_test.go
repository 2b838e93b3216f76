package apply

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadForms(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "wrapped.json", `{"name": "w", "state": "Paused", "config": {"connector.class": "C", "tasks.max": 2, "x.enabled": true, "db.password": "${file:/run/secrets/db:password}"}}`)
	write(t, dir, "bare.json", `{"connector.class": "C", "topic": "t"}`)
	write(t, dir, "props.properties", "# a comment\nconnector.class = C\nfile=/tmp/in\\\n.txt\nname=from-props\n")
	write(t, dir, "README.md", "not a definition")
	write(t, dir, ".hidden.json", "{")
	os.Mkdir(filepath.Join(dir, "..data"), 0o755)
	conns, skipped, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(conns) != 3 || strings.Join(skipped, ",") != "README.md" {
		t.Fatalf("conns %+v skipped %v", conns, skipped)
	}
	byName := map[string]Connector{}
	for _, c := range conns {
		byName[c.Name] = c
	}
	w := byName["w"]
	if w.State != StatePaused || w.Config["tasks.max"] != "2" || w.Config["x.enabled"] != "true" || w.Config["name"] != "w" || w.Config["db.password"] != "${file:/run/secrets/db:password}" {
		t.Errorf("wrapped: %+v", w)
	}
	if b := byName["bare"]; b.Config["topic"] != "t" || b.Config["name"] != "bare" {
		t.Errorf("bare config named by its file: %+v", b)
	}
	p := byName["from-props"]
	if p.Config["file"] != "/tmp/in.txt" || p.Where("file") != filepath.Join(dir, "props.properties")+":3" {
		t.Errorf("properties: %+v at %s", p.Config, p.Where("file"))
	}
}

func TestLoadErrorsNameFileAndLine(t *testing.T) {
	cases := []struct {
		name, content string
		line          int
		want          string
	}{
		{"syntax.json", "{\n \"name\": \"a\",\n \"config\": {\"connector.class\": \"C\",,}\n}", 3, "not valid JSON"},
		{"null.json", "{\"connector.class\": \"C\",\n \"topic\": null}", 2, `config key "topic"`},
		{"state.json", "{\"name\": \"a\",\n \"state\": \"sleeping\", \"config\": {\"connector.class\": \"C\"}}", 2, "running, paused or stopped"},
		{"unknown.json", "{\"name\": \"a\", \"config\": {\"connector.class\": \"C\"},\n \"initial_state\": \"PAUSED\"}", 2, `unknown field "initial_state"`},
		{"noclass.json", "{\"name\": \"a\", \"config\": {\"topic\": \"t\"}}", 0, "connector.class is missing"},
		{"dup.json", "{\"connector.class\": \"C\",\n\"topic\": \"a\",\n\"topic\": \"b\"}", 3, `"topic" is given twice`},
		{"badunicode.properties", "connector.class=C\nx=\\u12G4\n", 2, ""},
		{"mismatch.json", "{\"name\": \"a\", \"config\": {\"connector.class\": \"C\",\n \"name\": \"b\"}}", 2, "differs from name"},
		{"trailing.json", "{\"connector.class\": \"C\"}\n{}", 2, "not valid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := write(t, dir, c.name, c.content)
			_, _, err := Load(dir)
			fe, ok := err.(*FileError)
			if !ok {
				t.Fatalf("Load = %v, want a *FileError", err)
			}
			if fe.File != p || fe.Line != c.line || !strings.Contains(fe.Problem, c.want) {
				t.Errorf("got %s (line %d), want %s:%d containing %q", fe, fe.Line, p, c.line, c.want)
			}
			if c.line > 0 && !strings.HasPrefix(fe.Error(), p+":") {
				t.Errorf("message %q does not start with file:line", fe.Error())
			}
		})
	}
}

func TestLoadDuplicateNamesAndMissingDir(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.json", `{"name": "same", "config": {"connector.class": "C"}}`)
	write(t, dir, "b.properties", "name=same\nconnector.class=C\n")
	if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "a.json defines too") {
		t.Errorf("duplicate: %v", err)
	}
	if _, _, err := Load(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "cannot read the connectors directory") {
		t.Errorf("missing dir: %v", err)
	}
}

// TestLoadReportsEveryBadFile: every bad file of a directory is reported
// in one Load, each with its file and line, and no connector is returned
// (the good file among them is not applied alone).
func TestLoadReportsEveryBadFile(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "a.json", "{\n \"name\": \"a\",\n \"confg\": {\"connector.class\": \"C\"}\n}\n")
	write(t, dir, "b.json", `{"connector.class": "C"}`)
	c := write(t, dir, "c.properties", "name=c\nx=\\u12G4\n")
	d := write(t, dir, "d.properties", "name=b\nconnector.class=C\n")
	conns, _, err := Load(dir)
	if conns != nil {
		t.Errorf("Load returned %d connectors beside its errors", len(conns))
	}
	var many FileErrors
	if !errors.As(err, &many) || len(many) != 3 {
		t.Fatalf("Load = %v, want 3 FileErrors", err)
	}
	want := []struct {
		file string
		line int
		has  string
	}{{a, 3, `unknown field "confg"`}, {c, 2, ""}, {d, 0, `defines connector "b", which ` + filepath.Join(dir, "b.json") + " defines too"}}
	for i, w := range want {
		if many[i].File != w.file || many[i].Line != w.line || !strings.Contains(many[i].Problem, w.has) {
			t.Errorf("error %d = %s (line %d), want %s:%d %q", i, many[i], many[i].Line, w.file, w.line, w.has)
		}
	}
	var first *FileError
	if !errors.As(err, &first) || first.File != a {
		t.Errorf("errors.As finds %v, want the first file's error", first)
	}
	if got := EachFileError(err); len(got) != 3 {
		t.Errorf("EachFileError = %d errors", len(got))
	}
	if !strings.Contains(err.Error(), a+":3:") || !strings.Contains(err.Error(), c+":2:") {
		t.Errorf("message %q does not name every file", err)
	}
}

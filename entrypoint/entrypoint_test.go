package entrypoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveFindsExecutableOnEnvironPath(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "start-worker")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Resolve([]string{"start-worker", "--flag"}, []string{"PATH=/nonexistent:" + dir, "CONNECT_INIT_LOCK=false", "CONNECT_GROUP_ID=g"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != tool || c.Argv[0] != "start-worker" || c.Argv[1] != "--flag" {
		t.Fatalf("resolved %+v", c)
	}
	if strings.Contains(strings.Join(c.Env, "\n"), "CONNECT_INIT_") || len(c.Env) != 2 {
		t.Fatalf("environment not filtered: %v", c.Env)
	}
}

func TestResolveRejectsBadCommands(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-exec")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string][]string{
		"does not exist":    {filepath.Join(dir, "missing")},
		"not executable":    {notExec},
		"is a directory":    {dir},
		"not found on PATH": {"no-such-command-anywhere"},
	}
	for want, argv := range cases {
		_, err := Resolve(argv, []string{"PATH=" + dir})
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want an entrypoint.Error containing %q, got %v", argv, want, err)
		}
	}
}

func TestResolveDefaultsToConfluentRun(t *testing.T) {
	_, err := Resolve(nil, []string{"PATH=/bin"})
	if err == nil && !fileExists(DefaultCommand()[0]) {
		t.Fatal("missing default command must be an error")
	}
	if err != nil && !strings.Contains(err.Error(), DefaultCommand()[0]) {
		t.Fatalf("error does not name the default command: %v", err)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

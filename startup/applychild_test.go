package startup

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// TestStartApplyChild: with CONNECT_INIT_CONNECTORS_DIR, the exec step
// starts `connect-init apply --wait-local` with run's whole environment
// (CONNECT_INIT_* included), while the worker's command keeps its filtered
// one; without it nothing is started.
func TestStartApplyChild(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(dir, "record")
	script := filepath.Join(dir, "fake-connect-init")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n{ echo \"$@\"; env; } > "+record+".tmp && mv "+record+".tmp "+record+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	executable := func() (string, error) { return script, nil }
	var started bytes.Buffer
	log := slog.New(slog.NewTextHandler(&started, nil))

	env := []string{"PATH=/usr/bin:/bin", "CONNECT_INIT_CONNECTORS_DIR=/etc/connectors", "CONNECT_GROUP_ID=g"}
	s, err := settings.LoadSettings(env)
	if err != nil {
		t.Fatal(err)
	}
	s.Flags = map[string]string{}
	startApplyChild(&state{env: env, settings: s}, executable, log)
	deadline := time.Now().Add(10 * time.Second)
	var got []byte
	for {
		if got, err = os.ReadFile(record); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never ran")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(started.String(), "started the connector apply beside the worker") {
		t.Errorf("log: %s", started.String())
	}
	args, envOut, _ := strings.Cut(string(got), "\n")
	if !strings.HasPrefix(args, "apply --wait-local --dir /etc/connectors ") {
		t.Errorf("child args %q", args)
	}
	if !strings.Contains(envOut, "CONNECT_INIT_CONNECTORS_DIR=/etc/connectors") || !strings.Contains(envOut, "CONNECT_GROUP_ID=g") {
		t.Errorf("child env lacks run's settings:\n%s", envOut)
	}
	if strings.Contains(strings.Join(workerconfig.WithoutOwn(env), "\n"), "CONNECT_INIT_") {
		t.Error("the worker's environment would carry CONNECT_INIT_*")
	}

	// Without the directory nothing starts: Start is synchronous, so the
	// absence of its log event is proof enough, without waiting.
	var logged bytes.Buffer
	s.ConnectorsDir = ""
	startApplyChild(&state{env: env, settings: s}, os.Executable, slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if logged.Len() != 0 {
		t.Errorf("without CONNECT_INIT_CONNECTORS_DIR: %s", logged.String())
	}
}

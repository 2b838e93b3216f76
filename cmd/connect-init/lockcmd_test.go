package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/exitcode"
)

// workerEnv is a minimal worker configuration in CONNECT_* variables.
var workerEnv = []string{
	"CONNECT_BOOTSTRAP_SERVERS=127.0.0.1:1",
	"CONNECT_GROUP_ID=g",
	"CONNECT_CONFIG_STORAGE_TOPIC=c",
	"CONNECT_OFFSET_STORAGE_TOPIC=o",
	"CONNECT_STATUS_STORAGE_TOPIC=s",
	"CONNECT_KEY_CONVERTER=x", "CONNECT_VALUE_CONVERTER=x",
	"CONNECT_REST_ADVERTISED_HOST_NAME=worker-1",
}

func TestLockCommandUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"lock"}, {"lock", "release"}, {"lock", "acquire", "extra"}, {"lock", "acquire", "--nope"}} {
		var stderr bytes.Buffer
		if code := run(context.Background(), args, workerEnv, io.Discard, &stderr); code != exitcode.Config {
			t.Errorf("%q: exit %d, want %d (%s)", args, code, exitcode.Config, stderr.String())
		}
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"lock", "acquire"}, append(workerEnv, "CONNECT_INIT_LOCK_LEASE=soon"), io.Discard, &stderr); code != exitcode.Config ||
		!strings.Contains(stderr.String(), "CONNECT_INIT_LOCK_LEASE") {
		t.Errorf("bad lease: exit %d, %s", code, stderr.String())
	}
}

// When the worker dies (stdin ends) while the child still waits, the child
// gives up at once rather than at its timeout.
func TestLockCommandStopsWhenTheWorkerIsGone(t *testing.T) {
	var stderr bytes.Buffer
	c := newCLI(append(workerEnv, "CONNECT_INIT_TIMEOUT=1h"), io.Discard, &stderr)
	c.stdin = strings.NewReader("")
	code := c.run(context.Background(), []string{"lock", "acquire", "--watch-stdin"})
	if code != exitcode.Failed {
		t.Errorf("exit %d, want %d", code, exitcode.Failed)
	}
	if !strings.Contains(stderr.String(), "the worker exited while it waited for the startup lock") {
		t.Errorf("no withdrawal message:\n%s", stderr.String())
	}
}

// A bad lock mode is exit 2 before any gate (the brokers here do not exist:
// a gate would wait for the hour-long timeout).
func TestRunRejectsBadLockModeBeforeTheGates(t *testing.T) {
	var stderr bytes.Buffer
	env := append(append([]string(nil), workerEnv...), "CONNECT_INIT_TIMEOUT=1h", "CONNECT_INIT_LOCK_MODE=later", "PATH=/bin:/usr/bin")
	if code := run(context.Background(), []string{"run", "--", "true"}, env, io.Discard, &stderr); code != exitcode.Config {
		t.Errorf("exit %d, want %d", code, exitcode.Config)
	}
	if !strings.Contains(stderr.String(), "CONNECT_INIT_LOCK_MODE must be auto, worker or exec") {
		t.Errorf("stderr does not name the setting:\n%s", stderr.String())
	}
}

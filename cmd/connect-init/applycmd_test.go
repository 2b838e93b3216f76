package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/exitcode"
)

// TestApplyBadInput: every bad flag or file is exit 2 naming what the user
// set, before any connection (the bootstrap server counts them).
func TestApplyBadInput(t *testing.T) {
	bootstrap, conns := countingListener(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	os.Mkdir(bad, 0o755)
	badFile := filepath.Join(bad, "typo.json")
	os.WriteFile(badFile, []byte("{\n \"name\": \"x\",\n \"config\": {\"connector.class\": \"C\" \"topic\": \"t\"}\n}\n"), 0o644)
	good := filepath.Join(dir, "good")
	os.Mkdir(good, 0o755)
	os.WriteFile(filepath.Join(good, "ok.json"), []byte(`{"connector.class": "C", "db.password": "S3CRET-MARKER"}`), 0o644)
	// A directory whose only file is YAML defines nothing: a prune of it
	// is refused.
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	os.WriteFile(filepath.Join(empty, "jdbc.yaml"), []byte("name: jdbc\nconfig:\n  connector.class: C\n"), 0o644)
	typo := filepath.Join(dir, "typo")
	os.Mkdir(typo, 0o755)
	typoFile := filepath.Join(typo, "t.json")
	os.WriteFile(typoFile, []byte("{\n \"name\": \"t\",\n \"confg\": {\"connector.class\": \"C\"}\n}\n"), 0o644)
	// Two bad files and a good one: both bad files are named in one run.
	twoBad := filepath.Join(dir, "twobad")
	os.Mkdir(twoBad, 0o755)
	twoBadA := filepath.Join(twoBad, "a.json")
	os.WriteFile(twoBadA, []byte("{\n \"name\": \"a\",\n \"confg\": {\"connector.class\": \"C\"}\n}\n"), 0o644)
	twoBadB := filepath.Join(twoBad, "b.properties")
	os.WriteFile(twoBadB, []byte("name=b\ntopic=t\n"), 0o644)
	os.WriteFile(filepath.Join(twoBad, "c.json"), []byte(`{"connector.class": "C"}`), 0o644)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	env := []string{"CONNECT_BOOTSTRAP_SERVERS=" + bootstrap, "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_INIT_IMAGE=confluent-dub",
		"CONNECT_KEY_CONVERTER=x", "CONNECT_VALUE_CONVERTER=x", "CONNECT_REST_ADVERTISED_HOST_NAME=w"}
	for _, c := range []struct {
		args  []string
		env   []string
		wants []string
	}{
		{args: nil, wants: []string{"CONNECT_INIT_CONNECTORS_DIR", "is not set"}},
		{args: []string{"--dir", filepath.Join(dir, "missing")}, wants: []string{filepath.Join(dir, "missing"), "cannot read the connectors directory", "--dir"}},
		{env: []string{"CONNECT_INIT_CONNECTORS_DIR=" + bad}, wants: []string{badFile + ":3:", "read from the directory CONNECT_INIT_CONNECTORS_DIR names"}},
		{args: []string{"--dir", bad}, wants: []string{badFile + ":3:", "read from the directory --dir names"}},
		{args: []string{"--dir", good, "--wait=-1s"}, wants: []string{"--wait", "negative"}},
		{args: []string{"--dir", good, "--url", "ftp://x"}, wants: []string{"--url", "scheme"}},
		{args: []string{"--dir", good, "--write-timeout=0s"}, wants: []string{"--write-timeout", "not positive"}},
		{args: []string{"--dir", good, "--watch", "--dry-run"}, wants: []string{"--watch", "--dry-run"}},
		{args: []string{"--dir", good, "--watch", "--max-restarts=0"}, wants: []string{"--max-restarts", "positive"}},
		{args: []string{"--dir", good, "--watch", "--watch-interval=0s"}, wants: []string{"flag=--watch-interval", "positive"}},
		{args: []string{"--dir", good, "--watch"}, env: []string{"CONNECT_INIT_APPLY_RESTART_BACKOFF=-1m"}, wants: []string{"setting=CONNECT_INIT_APPLY_RESTART_BACKOFF", "positive"}},
		{args: []string{"--dir", good}, env: []string{"CONNECT_INIT_APPLY_WATCH_INTERVAL=soon"}, wants: []string{"CONNECT_INIT_APPLY_WATCH_INTERVAL", "cannot be parsed"}},
		{args: []string{"--dir", good, "--url", "http://x", "--wait-local"}, wants: []string{"--url", "--wait-local"}},
		{args: []string{"--dir", good, "--nope"}, wants: []string{"--nope is not a flag of connect-init apply"}},
		{args: []string{"--dir", good, "extra"}, wants: []string{"takes no arguments"}},
		{args: []string{"--dir", good, "--json"}, wants: []string{"--json", "without --dry-run"}},
		{args: []string{"--dir", good, "--metrics-addr=:9464"}, wants: []string{"--metrics-addr", "without --watch"}},
		{args: []string{"--dir", good, "--watch", "--metrics-addr=9464"}, wants: []string{"--metrics-addr", "not host:port"}},
		{args: []string{"--dir", good, "--watch", "--metrics-addr=" + busy.Addr().String()}, wants: []string{"flag=--metrics-addr", "address already in use"}},
		{args: []string{"--dir", good, "--detailed-exitcode"}, wants: []string{"--detailed-exitcode", "without --dry-run"}},
		{args: []string{"--dir", good, "--allow-empty-prune"}, wants: []string{"--allow-empty-prune", "without --prune"}},
		{args: []string{"--dir", empty, "--prune"}, wants: []string{"refusing to prune", "defines no connector", "--allow-empty-prune", "jdbc.yaml", "setting=--dir"}},
		{args: []string{"--dir", empty, "--prune", "--watch"}, wants: []string{"refusing to prune"}},
		{args: []string{"--dir", typo}, wants: []string{typoFile + ":3:", `unknown field \"confg\"`}},
		{args: []string{"--dir", twoBad}, wants: []string{twoBadA + ":3:", `unknown field \"confg\"`, twoBadB + ": connector.class is missing", "bad_files=2"}},
		{env: []string{"CONNECT_INIT_CONNECTORS_DIR=" + twoBad}, args: []string{"--url", "http://127.0.0.1:1", "--dry-run"}, wants: []string{twoBadA + ":3:", twoBadB}},
		{args: []string{"--dir", good}, env: []string{"CONNECT_GROUP_ID="}, wants: []string{"group.id"}},
		// Incomplete worker settings are a mistake to name, not a CI runner:
		// --url does not turn them into an apply through the REST API alone.
		{args: []string{"--dir", good, "--url", "http://127.0.0.1:1"}, env: []string{"CONNECT_GROUP_ID="}, wants: []string{"group.id"}},
		{args: []string{"--dir", good, "--url", "https://127.0.0.1:1", "--cacert", filepath.Join(dir, "missing.pem")}, wants: []string{"flag=--cacert", "cannot be read"}},
		{args: []string{"--dir", good, "--url", "https://127.0.0.1:1", "--cert", badFile}, wants: []string{"CONNECT_INIT_REST_KEY_FILE", "is not set, but --cert is"}},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"apply"}, c.args...), append(append([]string{}, env...), c.env...), &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != exitcode.Config {
			t.Errorf("apply %q %q: exit %d, want 2\n%s", c.args, c.env, code, out)
		}
		for _, w := range c.wants {
			if !strings.Contains(out, w) {
				t.Errorf("apply %q %q: output lacks %q\n%s", c.args, c.env, w, out)
			}
		}
		if strings.Contains(out, "S3CRET-MARKER") {
			t.Errorf("apply %q: a secret was printed\n%s", c.args, out)
		}
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("bad input opened %d connections to the bootstrap server", n)
	}
}

func TestPrefixWriter(t *testing.T) {
	var b bytes.Buffer
	p := &prefixWriter{w: &b, prefix: "> "}
	p.Write([]byte("one\ntw"))
	p.Write([]byte("o\nthree"))
	p.flush()
	if b.String() != "> one\n> two\n> three\n" {
		t.Errorf("got %q", b.String())
	}
}

// TestApplyInterrupted: SIGTERM while apply waits is 128+15, as for run.
func TestApplyInterrupted(t *testing.T) {
	bootstrap, _ := countingListener(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.json"), []byte(`{"connector.class": "C"}`), 0o644)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&entrypoint.SignalError{Signal: syscall.SIGTERM})
	var stderr bytes.Buffer
	// A directory whose only file is YAML defines nothing: a prune of it
	// is refused.
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	os.WriteFile(filepath.Join(empty, "jdbc.yaml"), []byte("name: jdbc\nconfig:\n  connector.class: C\n"), 0o644)
	typo := filepath.Join(dir, "typo")
	os.Mkdir(typo, 0o755)
	typoFile := filepath.Join(typo, "t.json")
	os.WriteFile(typoFile, []byte("{\n \"name\": \"t\",\n \"confg\": {\"connector.class\": \"C\"}\n}\n"), 0o644)
	env := []string{"CONNECT_BOOTSTRAP_SERVERS=" + bootstrap, "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_KEY_CONVERTER=x", "CONNECT_VALUE_CONVERTER=x"}
	if code := run(ctx, []string{"apply", "--dir", dir}, env, io.Discard, &stderr); code != 128+15 {
		t.Errorf("exit %d, want 143\n%s", code, stderr.String())
	}
}

// TestDryRunURLUnreachable: --dry-run --json --url of a worker that does
// not answer exits 1 with one JSON document naming the error on stdout,
// and makes no connection to the brokers (it needs only the REST API).
func TestDryRunURLUnreachable(t *testing.T) {
	bootstrap, conns := countingListener(t)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + dead.Addr().String()
	dead.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.json"), []byte(`{"connector.class": "C"}`), 0o644)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"apply", "--dir", dir, "--dry-run", "--json", "--url", url}, []string{"CONNECT_BOOTSTRAP_SERVERS=" + bootstrap}, &stdout, &stderr)
	var doc struct {
		Planned bool   `json:"planned"`
		Target  string `json:"target"`
	}
	env := decodeEnvelope(t, stdout.String(), &doc)
	if code != exitcode.Failed || env.ExitCode != code || len(env.Errors) != 1 || doc.Planned || doc.Target != url || strings.Contains(stdout.String(), "changes_pending") {
		t.Fatalf("exit %d, stdout %q\n%s", code, stdout.String(), stderr.String())
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("a dry run through --url opened %d connections to the bootstrap server", n)
	}
}

// silentListener accepts connections and never answers on them: a worker
// whose REST API hangs.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// TestApplyURLHonoursTimeout: apply --url (a dry run, and an apply from a
// runner without worker settings) gives up on a worker that accepts and
// never answers when --timeout or CONNECT_INIT_TIMEOUT runs out, not after
// the REST client's own 10 s per attempt, and says which setting bounded
// it (issue 48).
func TestApplyURLHonoursTimeout(t *testing.T) {
	url := silentListener(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.json"), []byte(`{"name": "ok", "config": {"connector.class": "C"}}`), 0o644)
	for _, c := range []struct {
		env     []string
		args    []string
		setting string
	}{
		{nil, []string{"--dry-run", "--timeout=300ms"}, "setting=--timeout"},
		{[]string{"CONNECT_INIT_TIMEOUT=300ms"}, []string{"--dry-run"}, "setting=CONNECT_INIT_TIMEOUT"},
		{[]string{"CONNECT_INIT_TIMEOUT=300ms"}, nil, "setting=CONNECT_INIT_TIMEOUT"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"apply", "--dir", dir, "--url", url}, c.args...)
		code := run(context.Background(), args, c.env, &stdout, &stderr)
		if code != exitcode.Failed || !strings.Contains(stderr.String(), "did not answer in time") ||
			!strings.Contains(stderr.String(), c.setting) || !strings.Contains(stderr.String(), "timeout=300ms") {
			t.Errorf("%v %q: exit %d, want 1 naming the timeout that ran out (%s):\n%s", c.env, args, code, c.setting, stderr.String())
		}
	}
}

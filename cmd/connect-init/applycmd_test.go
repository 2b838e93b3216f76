package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/restclient"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/startup"
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
	env := []string{"CONNECT_BOOTSTRAP_SERVERS=" + bootstrap, "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_INIT_IMAGE=confluent-dub",
		"CONNECT_KEY_CONVERTER=x", "CONNECT_VALUE_CONVERTER=x", "CONNECT_REST_ADVERTISED_HOST_NAME=w"}
	for _, c := range []struct {
		args  []string
		env   []string
		wants []string
	}{
		{args: nil, wants: []string{"CONNECT_INIT_CONNECTORS_DIR", "is not set"}},
		{args: []string{"--dir", filepath.Join(dir, "missing")}, wants: []string{"--dir", "cannot read the connectors directory"}},
		{env: []string{"CONNECT_INIT_CONNECTORS_DIR=" + bad}, wants: []string{badFile + ":3:", "setting=CONNECT_INIT_CONNECTORS_DIR"}},
		{args: []string{"--dir", bad}, wants: []string{badFile + ":3:", "setting=--dir"}},
		{args: []string{"--dir", good, "--wait=-1s"}, wants: []string{"--wait", "negative"}},
		{args: []string{"--dir", good, "--url", "ftp://x"}, wants: []string{"--url", "scheme"}},
		{args: []string{"--dir", good, "--url", "http://x", "--wait-local"}, wants: []string{"--url", "--wait-local"}},
		{args: []string{"--dir", good, "--nope"}, wants: []string{"flag provided but not defined: -nope"}},
		{args: []string{"--dir", good, "extra"}, wants: []string{"takes no arguments"}},
		{args: []string{"--dir", good}, env: []string{"CONNECT_GROUP_ID="}, wants: []string{"group.id"}},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"apply"}, c.args...), append(append([]string{}, env...), c.env...), &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != startup.ExitConfig {
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

func TestPeerURL(t *testing.T) {
	for in, want := range map[string]string{
		"connect-1":              "https://connect-1:9443/",
		"connect-1:8083":         "https://connect-1:8083/",
		"http://connect-2:8083/": "http://connect-2:8083/",
		" tasks.connect ":        "https://tasks.connect:9443/",
		"fd00::1":                "https://[fd00::1]:9443/",
	} {
		if got, err := peerURL(in, "https://me:9443/"); got != want || err != nil {
			t.Errorf("peerURL(%q) = %q, %v, want %q", in, got, err, want)
		}
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

// TestProveRefusesNonConnectAnswers: a listener that answers 200 on every
// path (connect-init's own pre-exec self-probe does) is not taken for the
// worker; only GET / with Connect's fields and our Kafka cluster id is.
func TestProveRefusesNonConnectAnswers(t *testing.T) {
	var root atomic.Value
	var healthy atomic.Bool
	root.Store("a-token-not-json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			io.WriteString(w, root.Load().(string))
			return
		}
		if r.URL.Path == "/health" && healthy.Load() {
			io.WriteString(w, `{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`)
			return
		}
		io.WriteString(w, "a-token-not-json")
	}))
	defer srv.Close()
	tg, err := restclient.Parse(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	f := &workerFinder{local: true, cfg: &settings.Config{GroupID: "g"}}
	rest := &restclient.Client{}
	why, err := f.prove(context.Background(), rest, tg, "our-cluster", nil)
	if err != nil || !strings.Contains(why, "not as Connect does") {
		t.Errorf("self-probe-like answer: %q, %v", why, err)
	}
	root.Store(`{"version":"4.3.1","commit":"c","kafka_cluster_id":"their-cluster"}`)
	if _, err := f.prove(context.Background(), rest, tg, "our-cluster", nil); err == nil || !strings.Contains(err.Error(), "their-cluster") {
		t.Errorf("another Kafka cluster: %v", err)
	}
	root.Store(`{"version":"4.3.1","commit":"c","kafka_cluster_id":"our-cluster"}`)
	why, err = f.prove(context.Background(), rest, tg, "our-cluster", nil)
	if err != nil || !strings.Contains(why, "without Connect's") {
		t.Errorf("Connect's GET / but a bare 200 on /health: %q, %v (want a reason to wait)", why, err)
	}
	if why := ready(context.Background(), rest, tg); why == "" {
		t.Error("a bare 200 on /health counts as ready")
	}
	healthy.Store(true)
	if why, err := f.prove(context.Background(), rest, tg, "our-cluster", nil); err != nil || why != "" {
		t.Errorf("Connect's GET / and /health: %q, %v (want ready)", why, err)
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
	env := []string{"CONNECT_BOOTSTRAP_SERVERS=" + bootstrap, "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s"}
	if code := run(ctx, []string{"apply", "--dir", dir}, env, io.Discard, &stderr); code != 128+15 {
		t.Errorf("exit %d, want 143\n%s", code, stderr.String())
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeConnect is Connect's REST API as apply uses it, served under a path
// prefix as a reverse proxy would, recording every request. Validation
// refuses a config holding the key "bad".
type fakeConnect struct {
	prefix string
	mu     sync.Mutex
	conns  map[string]map[string]string
	reqs   []string
}

func (f *fakeConnect) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reqs...)
}

// writes are the requests that change something (validation writes nothing).
func (f *fakeConnect) writes() []string {
	var w []string
	for _, r := range f.requests() {
		if !strings.HasPrefix(r, "GET ") && !strings.Contains(r, "/config/validate") {
			w = append(w, r)
		}
	}
	return w
}

func (f *fakeConnect) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, r.Method+" "+r.URL.Path)
	p, ok := strings.CutPrefix(r.URL.Path, f.prefix)
	if !ok {
		http.NotFound(w, r) // what a proxy answers outside its prefix
		return
	}
	body, _ := io.ReadAll(r.Body)
	parts := strings.Split(strings.Trim(p, "/"), "/")
	reply := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	switch {
	case r.Method == http.MethodGet && p == "/":
		reply(200, map[string]string{"version": "4.3.1", "commit": "c", "kafka_cluster_id": "fake-cluster"})
	case r.Method == http.MethodGet && p == "/health":
		reply(200, map[string]string{"status": "healthy", "message": "ok"})
	case r.Method == http.MethodGet && p == "/connectors":
		out := map[string]any{}
		for n, cfg := range f.conns {
			out[n] = map[string]any{"info": map[string]any{"name": n, "config": cfg, "tasks": []any{}},
				"status": map[string]any{"name": n, "connector": map[string]string{"state": "RUNNING", "worker_id": "w:8083"},
					"tasks": []any{map[string]any{"id": 0, "state": "RUNNING", "worker_id": "w:8083"}}}}
		}
		reply(200, out)
	case r.Method == http.MethodPut && len(parts) == 4 && parts[0] == "connector-plugins" && parts[3] == "validate":
		var cfg map[string]string
		json.Unmarshal(body, &cfg)
		var configs []any
		errs := 0
		for k := range cfg {
			var e []string
			if k == "bad" {
				e, errs = []string{"Invalid value for bad"}, errs+1
			}
			configs = append(configs, map[string]any{"definition": map[string]string{"name": k, "type": "STRING"}, "value": map[string]any{"name": k, "errors": e}})
		}
		reply(200, map[string]any{"name": parts[1], "error_count": errs, "configs": configs})
	case r.Method == http.MethodPost && p == "/connectors":
		var req struct {
			Name   string            `json:"name"`
			Config map[string]string `json:"config"`
		}
		json.Unmarshal(body, &req)
		f.conns[req.Name] = req.Config
		reply(201, map[string]any{"name": req.Name, "config": req.Config})
	case r.Method == http.MethodPut && len(parts) == 3 && parts[0] == "connectors" && parts[2] == "config":
		var cfg map[string]string
		json.Unmarshal(body, &cfg)
		_, existed := f.conns[parts[1]]
		f.conns[parts[1]] = cfg
		code := 201
		if existed {
			code = 200
		}
		reply(code, map[string]any{"name": parts[1], "config": cfg})
	case r.Method == http.MethodGet && len(parts) == 3 && parts[0] == "connectors" && parts[2] == "config":
		if cfg, ok := f.conns[parts[1]]; ok {
			reply(200, cfg)
		} else {
			reply(404, map[string]any{"error_code": 404, "message": "Connector " + parts[1] + " not found"})
		}
	case r.Method == http.MethodDelete && len(parts) == 2 && parts[0] == "connectors":
		delete(f.conns, parts[1])
		w.WriteHeader(204)
	default:
		reply(404, map[string]any{"error_code": 404, "message": "no such resource " + p})
	}
}

// TestApplyThroughRESTOnly: with --url and no worker setting at all (a CI
// runner), apply plans, validates, creates, updates and prunes through the
// REST API alone, under the URL's path prefix, and says in its output and
// its log that it writes without the lease; a dry run's log says what it
// would do, never what it did; a definition Connect refuses is exit 2 with
// no write; an empty prune is refused with no request at all.
func TestApplyThroughRESTOnly(t *testing.T) {
	fc := &fakeConnect{prefix: "/kafka-connect", conns: map[string]map[string]string{
		"old": {"connector.class": "C", "name": "old"},
		"upd": {"connector.class": "C", "name": "upd", "topic": "a"},
	}}
	srv := httptest.NewServer(fc)
	defer srv.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "new.json"), []byte(`{"connector.class": "C"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "upd.json"), []byte(`{"connector.class": "C", "topic": "b"}`), 0o644)
	url := srv.URL + "/kafka-connect/"
	env := []string{"PATH=/usr/bin"} // no CONNECT_* variable at all
	apply := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"apply", "--dir", dir, "--url", url}, args...), env, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	// The dry run: its log line cannot be read as done.
	code, out, logs := apply("--dry-run", "--prune")
	if code != 0 || !strings.Contains(out, "dry run: nothing was written") {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, out, logs)
	}
	if !strings.Contains(logs, `msg="apply planned (dry run, nothing written)"`) || !strings.Contains(logs, "would_create=1 would_update=1 unchanged=0 would_delete=1") ||
		strings.Contains(logs, "apply done") || strings.Contains(logs, "created=") {
		t.Errorf("dry run's log:\n%s", logs)
	}
	if w := fc.writes(); len(w) != 0 {
		t.Fatalf("the dry run wrote %q", w)
	}
	for _, r := range fc.requests() {
		if !strings.HasPrefix(strings.TrimPrefix(strings.TrimPrefix(r, "GET "), "PUT "), "/kafka-connect/") {
			t.Errorf("request outside the path prefix: %s", r)
		}
	}

	// A definition Connect refuses: exit 2, nothing written.
	bad := filepath.Join(dir, "zbad.json")
	os.WriteFile(bad, []byte(`{"connector.class": "C", "bad": "x"}`), 0o644)
	code, out, logs = apply("--prune", "--wait=0")
	if code != 2 || !strings.Contains(out, "Connect's validation refused") || len(fc.writes()) != 0 {
		t.Fatalf("refused: exit %d, writes %q\n%s\n%s", code, fc.writes(), out, logs)
	}
	os.Remove(bad)

	// The apply: created, updated, pruned, without the lease, said so.
	code, out, logs = apply("--prune", "--wait=0")
	if code != 0 {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, logs)
	}
	if !strings.Contains(out, "writing without the apply lease: ") || !strings.Contains(logs, `msg="writing without the apply lease"`) ||
		!strings.Contains(logs, "the apply lease is not taken") {
		t.Errorf("the missing lease is not said:\n%s\n%s", out, logs)
	}
	if !strings.Contains(logs, "created=1 updated=1 unchanged=0 deleted=1") {
		t.Errorf("log:\n%s", logs)
	}
	want := []string{"PUT /kafka-connect/connectors/new/config", "PUT /kafka-connect/connectors/upd/config", "DELETE /kafka-connect/connectors/old"}
	got := fc.writes()
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("writes %q lack %q", got, w)
		}
	}
	if fc.conns["upd"]["topic"] != "b" || fc.conns["new"] == nil || fc.conns["old"] != nil {
		t.Errorf("cluster after apply: %v", fc.conns)
	}

	// An empty prune is refused before any request.
	empty := t.TempDir()
	before := len(fc.requests())
	var stdout, stderr bytes.Buffer
	code = run(context.Background(), []string{"apply", "--dir", empty, "--url", url, "--prune"}, env, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "refusing to prune") || len(fc.requests()) != before {
		t.Errorf("empty prune: exit %d, %d requests\n%s", code, len(fc.requests())-before, stderr.String())
	}
}

// TestRESTOnlyPruneOfAnotherCluster: through the REST API alone nothing
// proves the URL reaches the cluster the files are for, so a prune that
// would delete in a cluster holding none of the directory's connectors (a
// typo in --url reaching another Connect cluster) is refused, exit 2,
// nothing written; without --prune the connectors are created, and then
// the prune goes ahead.
func TestRESTOnlyPruneOfAnotherCluster(t *testing.T) {
	fc := &fakeConnect{prefix: "", conns: map[string]map[string]string{"theirs": {"connector.class": "C", "name": "theirs"}}}
	srv := httptest.NewServer(fc)
	defer srv.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "mine.json"), []byte(`{"connector.class": "C"}`), 0o644)
	apply := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"apply", "--dir", dir, "--url", srv.URL, "--wait=0"}, args...), []string{"PATH=/usr/bin"}, &stdout, &stderr)
		return code, stdout.String() + stderr.String()
	}
	code, out := apply("--prune")
	if code != 2 || !strings.Contains(out, "refusing to prune through "+srv.URL) || !strings.Contains(out, "holds none of the 1 connectors") || len(fc.writes()) != 0 || fc.conns["theirs"] == nil {
		t.Fatalf("prune of another cluster: exit %d, writes %q\n%s", code, fc.writes(), out)
	}
	// The dry run refuses as the apply does (issue 48): its plan is what
	// the apply would do.
	if code, out := apply("--dry-run", "--prune"); code != 2 || !strings.Contains(out, "refusing to prune through "+srv.URL) || len(fc.writes()) != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	if code, out := apply(); code != 0 || fc.conns["mine"] == nil || fc.conns["theirs"] == nil {
		t.Fatalf("apply without --prune: exit %d\n%s", code, out)
	}
	if code, out := apply("--prune"); code != 0 || fc.conns["theirs"] != nil {
		t.Fatalf("prune once the cluster holds the directory's connector: exit %d\n%s", code, out)
	}
}

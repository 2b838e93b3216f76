package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/exitcode"
)

// TestHealthcheckReadsTheImagesSettings: on the Apache Kafka image the
// worker reads only its properties file, so a CONNECT_LISTENERS variable
// (a Kubernetes service link, a leftover) is not its listener; healthcheck
// asks the port in the file, as the worker binds it, not the one a
// CONNECT_* rule would read.
func TestHealthcheckReadsTheImagesSettings(t *testing.T) {
	worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`))
	}))
	defer worker.Close()
	decoy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer decoy.Close()
	file := filepath.Join(t.TempDir(), "connect-distributed.properties")
	props := "bootstrap.servers=kafka:9092\ngroup.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\nkey.converter=x\nvalue.converter=x\n" +
		"listeners=" + worker.URL + "\n"
	if err := os.WriteFile(file, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"CONNECT_INIT_IMAGE=apache", "CONNECT_INIT_WORKER_CONFIG=" + file, "CONNECT_LISTENERS=" + decoy.URL}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"healthcheck"}, env, &stdout, &stderr)
	if code != exitcode.OK || !strings.HasPrefix(stdout.String(), "healthy: GET /health answered 200") {
		t.Fatalf("exit %d: %s%s", code, stdout.String(), stderr.String())
	}
}

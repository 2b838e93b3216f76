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
	"testing"
	"time"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/settings"
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

// TestHealthcheckWithoutAdvertisedHost: the Swarm example's entrypoint
// exports CONNECT_REST_ADVERTISED_HOST_NAME (the task's own address) to
// the worker only; Docker runs the HEALTHCHECK with the container's
// environment, which lacks it. The worker is healthy all the same (it was
// "not healthy" for good, and Swarm's rolling update never went on).
func TestHealthcheckWithoutAdvertisedHost(t *testing.T) {
	worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`))
	}))
	defer worker.Close()
	env := []string{"CONNECT_INIT_IMAGE=confluent-dub", "CONNECT_BOOTSTRAP_SERVERS=kafka:9092", "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_KEY_CONVERTER=x", "CONNECT_VALUE_CONVERTER=x",
		"CONNECT_LISTENERS=" + worker.URL}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"healthcheck"}, env, &stdout, &stderr)
	if code != exitcode.OK || !strings.HasPrefix(stdout.String(), "healthy: GET /health answered 200") {
		t.Fatalf("exit %d: %s%s", code, stdout.String(), stderr.String())
	}
}

// TestHealthcheckExitsOnlyZeroOrOne: Docker's HEALTHCHECK reserves 2, so
// every bad input is 1 with a line saying why; -h is 0.
func TestHealthcheckExitsOnlyZeroOrOne(t *testing.T) {
	worker := []string{"CONNECT_BOOTSTRAP_SERVERS=127.0.0.1:1", "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_KEY_CONVERTER=x", "CONNECT_VALUE_CONVERTER=x",
		"CONNECT_LISTENERS=http://127.0.0.1:1"}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		code int
	}{
		{"bad flag", worker, []string{"--bogus"}, exitcode.Unhealthy},
		{"bad flag value", worker, []string{"--timeout=soon"}, exitcode.Unhealthy},
		{"an argument", worker, []string{"now"}, exitcode.Unhealthy},
		{"bad setting", append(append([]string{}, worker...), "CONNECT_INIT_TIMEOUT=-1s"), nil, exitcode.Unhealthy},
		{"unknown setting", append(append([]string{}, worker...), "CONNECT_INIT_TIMEOUTT=1s"), nil, exitcode.Unhealthy},
		{"no worker settings", nil, nil, exitcode.Unhealthy},
		{"worker not answering", worker, nil, exitcode.Unhealthy},
		{"help", worker, []string{"-h"}, exitcode.OK},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"healthcheck"}, tc.args...), tc.env, &stdout, &stderr)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d:\n%s%s", tc.name, code, tc.code, stdout.String(), stderr.String())
		}
		if code != exitcode.OK && !strings.Contains(stderr.String(), "not healthy: ") {
			t.Errorf("%s: no line says why it is not healthy:\n%s", tc.name, stderr.String())
		}
	}
}

// TestHealthcheckTimeout: --timeout given to healthcheck sets its bound
// (it used to be capped at 5s); the container's variable only shortens
// the 5s default, since its value is meant for the gates.
func TestHealthcheckTimeout(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		args []string
		want time.Duration
	}{
		{nil, nil, 5 * time.Second},
		{nil, []string{"--timeout=30s"}, 30 * time.Second},
		{[]string{"CONNECT_INIT_TIMEOUT=5m"}, nil, 5 * time.Second},
		{[]string{"CONNECT_INIT_TIMEOUT=2s"}, nil, 2 * time.Second},
		{[]string{"CONNECT_INIT_TIMEOUT=2s"}, []string{"--timeout=20s"}, 20 * time.Second},
	} {
		c := newCLI(tc.env, io.Discard, io.Discard)
		s, _, _, done, _ := c.bootstrap(command{name: settings.Healthcheck, usage: "healthcheck"}, tc.args, false)
		if got := healthcheckBound(s); done || got != tc.want {
			t.Errorf("env %q args %q: bound %s (done %v), want %s", tc.env, tc.args, got, done, tc.want)
		}
	}
}

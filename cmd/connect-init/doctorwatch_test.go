package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// signalWriter is a stderr that closes seen once a line holds want.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *signalWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(b), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestDoctorWatchFailedLookWithoutMetrics: doctor --watch without
// --metrics-addr says a look failed without naming a metric it does not
// serve (issue 52).
func TestDoctorWatchFailedLookWithoutMetrics(t *testing.T) {
	env := []string{"CONNECT_BOOTSTRAP_SERVERS=127.0.0.1:1", "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
		"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_KEY_CONVERTER=x", "CONNECT_VALUE_CONVERTER=x",
		"CONNECT_REST_ADVERTISED_HOST_NAME=worker-1", "CONNECT_INIT_TIMEOUT=1s"}
	stderr := &signalWriter{want: "the look failed", seen: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		var stdout bytes.Buffer
		done <- newCLI(env, &stdout, stderr).run(ctx, []string{"doctor", "--watch", "--interval=1h"})
	}()
	select {
	case <-stderr.seen:
	case <-time.After(60 * time.Second): // a bound on a broken test, not a wait for an outcome
		t.Error("no 'the look failed' event")
	}
	cancel()
	<-done
	if out := stderr.String(); strings.Contains(out, "connect_init_doctor_look_success") {
		t.Errorf("doctor --watch without --metrics-addr names a metric:\n%s", out)
	}
}

// TestDoctorWatchFlagsWithEveryProblem: doctor's watch flags are checked
// with the settings, every problem at once.
func TestDoctorWatchFlagsWithEveryProblem(t *testing.T) {
	env, conns := interfaceEnv(t)
	code, _, stderr := runIn(t, append(env, "CONNECT_INIT_TIMEOUT=abc"), "doctor", "--interval=500ms", "--metrics-addr=:9465")
	ev := errorEvents(stderr)
	if code != 2 || len(ev) != 4 || !strings.Contains(stderr, "flag=--metrics-addr") || !strings.Contains(stderr, "below 1s") ||
		!strings.Contains(stderr, "setting=CONNECT_INIT_TIMEOUT") {
		t.Errorf("exit %d, %d events; want 2 with 4 (--metrics-addr, --interval twice, CONNECT_INIT_TIMEOUT):\n%s", code, len(ev), stderr)
	}
	if n := conns(); n != 0 {
		t.Errorf("%d connections", n)
	}
}

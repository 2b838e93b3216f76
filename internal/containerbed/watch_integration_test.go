//go:build integration

package containerbed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSwarmInRunWatcher: two workers of one Swarm service run through
// connect-init with CONNECT_INIT_CONNECTORS_DIR (a bind mount) and
// CONNECT_INIT_APPLY_WATCH=true, what a Swarm user sets to keep connectors
// as code without an operator. The watcher beside the group's leader acts,
// the other stands by: a connector deleted by hand is put back once. When
// the leader's container is killed, the other worker's watcher takes over
// after the rebalance and puts the next deletion back.
func TestSwarmInRunWatcher(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	dir := filepath.Join(bed.Dir, "watch-connectors")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	def := `{"name": "watched", "config": {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": "/dev/null", "topic": "watched-t", "tasks.max": "1"}}`
	if err := os.WriteFile(filepath.Join(dir, "watched.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	// Each task advertises its own overlay address, as the example stack does.
	group := "watch"
	s := svc{name: group, replicas: 2, dnsrr: true, hostname: "connect-{{.Task.Slot}}", entrypoint: perTaskEntrypoint(t),
		env: workerEnv(group, "CONNECT_INIT_PEERS=tasks."+group+":8083", "CONNECT_INIT_TIMEOUT=3m",
			"CONNECT_INIT_CONNECTORS_DIR=/etc/connect-init/connectors", "CONNECT_INIT_APPLY_WATCH=true", "CONNECT_INIT_APPLY_WATCH_INTERVAL=2s"),
		mounts: []string{"type=bind,src=" + dir + ",dst=/etc/connect-init/connectors,readonly"}}
	s.create(t, ctx)
	ids, gen, leader := stableGroup(t, ctx, 2, group)
	t.Logf("2 workers in generation %d, leader %s", gen, leader)
	active, standby := activeWatcher(t, ctx, ids)
	exists := func(via string) bool {
		out, err := Exec(ctx, via, "bedctl", "http", "GET", "http://127.0.0.1:8083/connectors/watched/config")
		return err == nil && strings.HasPrefix(out, "200")
	}
	waitFor(t, ctx, "the in-run apply created the connector", func() bool { return exists(standby) })

	deleteWatched(t, ctx, standby)
	waitFor(t, ctx, "the active watcher put the connector back", func() bool {
		return hasMsg(ContainerLogs(ctx, active), "watch: put back")
	})
	if _, err := Docker(ctx, "kill", active); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	waitFor(t, ctx, "the other watcher became active", func() bool {
		return hasMsg(ContainerLogs(ctx, standby), "watch: active")
	})
	t.Logf("leader's container killed; the other watcher active %v later", time.Since(killed).Round(time.Second))
	if n := countMsg(ContainerLogs(ctx, active)+ContainerLogs(ctx, standby), "watch: put back"); n != 1 {
		t.Errorf("the first deletion was put back %d times, want once", n)
	}
	deleteWatched(t, ctx, standby)
	waitFor(t, ctx, "the new active watcher put the connector back", func() bool {
		return hasMsg(ContainerLogs(ctx, standby), "watch: put back") && exists(standby)
	})
	for _, c := range []string{active, standby} {
		t.Logf("%s:\n%s", c[:12], grepWatch(ContainerLogs(ctx, c)))
	}
}

// activeWatcher waits until one container's watcher says it is active and
// the other's that it stands by.
func activeWatcher(t *testing.T, ctx context.Context, ids []string) (active, standby string) {
	t.Helper()
	waitFor(t, ctx, "one active watcher and one standing by", func() bool {
		a, b := ContainerLogs(ctx, ids[0]), ContainerLogs(ctx, ids[1])
		if hasMsg(b, "watch: active") {
			a, b = b, a
			ids = []string{ids[1], ids[0]}
		}
		return hasMsg(a, "watch: active") && !hasMsg(b, "watch: active") && hasMsg(b, "watch: standing by")
	})
	return ids[0], ids[1]
}

// deleteWatched deletes the connector by hand through worker c.
func deleteWatched(t *testing.T, ctx context.Context, c string) {
	t.Helper()
	out, err := Exec(ctx, c, "bedctl", "http", "DELETE", "http://127.0.0.1:8083/connectors/watched")
	if err != nil || !strings.HasPrefix(out, "204") {
		t.Fatalf("DELETE /connectors/watched: %s %v", firstLine(out), err)
	}
}

// waitFor polls cond every second until it holds or ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("never: %s", what)
		case <-time.After(time.Second):
		}
	}
}

// grepWatch keeps the watcher's lines of a log.
func grepWatch(logs string) string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, `msg="watch: `) || strings.Contains(l, `"msg":"watch: `) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// hasMsg reports whether logs hold a line with message msg, in text or
// JSON form.
func hasMsg(logs, msg string) bool { return countMsg(logs, msg) > 0 }

// countMsg counts the lines of logs with message msg.
func countMsg(logs, msg string) int {
	return strings.Count(logs, `msg="`+msg+`"`) + strings.Count(logs, `"msg":"`+msg+`"`)
}

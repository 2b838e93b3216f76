//go:build integration

package apply_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// startWatchingWorker starts a worker of the package's group through
// `connect-init run` with CONNECT_INIT_CONNECTORS_DIR=dir and
// CONNECT_INIT_APPLY_WATCH=true, looking every second.
func startWatchingWorker(t *testing.T, name, dir string) *testbed.Worker {
	t.Helper()
	props, err := cluster.WorkerProps(groupProps())
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cluster.NewWorkerSpec(name, props, 0)
	if err != nil {
		t.Fatal(err)
	}
	env := append(append(append([]string{}, testbed.BaseEnv()...), testbed.EnvFromProps(props)...),
		"CONNECT_INIT_LOCK=false", "CONNECT_INIT_CONNECTORS_DIR="+dir, "CONNECT_INIT_APPLY_WATCH=true", "CONNECT_INIT_APPLY_WATCH_INTERVAL=1s")
	w, err := cluster.StartWorkerCommand(spec, append([]string{binary, "run", "--"}, spec.Argv...), env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(10 * time.Second) })
	return w
}

// deleteConnector deletes a connector by hand, as an operator would.
func deleteConnector(t *testing.T, via *testbed.Worker, name string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, via.Spec.RESTURL+"/connectors/"+name, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE %s answered %d", name, resp.StatusCode)
	}
}

const putBack = `process=apply connector=inrun-keep action=create`

// TestInRunWatchersOneActive: two workers started through `connect-init
// run` with CONNECT_INIT_APPLY_WATCH=true are the whole group. The watcher
// beside the group's leader acts, the other stands by: a connector deleted
// by hand is put back once, by the leader's watcher. When the leader's
// worker is killed, its watcher ends with it and the other worker's
// watcher takes over after the rebalance, and puts the next deletion back.
func TestInRunWatchersOneActive(t *testing.T) {
	ensureSecond(t)
	t.Cleanup(func() { ensureSecond(t) })
	// Only the watching workers in the group, so that one of them leads.
	second.Stop(10 * time.Second)
	worker.Stop(10 * time.Second)
	dir := filepath.Join(t.TempDir(), "connectors")
	writeFile(t, dir, "inrun-keep.json", sinkJSON("inrun-keep", seedTopic, filepath.Join(t.TempDir(), "keep.txt"), ""))
	ws := []*testbed.Worker{startWatchingWorker(t, "w5", dir), startWatchingWorker(t, "w6", dir)}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	for _, w := range ws {
		if err := w.WaitHealthy(ctx); err != nil {
			t.Fatal(err)
		}
	}
	waitGroup(t, 2)
	active, standby := leaderWatcher(t, ws)
	t.Logf("%s's watcher is active; %s's stands by", active.Spec.Name, standby.Spec.Name)

	deleteConnector(t, standby, "inrun-keep")
	waitLog(t, active.Process, putBack, time.Minute)
	active.Kill()
	waitLogAfterExit(t, active, "the watcher ends", 30*time.Second)
	killed := time.Now()
	waitLog(t, standby.Process, `msg="watch: active"`, 2*time.Minute)
	// Until now the other watcher stood by: the deletion was put back once.
	if n := active.CountInLog(putBack) + standby.CountInLog(putBack); n != 1 {
		t.Errorf("the connector was put back %d times, want once", n)
	}
	if standby.CountInLog(`msg="watch: drift"`) != 0 {
		t.Errorf("the standing-by watcher acted:\n%s", grepLines(standby.Log(), "watch:"))
	}
	t.Logf("%s killed; %s's watcher active %v later", active.Spec.Name, standby.Spec.Name, time.Since(killed).Round(100*time.Millisecond))
	deleteConnector(t, standby, "inrun-keep")
	waitLog(t, standby.Process, putBack, time.Minute)
	resp, err := http.Get(standby.Spec.RESTURL + "/connectors/inrun-keep/config")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("inrun-keep after the second repair: GET its config answered %d", resp.StatusCode)
	}
	t.Logf("the watchers' words:\n%s\n%s", grepLines(active.Log(), "watch: "), grepLines(standby.Log(), "watch: "))
}

// leaderWatcher waits until one watcher says it is active and every
// other that it stands by, and returns the active one's worker first.
func leaderWatcher(t *testing.T, ws []*testbed.Worker) (active, standby *testbed.Worker) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		a, s := ws[0], ws[1]
		if a.CountInLog(`msg="watch: active"`) == 0 {
			a, s = s, a
		}
		if a.CountInLog(`msg="watch: active"`) > 0 && s.CountInLog(`msg="watch: active"`) == 0 && s.CountInLog(`msg="watch: standing by"`) > 0 &&
			strings.Contains(s.Log(), "the group's leader is "+a.Spec.RESTURL) {
			return a, s
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("no single active watcher:\n%s\n%s", grepLines(ws[0].Log(), "watch: "), grepLines(ws[1].Log(), "watch: "))
	return nil, nil
}

// waitLogAfterExit waits until the log of an exited worker has substr:
// the in-run watcher outlives its worker by up to a second and writes to
// the same file.
func waitLogAfterExit(t *testing.T, w *testbed.Worker, substr string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(w.Log(), substr) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %s's log:\n%s", substr, w.Spec.Name, grepLines(w.Log(), "watch"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

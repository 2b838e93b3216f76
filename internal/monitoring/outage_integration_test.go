//go:build integration && monitoring

package monitoring

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// TestAlertsInOutage proves that the shipped rules stay loud when the
// cluster goes dark: the group's coordinator is lost (broker 3, its only
// replica, killed), then every broker stops. The watcher's looks fail, yet
// it keeps the last values it saw, so ConnectInitCoordinatorNotAvailable
// stays firing through the outage and ConnectInitLooksFailing pages for the
// outage itself, and no other alert pages. Then the watcher stops:
// ConnectInitWatcherAbsent fires. It measures each step (MEASURE lines) and
// takes about 8 minutes (the rules' thresholds are real): make monitoring.
func TestAlertsInOutage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 14*time.Minute)
	defer cancel()
	g, partition := groupOn(t, "outage", 3)
	env := watcherEnv(t, topicsOf(g, "a"))
	if code, out, err := testbed.Run(ctx, binary, []string{"prepare"}, env); err != nil || code != 0 {
		t.Fatalf("connect-init prepare: exit %d, %v:\n%s", code, err, out)
	}
	w := startWatcher(t, g, env, 2*time.Second)
	p := startPrometheus(t, strings.TrimSuffix(strings.TrimPrefix(w.url, "http://"), "/metrics"))
	waitLooks(ctx, t, w, 2)
	// Every broker comes back for the package's other tests, whatever
	// happens here.
	t.Cleanup(func() {
		rctx, rcancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer rcancel()
		for id := 1; id <= 3; id++ {
			if !cluster.Running(id) {
				if err := cluster.Start(id); err != nil {
					t.Errorf("restart broker %d: %v", id, err)
				}
			}
		}
		for id := 1; id <= 3; id++ {
			if err := cluster.WaitStarted(rctx, id); err != nil {
				t.Errorf("broker %d did not come back: %v", id, err)
			}
		}
	})

	cluster.Kill(3)
	killed := time.Now()
	lostAt, _ := p.waitAlert(ctx, t, "ConnectInitCoordinatorNotAvailable", "firing")
	t.Logf("MEASURE ConnectInitCoordinatorNotAvailable firing %s after broker 3 (partition %d's only replica) was killed",
		lostAt.Sub(killed).Round(100*time.Millisecond), partition)

	// The outage: no broker answers the watcher any more.
	cluster.Kill(1)
	cluster.Kill(2)
	down := time.Now()
	var pendingAt time.Time
	for {
		active := p.alerts(t)
		if a, ok := active["ConnectInitCoordinatorNotAvailable"]; !ok || a.State != "firing" {
			t.Fatalf("ConnectInitCoordinatorNotAvailable resolved %s into the outage (state %q): the failed looks dropped its series; alerts: %+v",
				time.Since(down).Round(100*time.Millisecond), a.State, active)
		}
		a, ok := active["ConnectInitLooksFailing"]
		if ok && pendingAt.IsZero() {
			pendingAt = time.Now()
		}
		if ok && a.State == "firing" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("ConnectInitLooksFailing never fired: %v; alerts: %+v", ctx.Err(), active)
		case <-time.After(250 * time.Millisecond):
		}
	}
	firingAt := time.Now()
	t.Logf("MEASURE outage: ConnectInitLooksFailing pending %s, firing %s after every broker was killed; ConnectInitCoordinatorNotAvailable firing throughout",
		pendingAt.Sub(down).Round(100*time.Millisecond), firingAt.Sub(down).Round(100*time.Millisecond))
	if v, ok := p.query(t, `connect_init_doctor_look_success`); !ok || v != 0 {
		t.Errorf("the watcher's look_success during the outage = %v (%v), want 0", v, ok)
	}
	if v, ok := p.query(t, `connect_init_coordinator_available`); !ok || v != 0 {
		t.Errorf("connect_init_coordinator_available during the outage = %v (%v), want the last seen 0", v, ok)
	}
	var pages []string
	for name, a := range p.alerts(t) {
		if a.State == "firing" && a.Labels["severity"] == "critical" {
			pages = append(pages, name)
		}
	}
	sort.Strings(pages)
	if strings.Join(pages, ",") != "ConnectInitCoordinatorNotAvailable,ConnectInitLooksFailing" {
		t.Errorf("pages during the outage: %v, want the lost coordinator and the failing looks only", pages)
	}

	// The watcher goes: its series go stale at the next failed scrape.
	w.Stop(10 * time.Second)
	stopped := time.Now()
	absentAt, a := p.waitAlert(ctx, t, "ConnectInitWatcherAbsent", "firing")
	t.Logf("MEASURE ConnectInitWatcherAbsent firing %s after the watcher was stopped (for: 2m); labels %v", absentAt.Sub(stopped).Round(100*time.Millisecond), a.Labels)
	if _, ok := p.alerts(t)["ConnectInitWatcherDown"]; ok {
		t.Error("ConnectInitWatcherDown is active beside ConnectInitWatcherAbsent: one alert for one watcher gone")
	}
}

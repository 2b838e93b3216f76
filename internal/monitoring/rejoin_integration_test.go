//go:build integration

package monitoring

import (
	"context"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// TestWatcherMeasuresRejoin restarts one real worker of two while the
// watcher looks every second: the watcher sees it leave the Stable group
// and come back under the same advertised URL, serves the rejoin's bounds
// (connect_init_group_rejoin_longest_seconds, one rejoin counted), and,
// since the workers' scheduled.rebalance.max.delay.ms (1 s here) is
// shorter, rebalance-delay-below-rejoin. About 40 s: two worker starts and
// a restart, in parallel where they can be.
func TestWatcherMeasuresRejoin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	g, _ := groupOn(t, "rejoin", 1)
	props := topicsOf(g, "r")
	props["scheduled.rebalance.max.delay.ms"] = "1000"
	env := watcherEnv(t, props)
	wp, err := cluster.WorkerProps(props)
	if err != nil {
		t.Fatal(err)
	}
	var workers []*testbed.Worker
	start := func(spec *testbed.WorkerSpec) *testbed.Worker {
		w, err := cluster.StartWorker(spec)
		if err != nil {
			t.Fatal(err)
		}
		workers = append(workers, w)
		return w
	}
	t.Cleanup(func() {
		for _, w := range workers {
			w.Stop(20 * time.Second)
			if t.Failed() {
				t.Logf("worker %s log tail:\n%s", w.Spec.Name, testbed.Tail(w.Log(), 3000))
			}
		}
	})
	var specs []*testbed.WorkerSpec
	for _, name := range []string{"a", "b"} {
		p := map[string]string{}
		for k, v := range wp {
			p[k] = v
		}
		port, err := testbed.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		p["listeners"] = "http://127.0.0.1:" + itoa(int32(port))
		spec, err := cluster.NewWorkerSpec(g+"-"+name, p, 0)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, spec)
	}
	a, b := start(specs[0]), start(specs[1])
	for _, w := range []*testbed.Worker{a, b} {
		if err := w.WaitHealthy(ctx); err != nil {
			t.Fatal(err)
		}
	}
	wt := startWatcher(t, g, env, time.Second)
	grp := map[string]string{"group_id": g}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			select {
			case <-ctx.Done():
				body, _ := wt.scrape(t)
				t.Fatalf("%s: %v; /metrics:\n%s", what, ctx.Err(), body)
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
	gauge := func(name string, labels map[string]string) float64 {
		_, mfs := wt.scrape(t)
		v, _ := value(mfs, name, labels)
		return v
	}
	waitFor("the watcher never saw both workers", func() bool { return gauge("connect_init_group_members", grp) == 2 })

	stopped := time.Now()
	b.Stop(20 * time.Second)
	waitFor("the watcher never saw the group without b", func() bool { return gauge("connect_init_group_members", grp) == 1 })
	b = start(specs[1])
	if err := b.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	healthy := time.Since(stopped)
	waitFor("no rejoin measured", func() bool { return gauge("connect_init_group_rejoins_total", grp) >= 1 })
	back := time.Since(stopped)
	_, mfs := wt.scrape(t)
	least, okL := value(mfs, "connect_init_group_rejoin_longest_seconds", map[string]string{"bound": "at_least"})
	most, okM := value(mfs, "connect_init_group_rejoin_longest_seconds", map[string]string{"bound": "at_most"})
	finding, _ := value(mfs, "connect_init_doctor_findings", map[string]string{"check": "rebalance-delay-below-rejoin", "finding_severity": "warning"})
	t.Logf("MEASURE b stopped and started again: /health 200 after %.1fs; the watcher (1 s looks) measured its rejoin at least %.1fs, at most %.1fs (seen %.1fs after the stop)",
		healthy.Seconds(), least, most, back.Seconds())
	// A worker's JVM start and join take seconds: the looks that saw it
	// away span more than the 1 s delay.
	if !okL || !okM || least <= 1 || most < least {
		t.Errorf("rejoin bounds at least %v (%v), at most %v (%v): want 1 < at least <= at most", least, okL, most, okM)
	}
	// The upper bound starts at the last look that saw b in, before the
	// stop began, and ends at the look that counted it back: at most the
	// time seen from here plus a look (its interval and its own duration).
	if most > back.Seconds()+5 {
		t.Errorf("at most %.1fs, but the rejoin was counted %.1fs after the stop began", most, back.Seconds())
	}
	if finding != 1 {
		t.Errorf("scheduled.rebalance.max.delay.ms=1000 and a rejoin of at least %.1fs: rebalance-delay-below-rejoin = %v, want 1", least, finding)
	}
}

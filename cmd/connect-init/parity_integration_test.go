//go:build integration

package main

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// TestParityRefusesDriftBeforeTheJoin is issue 50's proof on real
// Connect workers: two workers started through connect-init form the
// group and publish their settings in the cluster registry; a third
// worker of the same group whose settings drifted is refused by its group
// step before the exec (exit 1, no JVM), naming the setting and the fix,
// and the group stays as it was. The drifted workers run in the default
// lock mode (the refusal comes before the lock).
func TestParityRefusesDriftBeforeTheJoin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "parity")
	g := group["group.id"]
	var ws []*testbed.Worker
	for _, name := range []string{"a", "b"} {
		wp, err := cluster.WorkerProps(group)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := cluster.NewWorkerSpec(g+"-"+name, wp, 0)
		if err != nil {
			t.Fatal(err)
		}
		w, err := cluster.StartWorkerCommand(spec, append([]string{binary, "run", "--"}, spec.Argv...), connectInitEnv(wp))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Stop(20 * time.Second) })
		if err := w.WaitHealthy(ctx); err != nil {
			t.Fatalf("worker %s: %v; log:\n%s", name, err, logTail(w.Log(), 3000))
		}
		ws = append(ws, w)
	}
	for _, w := range ws {
		waitStableMember(ctx, t, g, group["config.storage.topic"], w.Spec.RESTURL)
	}
	peer, err := url.Parse(ws[0].Spec.RESTURL)
	if err != nil {
		t.Fatal(err)
	}
	defaultLock := "CONNECT_INIT_LOCK=true"
	for _, tc := range []struct {
		name  string
		props map[string]string
		wants []string
	}{
		{"value-converter", map[string]string{"value.converter": "org.apache.kafka.connect.storage.StringConverter"},
			[]string{"settings parity", "has value.converter", "=org.apache.kafka.connect.storage.StringConverter", "org.apache.kafka.connect.json.JsonConverter on ", "fix: set value.converter"}},
		{"offsets-topic", map[string]string{"offset.storage.topic": g + "-offsets-2"},
			[]string{"settings parity", "has offset.storage.topic", "=" + g + "-offsets-2", g + "-offsets on ", "fix: set offset.storage.topic"}},
		{"peer-address", map[string]string{"rest.advertised.host.name": peer.Hostname(), "rest.advertised.port": peer.Port()},
			[]string{"settings parity", "advertises the REST address a live member", "something answers on that address", "fix: give this worker its own rest.advertised"}},
		{"eager", map[string]string{"connect.protocol": "eager"},
			[]string{"settings parity", "has connect.protocol", "=eager", "sessioned on ", "2 steps apart", "fix: move connect.protocol", "one step at a time (eager -> compatible -> sessioned)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, log, _ := runOurs(ctx, t, tc.name, merge(group, tc.props), "run", defaultLock)
			msg := assertRefused(t, code, log, tc.wants...)
			t.Logf("refused: %s", msg)
		})
	}
	// A start with the settings of a running worker (prepare, with its
	// very properties) finds its registration unchanged: the fingerprint
	// of real settings is the same from start to start, so a restart with
	// unchanged settings writes nothing (issue 50's restart budget).
	res := runCLI(ctx, t, connectInitEnv(ws[0].Spec.Props), "prepare")
	if res.code != 0 || !strings.Contains(res.stderr, "not written again") {
		t.Errorf("prepare with worker a's settings exited %d, want 0 with its registration unchanged:\n%s", res.code, logTail(res.stderr, 4000))
	}
	t.Logf("prepare with unchanged settings: %s", firstLine(res.stderr, "start-up profile"))
	// The group is as it was: both workers healthy, both still members.
	for _, w := range ws {
		if err := w.WaitHealthy(ctx); err != nil {
			t.Errorf("worker %s after the refusals: %v", w.Spec.Name, err)
		}
		m := waitStableMember(ctx, t, g, group["config.storage.topic"], w.Spec.RESTURL)
		if m.URL == "" || !strings.HasPrefix(m.URL, w.Spec.RESTURL) {
			t.Errorf("worker %s is not a member: %+v", w.Spec.Name, m)
		}
	}
	descs, err := newAdmin(t).DescribeConsumerGroups([]string{g})
	if err != nil || len(descs) != 1 || descs[0].State != "Stable" || len(descs[0].Members) != 2 {
		t.Errorf("the group after the refusals: %+v, %v; want Stable with the 2 workers", descs, err)
	}
}

// TestParityExactlyOnceStages: a group whose two workers (through
// connect-init) run exactly.once.source.support=enabled, and pass the
// exactly-once readiness checks; a worker left on disabled (two steps) is
// refused before the exec, and one on preparing (one step, a rolling
// change) is only warned about (judged by prepare, which reports the same
// results without joining).
func TestParityExactlyOnceStages(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	group := merge(uniqueGroup(t, "parity-eos"), map[string]string{"exactly.once.source.support": "enabled"})
	g := group["group.id"]
	var ws []*testbed.Worker
	for _, name := range []string{"a", "b"} {
		wp, err := cluster.WorkerProps(group)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := cluster.NewWorkerSpec(g+"-"+name, wp, 0)
		if err != nil {
			t.Fatal(err)
		}
		w, err := cluster.StartWorkerCommand(spec, append([]string{binary, "run", "--"}, spec.Argv...), connectInitEnv(wp))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Stop(20 * time.Second) })
		if err := w.WaitHealthy(ctx); err != nil {
			t.Fatalf("worker %s: %v; log:\n%s", name, err, logTail(w.Log(), 3000))
		}
		ws = append(ws, w)
	}
	for _, w := range ws {
		waitStableMember(ctx, t, g, group["config.storage.topic"], w.Spec.RESTURL)
	}
	code, log, _ := runOurs(ctx, t, "disabled", merge(group, map[string]string{"exactly.once.source.support": "disabled"}), "run", "CONNECT_INIT_LOCK=true")
	msg := assertRefused(t, code, log, "settings parity", "has exactly.once.source.support", "=disabled", "enabled on ", "2 steps apart", "fix: move exactly.once.source.support")
	t.Logf("refused: %s", msg)

	wp, err := cluster.WorkerProps(merge(group, map[string]string{"exactly.once.source.support": "preparing"}))
	if err != nil {
		t.Fatal(err)
	}
	res := runCLI(ctx, t, connectInitEnv(wp), "prepare")
	warn := firstLine(res.stderr, "worker settings differ from the group's")
	if res.code != 0 || !strings.Contains(warn, "check=worker-setting-transition") || !strings.Contains(warn, "one step apart") {
		t.Errorf("preparing beside enabled: exit %d, want 0 with a one-step warning:\n%s", res.code, logTail(res.stderr, 4000))
	}
	t.Logf("warned: %s", warn)
	for _, w := range ws {
		if err := w.WaitHealthy(ctx); err != nil {
			t.Errorf("worker %s after the refusal: %v", w.Spec.Name, err)
		}
	}
}

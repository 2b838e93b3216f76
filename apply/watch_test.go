package apply

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/restclient"
)

func TestRestartDelay(t *testing.T) {
	var got []time.Duration
	for n := 1; n <= 9; n++ {
		got = append(got, RestartDelay(n, time.Minute))
	}
	want := []time.Duration{2, 6, 12, 20, 30, 42, 56, 60, 60}
	for i := range want {
		if got[i] != want[i]*time.Minute {
			t.Fatalf("delays %v, want %v minutes", got, want)
		}
	}
}

// syncBuf is a log sink the watcher's goroutine and the test share.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// watchFake runs Watch on f until stop says so, on a stepping clock.
func watchFake(t *testing.T, f *fakeConnect, desired []Connector, o WatchOptions, stop func(log string) bool) (string, *clock.Stepping) {
	t.Helper()
	return watchFakeWith(t, f, desired, o, func(*clock.Stepping) {}, stop)
}

func watchFakeWith(t *testing.T, f *fakeConnect, desired []Connector, o WatchOptions, onClock func(*clock.Stepping), stop func(log string) bool) (string, *clock.Stepping) {
	t.Helper()
	w := startFake(t, f)
	clk := clock.NewStepping(time.Unix(0, 0))
	onClock(clk)
	logs := &syncBuf{}
	o.Clock, o.Log = clk, slog.New(slog.NewTextHandler(logs, nil))
	rest := &restclient.Client{Clock: clk, Random: func() float64 { return 0.5 }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Watch(ctx, &API{REST: rest, Target: w.t, Clock: clk}, desired, o)
		close(done)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !stop(logs.String()) {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("the watcher never got there:\n%s", logs.String())
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	return logs.String(), clk
}

// A task that keeps failing is restarted through Connect's own API at
// growing intervals, then left alone after MaxRestarts, each action one
// log line with the connector, the cause and the next attempt.
func TestWatchRestartsWithBackoff(t *testing.T) {
	d := conn("a", "", "connector.class", "C")
	var mu sync.Mutex
	var at []time.Duration
	var paths []string
	var clk *clock.Stepping
	failed := func(string) *Status {
		st := running("a")
		st.Tasks[0].State = "FAILED"
		return st
	}
	f := &fakeConnect{configs: map[string]map[string]string{"a": d.Config}, status: failed}
	start := time.Unix(0, 0)
	f.onRestart = func(p string) {
		mu.Lock()
		defer mu.Unlock()
		paths = append(paths, p)
		at = append(at, clk.Now().Sub(start))
	}
	// The clock is made inside watchFake; the restart hook reads it
	// through this variable, set before the first look.
	logs, _ := watchFakeWith(t, f, []Connector{d}, WatchOptions{Interval: time.Second, RestartUnit: time.Second, MaxRestarts: 3},
		func(c *clock.Stepping) { clk = c }, func(l string) bool { return strings.Contains(l, "giving up") })
	mu.Lock()
	defer mu.Unlock()
	if len(at) != 3 || paths[0] != "/connectors/a/restart?includeTasks=true&onlyFailed=true" {
		t.Fatalf("restarts at %v: %v\n%s", at, paths, logs)
	}
	// First at the first look, then 2 and 6 units after the previous.
	if at[0] != time.Second || at[1]-at[0] < 2*time.Second || at[1]-at[0] > 3*time.Second || at[2]-at[1] < 6*time.Second || at[2]-at[1] > 7*time.Second {
		t.Errorf("restarts at %v", at)
	}
	for _, want := range []string{`msg="watch: restarted" connector=a cause="task 0 FAILED" restart=1 next_attempt="2s if it fails again"`,
		`restart=2 next_attempt="6s if it fails again"`, `restart=3 next_attempt="none: the last of --max-restarts"`, `msg="watch: giving up restarting" connector=a`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
	if strings.Count(logs, "giving up") != 1 {
		t.Errorf("gave up more than once:\n%s", logs)
	}
}

// A connector deleted behind our back is reported as drift and put back;
// one changed by hand gets its file's config again.
func TestWatchRepairsDrift(t *testing.T) {
	a, b := conn("a", "", "connector.class", "C", "topic", "t"), conn("b", "", "connector.class", "C")
	f := &fakeConnect{configs: map[string]map[string]string{"a": {"name": "a", "connector.class": "C", "topic": "changed-by-hand"}}, status: running}
	released := 0
	lease := func(context.Context, time.Duration) (func(), error) { return func() { released++ }, nil }
	logs, _ := watchFake(t, f, []Connector{a, b}, WatchOptions{Options: Options{Lease: lease}, Interval: time.Second},
		func(l string) bool { return strings.Count(l, "watch: put back") >= 2 })
	for _, want := range []string{`msg="watch: drift" connector=a cause="its config differs: ~topic"`, `msg="watch: drift" connector=b cause="the connector is gone (deleted behind our back)"`,
		`msg="watch: put back" connector=a action=update`, `msg="watch: put back" connector=b action=create`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "changed-by-hand") {
		t.Errorf("a value was logged:\n%s", logs)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.configs["a"]["topic"] != "t" || f.configs["b"] == nil || f.puts != 2 || released != 1 {
		t.Errorf("configs %v, %d puts, %d leases", f.configs, f.puts, released)
	}
}

// A watcher that is not the active one (Active says no) neither reads nor
// writes nor restarts; it says so once per reason, and acts as soon as it
// is its turn, with a restart count of its own from zero.
func TestWatchStandsByUntilActive(t *testing.T) {
	d := conn("a", "", "connector.class", "C")
	failed := func(string) *Status {
		st := running("a")
		st.Tasks[0].State = "FAILED"
		return st
	}
	f := &fakeConnect{configs: map[string]map[string]string{}, status: failed}
	var mu sync.Mutex
	asked := 0
	active := func(context.Context) (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		asked++
		switch {
		case asked <= 3:
			return false, "this worker is not the group's leader"
		case asked <= 5:
			return false, "the group is rebalancing"
		}
		return true, "this worker is the group's leader"
	}
	restarts := 0
	f.onRestart = func(string) { restarts++ }
	logs, _ := watchFake(t, f, []Connector{d}, WatchOptions{Interval: time.Second, RestartUnit: time.Hour, MaxRestarts: 3, Active: active},
		func(l string) bool { return strings.Contains(l, "watch: restarted") })
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lists == 0 || f.puts != 1 || restarts != 1 {
		t.Errorf("%d listings, %d puts, %d restarts once active", f.lists, f.puts, restarts)
	}
	for _, want := range []string{`msg="watch: standing by" why="this worker is not the group's leader"`, `msg="watch: standing by" why="the group is rebalancing"`,
		`msg="watch: active" why="this worker is the group's leader"`} {
		if strings.Count(logs, want) != 1 {
			t.Errorf("log has not exactly one %s:\n%s", want, logs)
		}
	}
	if i, j := strings.Index(logs, "watch: active"), strings.Index(logs, "watch: drift"); i < 0 || j < i {
		t.Errorf("acted before its turn:\n%s", logs)
	}
}

// A watcher through the REST API alone (Options.Unproven) over a cluster
// that holds none of its connectors and one of another's: it puts its own
// back but deletes nothing, not even once the connector it put back is
// there (it made it: no evidence), and says why at every look.
func TestWatchUnprovenPruneDeletesNothing(t *testing.T) {
	a := conn("a", "", "connector.class", "C", "topic", "t")
	f := &fakeConnect{configs: map[string]map[string]string{"theirs": {"name": "theirs", "connector.class": "C"}}, status: running}
	logs, _ := watchFake(t, f, []Connector{a}, WatchOptions{Options: Options{Prune: true, Unproven: "not proven"}, Interval: time.Second},
		func(l string) bool { return strings.Count(l, "watch: refusing to prune") >= 3 })
	if !strings.Contains(logs, `msg="watch: refusing to prune; nothing is deleted"`) || !strings.Contains(logs, "holds none of the 1 connectors") {
		t.Errorf("the refusal is not logged:\n%s", logs)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.configs["theirs"] == nil || f.deleted != 0 || f.configs["a"] == nil {
		t.Errorf("configs %v, %d deletes", f.configs, f.deleted)
	}
}

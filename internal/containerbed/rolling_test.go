package containerbed

import (
	"testing"
	"time"
)

func TestParsePollAndCosts(t *testing.T) {
	lines := []string{
		`1000 10.0.1.5 {"s":{"status":{"name":"s","connector":{"state":"RUNNING","worker_id":"10.0.1.5:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"10.0.1.5:8083"},{"id":1,"state":"RUNNING","worker_id":"10.0.1.6:8083"}],"type":"sink"}}}`,
		`1250 10.0.1.5 {"s":{"status":{"name":"s","connector":{"state":"RUNNING","worker_id":"10.0.1.5:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"10.0.1.5:8083"},{"id":1,"state":"UNASSIGNED","worker_id":"10.0.1.6:8083"}],"type":"sink"}}}`,
		`1500 - `,
		`1750 10.0.1.5 {"s":{"status":{"name":"s","connector":{"state":"RUNNING","worker_id":"10.0.1.5:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"10.0.1.5:8083"}],"type":"sink"}}}`,
		`2000 10.0.1.7 {"s":{"status":{"name":"s","connector":{"state":"RUNNING","worker_id":"10.0.1.5:8083"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"10.0.1.5:8083"},{"id":1,"state":"RUNNING","worker_id":"10.0.1.7:8083"}],"type":"sink"}}}`,
		`2250 10.0.1.7 {"s":{"status":{"name":"s","connector":{"state":"RUNNING","worker_id":"10.0.1.5:8083"},"tasks":[{"id":0,"state":"UNASSIGNED","worker_id":"10.0.1.5:8083"},{"id":1,"state":"RUNNING","worker_id":"10.0.1.7:8083"}],"type":"sink"}}}`,
	}
	var obs []Observation
	for _, l := range lines {
		o, err := ParsePoll(l)
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, o)
	}
	if obs[2].Answered || !obs[0].Answered {
		t.Fatalf("answered: %v %v", obs[0].Answered, obs[2].Answered)
	}
	ids := []string{"s", "s/0", "s/1"}
	costs := Costs(obs, ids)
	want := []UnitCost{
		{ID: "s"},
		// Still not RUNNING when the record ends: counted to its last answer.
		{ID: "s/0", Outages: 1, Down: 0, MaxDown: 0, Open: true},
		// Not RUNNING from 1250 (UNASSIGNED), missing at 1750, RUNNING on
		// another worker at 2000: one outage of 750 ms, one move.
		{ID: "s/1", Outages: 1, Down: 750 * time.Millisecond, MaxDown: 750 * time.Millisecond, Moves: 1},
	}
	for i := range want {
		if costs[i] != want[i] {
			t.Errorf("%s: got %+v, want %+v", ids[i], costs[i], want[i])
		}
	}
	if AllRunning(obs[4], ids) != true || AllRunning(obs[5], ids) || AllRunning(obs[2], ids) {
		t.Error("AllRunning")
	}
	s := Summarize(costs)
	if s.Tasks != 2 || s.TaskDown != 750*time.Millisecond || s.Moves != 1 || s.TasksWithMoves != 1 || s.Open != 1 || s.Outages != 2 {
		t.Errorf("summary %+v", s)
	}
	for _, bad := range []string{"", "x 1.2.3.4 {}", "1000 1.2.3.4 {not json"} {
		if _, err := ParsePoll(bad); err == nil {
			t.Errorf("ParsePoll(%q): no error", bad)
		}
	}
}

func TestProfileLinesAndMedian(t *testing.T) {
	logs := `[2026-12-04 19:00:00,000] INFO Kafka Connect starting (org.apache.kafka.connect.cli.ConnectDistributed)
{"time":"2026-12-04T19:00:00Z","level":"INFO","msg":"start-up profile","component":"connect-init","where":"exec, lock in the worker","total_ms":812.5,"settings_ms":1.2,"brokers_ms":40,"group_window_ms":600,"group_ms":700.1}
{"time":"2026-12-04T19:00:01Z","level":"INFO","msg":"start-up profile","component":"other","where":"x","total_ms":1}
time=2026-12-04T19:00:09Z level=INFO msg="start-up profile" component=connect-init where="in-worker lock" lock_ms=30 lock_wait_ms=20 lock_handoff_ms=10 peers_ms=5000 total_ms=5030.5
time=2026-12-04T19:00:09Z level=INFO msg="the worker joins its group now" component=connect-init`
	got := ProfileLines(logs)
	want := []string{
		"exec, lock in the worker: settings 1.2, brokers 40, group 700.1, group_window 600, total 812.5",
		"in-worker lock: lock 30, lock_wait 20, lock_handoff 10, peers 5000, total 5030.5",
	}
	if len(got) != len(want) {
		t.Fatalf("ProfileLines: got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: got %q, want %q", i, got[i], want[i])
		}
	}
	if _, ok := MedianDuration(nil); ok {
		t.Error("MedianDuration(nil): ok")
	}
	if m, _ := MedianDuration([]time.Duration{30 * time.Second, 10 * time.Second, 20 * time.Second}); m != 20*time.Second {
		t.Errorf("median of 10, 20, 30 s: %s", m)
	}
}

func TestWatcherRejoin(t *testing.T) {
	text := `# HELP connect_init_group_rejoins_total Workers the watcher saw leave the group and come back.
# TYPE connect_init_group_rejoins_total counter
connect_init_group_rejoins_total{group="roll-example"} 3
connect_init_group_rejoin_longest_seconds{bound="at_least",group="roll-example"} 30.5
connect_init_group_rejoin_longest_seconds{bound="at_most",group="roll-example"} 90
connect_init_group_members{group="roll-example"} 3
`
	if l, m, n, ok := WatcherRejoin(text); !ok || l != 30.5 || m != 90 || n != 3 {
		t.Errorf("got %v %v %v %v", l, m, n, ok)
	}
	if _, _, _, ok := WatcherRejoin(`connect_init_group_rejoins_total{group="g"} 0`); ok {
		t.Error("no rejoin counted, but ok")
	}
}

package repair

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// The target of each topic follows the explicit factor, else the brokers'
// and the worker's configuration, raised for a single-replica
// __consumer_offsets on a multi-broker cluster and held to the live
// brokers.
func TestTargets(t *testing.T) {
	connect := []InternalTopic{{Name: "cfg", Role: "config", ReplicationFactor: 3}, {Name: "off", Role: "offset", ReplicationFactor: -1}}
	cases := []struct {
		name     string
		live     []int32
		settings map[string]string
		spec     TargetSpec
		want     []TopicRequest
		wantErr  string
		// reads is whether a broker's settings are read at all.
		reads bool
	}{
		{
			name: "incident 2: offsets.topic.replication.factor=1 on three brokers raised to 3", live: []int32{1, 2, 3},
			settings: map[string]string{"offsets.topic.replication.factor": "1"},
			spec:     TargetSpec{Offsets: true, Brokers: KnownBrokers{Live: 3, Known: 3}},
			want: []TopicRequest{{Name: ConsumerOffsets, TargetRF: 3,
				Why: "offsets.topic.replication.factor=1 on the brokers, too few for a 3-broker cluster (a single-replica __consumer_offsets); raising to 3; set offsets.topic.replication.factor=3 on the brokers too"}},
			reads: true,
		},
		{
			name: "one of three brokers gone: the target held to the live two, and the wanted three said", live: []int32{1, 2},
			settings: map[string]string{"offsets.topic.replication.factor": "1"},
			spec:     TargetSpec{Offsets: true, Brokers: KnownBrokers{Live: 2, Known: 3, Absent: []string{"broker 3"}}},
			want: []TopicRequest{{Name: ConsumerOffsets, TargetRF: 2, Wanted: 3,
				Why: "offsets.topic.replication.factor=1 on the brokers, too few for a 3-broker cluster (a single-replica __consumer_offsets); raising to 2; set offsets.topic.replication.factor=3 on the brokers too; only 2 of the 3 brokers are live (broker 3), so not to 3"}},
			reads: true,
		},
		{
			name: "two brokers: raised to 2", live: []int32{1, 2},
			settings: map[string]string{"offsets.topic.replication.factor": "1"},
			spec:     TargetSpec{Offsets: true, Brokers: KnownBrokers{Live: 2, Known: 2}},
			want: []TopicRequest{{Name: ConsumerOffsets, TargetRF: 2,
				Why: "offsets.topic.replication.factor=1 on the brokers, too few for a 2-broker cluster (a single-replica __consumer_offsets); raising to 2; set offsets.topic.replication.factor=2 on the brokers too"}},
			reads: true,
		},
		{
			name: "a single-broker cluster keeps 1", live: []int32{1},
			settings: map[string]string{"offsets.topic.replication.factor": "1"},
			spec:     TargetSpec{Offsets: true, Brokers: KnownBrokers{Live: 1, Known: 1}},
			want:     []TopicRequest{{Name: ConsumerOffsets, TargetRF: 1, Why: "offsets.topic.replication.factor=1 on the brokers"}},
			reads:    true,
		},
		{
			name: "the brokers' factor of 3 followed", live: []int32{1, 2, 3, 4},
			settings: map[string]string{"offsets.topic.replication.factor": "3"},
			spec:     TargetSpec{Offsets: true, Brokers: KnownBrokers{Live: 4, Known: 4}},
			want:     []TopicRequest{{Name: ConsumerOffsets, TargetRF: 3, Why: "offsets.topic.replication.factor=3 on the brokers"}},
			reads:    true,
		},
		{
			name: "an explicit factor wins everywhere and reads no broker setting", live: []int32{1, 2},
			spec: TargetSpec{Offsets: true, Internal: connect, ReplicationFactor: 2, Brokers: KnownBrokers{Live: 2, Known: 3, Absent: []string{"broker 3"}}},
			want: []TopicRequest{
				{Name: ConsumerOffsets, TargetRF: 2, Why: "--replication-factor 2"},
				{Name: "cfg", TargetRF: 2, Why: "--replication-factor 2"},
				{Name: "off", TargetRF: 2, Why: "--replication-factor 2"},
			},
		},
		{
			name: "Connect's topics: the configured factor, and the brokers' default for -1", live: []int32{1, 2, 3},
			settings: map[string]string{"default.replication.factor": "2"},
			spec:     TargetSpec{Internal: connect, Brokers: KnownBrokers{Live: 3, Known: 3}},
			want: []TopicRequest{
				{Name: "cfg", TargetRF: 3, Why: "config.storage.replication.factor=3"},
				{Name: "off", TargetRF: 2, Why: "offset.storage.replication.factor=-1, default.replication.factor=2 on the brokers"},
			},
			reads: true,
		},
		{
			name: "a broker setting that is not a number", live: []int32{7},
			settings: map[string]string{"offsets.topic.replication.factor": "three"},
			spec:     TargetSpec{Offsets: true, Brokers: KnownBrokers{Live: 1, Known: 1}},
			wantErr:  `broker 7 reports offsets.topic.replication.factor="three", not a number`,
			reads:    true,
		},
		{
			name: "no live broker", spec: TargetSpec{Offsets: true},
			wantErr: "the cluster lists no live broker",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(0, 1, 1, c.live...)
			f.settings = c.settings
			got, err := Targets(context.Background(), f, c.spec)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("Targets = %v, %v; want error %q", got, err, c.wantErr)
				}
			} else if err != nil || !slices.EqualFunc(got, c.want, sameRequest) {
				t.Fatalf("Targets = %+v, %v\nwant %+v", got, err, c.want)
			}
			if read := slices.Contains(f.calls, "describe-configs"); read != c.reads {
				t.Errorf("broker settings read: %v, want %v (calls %v)", read, c.reads, f.calls)
			}
			if m := f.mutations(); len(m) != 0 {
				t.Errorf("Targets changed the cluster: %v", m)
			}
		})
	}
}

func sameRequest(a, b TopicRequest) bool {
	return a.Name == b.Name && a.TargetRF == b.TargetRF && a.Wanted == b.Wanted && a.Why == b.Why && len(a.Partitions) == 0 && len(b.Partitions) == 0
}

// A registered broker that does not answer refuses the repair, naming
// each; the absent brokers known by id count towards the cluster's size.
func TestCountBrokers(t *testing.T) {
	cases := []struct {
		name       string
		registered []Registered
		absent     []Absent
		want       KnownBrokers
		wantDown   []string
	}{
		{name: "all up", registered: []Registered{{ID: 1, Up: true}, {ID: 2, Up: true}, {ID: 3, Up: true}},
			want: KnownBrokers{Live: 3, Known: 3}},
		{name: "one fenced by id, one known only by address", registered: []Registered{{ID: 1, Up: true}, {ID: 2, Up: true}},
			absent: []Absent{{ID: 3, Name: "broker 3 (fenced)"}, {ID: -1, Name: "k9:9092"}},
			want:   KnownBrokers{Live: 2, Known: 3, Absent: []string{"broker 3 (fenced)"}}},
		{name: "two registered brokers do not answer",
			registered: []Registered{{ID: 1, Up: true}, {ID: 2, Addr: "k2:9092", Err: "connection refused"}, {ID: 3, Addr: "k3:9092", Err: "i/o timeout"}},
			absent:     []Absent{{ID: 4, Name: "broker 4"}},
			wantDown: []string{"broker 2 at k2:9092 is registered but does not answer (connection refused)",
				"broker 3 at k3:9092 is registered but does not answer (i/o timeout)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := CountBrokers(c.registered, c.absent)
			var down *BrokersDownError
			switch {
			case c.wantDown != nil:
				if !errors.As(err, &down) || !slices.Equal(down.Down, c.wantDown) || err.Error() != strings.Join(c.wantDown, "; ") {
					t.Fatalf("CountBrokers = %+v, %v; want the down brokers %q", got, err, c.wantDown)
				}
			case err != nil || got.Live != c.want.Live || got.Known != c.want.Known || !slices.Equal(got.Absent, c.want.Absent):
				t.Fatalf("CountBrokers = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

// A target below the one wanted holds --execute back, unless the factor was
// asked for explicitly; the refusal follows only when there was something
// to do and the plan itself did not fail.
func TestShortTargetsHoldExecutionBack(t *testing.T) {
	short := TopicRequest{Name: ConsumerOffsets, TargetRF: 2, Wanted: 3}
	full := TopicRequest{Name: "cfg", TargetRF: 3}
	work := Result{Plan: Plan{Moves: []Move{{Topic: ConsumerOffsets}}}}
	blocked := Result{Plan: Plan{Blocked: []Blocked{{Topic: ConsumerOffsets}}}}
	cases := []struct {
		name        string
		reqs        []TopicRequest
		explicit    bool
		execute     bool
		res         Result
		runErr      error
		wantShort   []string
		wantExecute bool
		wantRefused bool
	}{
		{name: "short, executing, work to do", reqs: []TopicRequest{short, full}, execute: true, res: work,
			wantShort: []string{"__consumer_offsets to 2 replicas, not 3"}, wantRefused: true},
		{name: "short, executing, only blocked partitions", reqs: []TopicRequest{short}, execute: true, res: blocked,
			wantShort: []string{"__consumer_offsets to 2 replicas, not 3"}, wantRefused: true},
		{name: "short, executing, nothing to do", reqs: []TopicRequest{short}, execute: true,
			wantShort: []string{"__consumer_offsets to 2 replicas, not 3"}},
		{name: "short, executing, the plan failed", reqs: []TopicRequest{short}, execute: true, res: work, runErr: errors.New("boom"),
			wantShort: []string{"__consumer_offsets to 2 replicas, not 3"}},
		{name: "short, dry run", reqs: []TopicRequest{short}, res: work,
			wantShort: []string{"__consumer_offsets to 2 replicas, not 3"}},
		{name: "short but asked for explicitly", reqs: []TopicRequest{short}, explicit: true, execute: true, res: work, wantExecute: true},
		{name: "full targets", reqs: []TopicRequest{full}, execute: true, res: work, wantExecute: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ShortTargets(c.reqs, c.explicit)
			if !slices.Equal(got, c.wantShort) {
				t.Fatalf("ShortTargets = %q, want %q", got, c.wantShort)
			}
			if ex := MayExecute(c.execute, got); ex != c.wantExecute {
				t.Errorf("MayExecute = %v, want %v", ex, c.wantExecute)
			}
			err := RefuseShort(c.execute, got, c.res, c.runErr)
			var bw *BelowWantedError
			if refused := errors.As(err, &bw); refused != c.wantRefused {
				t.Fatalf("RefuseShort = %v, want refused %v", err, c.wantRefused)
			}
			if c.wantRefused && err.Error() != "the plan aims below the default replication factor: "+strings.Join(c.wantShort, "; ") {
				t.Errorf("refusal reads %q", err)
			}
		})
	}
}

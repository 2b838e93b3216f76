package repair

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
)

// fakeCluster is an in-memory cluster whose reassignments complete after a
// number of Describe calls.
type fakeCluster struct {
	mu        sync.Mutex
	brokers   []Broker
	topics    map[string][]PartitionState
	running   map[string]*fakeMove // "topic-partition"
	throttled map[string][]string  // topic -> follower entries
	leaderThr map[string][]string
	rates     map[int32]int64
	calls     []string
	// steps is how many Describe calls a reassignment takes to complete;
	// -1 never.
	steps   int
	failSet error
	// settings are the brokers' settings BrokerSetting reads, by name.
	settings map[string]string
}

type fakeMove struct {
	topic     string
	partition int32
	target    []int32
	adding    []int32
	left      int
}

func newFake(n int, parts int, on int32, brokerIDs ...int32) *fakeCluster {
	f := &fakeCluster{topics: map[string][]PartitionState{}, running: map[string]*fakeMove{}, throttled: map[string][]string{},
		leaderThr: map[string][]string{}, rates: map[int32]int64{}, steps: 2}
	for _, id := range brokerIDs {
		f.brokers = append(f.brokers, Broker{ID: id})
	}
	for p := 0; p < parts; p++ {
		f.topics["__consumer_offsets"] = append(f.topics["__consumer_offsets"], PartitionState{ID: int32(p), Leader: on, Replicas: []int32{on}, ISR: []int32{on}})
	}
	_ = n
	return f
}

func (f *fakeCluster) Describe(ctx context.Context, topics []string) (State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "describe")
	for k, m := range f.running {
		if f.steps < 0 {
			continue
		}
		if m.left--; m.left <= 0 {
			for i, p := range f.topics[m.topic] {
				if p.ID == m.partition {
					f.topics[m.topic][i].Replicas = slices.Clone(m.target)
					f.topics[m.topic][i].ISR = slices.Clone(m.target)
				}
			}
			delete(f.running, k)
		}
	}
	st := State{Brokers: slices.Clone(f.brokers), Topics: map[string][]PartitionState{}, FollowerThrottled: map[string][]string{}}
	for _, t := range topics {
		if ps, ok := f.topics[t]; ok {
			st.Topics[t] = slices.Clone(ps)
			st.FollowerThrottled[t] = slices.Clone(f.throttled[t])
		}
	}
	for _, m := range f.running {
		st.Reassignments = append(st.Reassignments, Reassignment{Topic: m.topic, Partition: m.partition, Replicas: slices.Clone(m.target), Adding: slices.Clone(m.adding)})
	}
	return st, nil
}

func (f *fakeCluster) Reassign(ctx context.Context, moves []Move) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("reassign %d", len(moves)))
	for _, m := range moves {
		f.running[fmt.Sprintf("%s-%d", m.Topic, m.Partition)] = &fakeMove{topic: m.Topic, partition: m.Partition, target: m.Target, adding: m.Adding, left: f.steps}
		for i, p := range f.topics[m.Topic] {
			if p.ID == m.Partition {
				f.topics[m.Topic][i].Replicas = slices.Clone(m.Target) // metadata lists target + removing
			}
		}
	}
	return nil
}

func (f *fakeCluster) SetThrottle(ctx context.Context, t Throttle) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "set-throttle")
	if f.failSet != nil {
		return f.failSet
	}
	for topic, e := range t.Follower {
		f.throttled[topic] = merge(f.throttled[topic], e)
	}
	for topic, e := range t.Leader {
		f.leaderThr[topic] = merge(f.leaderThr[topic], e)
	}
	if t.RateBytes > 0 {
		for _, b := range t.Brokers {
			f.rates[b] = t.RateBytes
		}
	}
	return nil
}

func (f *fakeCluster) RemoveThrottle(ctx context.Context, topics []string, brokers []int32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "remove-throttle")
	for _, t := range topics {
		delete(f.throttled, t)
		delete(f.leaderThr, t)
	}
	for _, b := range brokers {
		delete(f.rates, b)
	}
	return nil
}

func (f *fakeCluster) BrokerSetting(id int32, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "describe-configs")
	if !slices.ContainsFunc(f.brokers, func(b Broker) bool { return b.ID == id }) {
		return "", fmt.Errorf("read %s of broker %d: not live", name, id)
	}
	return f.settings[name], nil
}

func (f *fakeCluster) mutations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if c != "describe" && c != "describe-configs" {
			out = append(out, c)
		}
	}
	return out
}

func offsetsRequest(execute bool) Request {
	return Request{Topics: []TopicRequest{{Name: "__consumer_offsets", TargetRF: 3}}, RateBytes: 50_000_000, Execute: execute}
}

func TestDryRunChangesNothing(t *testing.T) {
	f := newFake(3, 50, 1, 1, 2, 3)
	x := &Executor{Cluster: f, Clock: clock.NewStepping(time.Unix(0, 0))}
	res, err := x.Run(context.Background(), offsetsRequest(false))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.Moves) != 50 || res.Submitted {
		t.Fatalf("plan %d moves, submitted %v", len(res.Plan.Moves), res.Submitted)
	}
	if m := f.mutations(); len(m) != 0 {
		t.Fatalf("a dry run called %v", m)
	}
}

func TestExecuteThrottlesSubmitsFollowsAndCleansUp(t *testing.T) {
	f := newFake(3, 50, 1, 1, 2, 3)
	f.steps = 4
	clk := clock.NewStepping(time.Unix(0, 0))
	x := &Executor{Cluster: f, Clock: clk}
	res, err := x.Run(context.Background(), offsetsRequest(true))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.mutations(); !slices.Equal(got, []string{"set-throttle", "reassign 50", "remove-throttle"}) {
		t.Fatalf("calls %v, want the throttle set before the reassignment and removed after it", got)
	}
	if len(res.Done) != 50 || len(res.Remaining) != 0 || !res.ThrottleRemoved || !res.Submitted {
		t.Fatalf("result done %d remaining %d throttle removed %v", len(res.Done), len(res.Remaining), res.ThrottleRemoved)
	}
	if len(f.rates) != 0 || len(f.throttled) != 0 || len(f.leaderThr) != 0 {
		t.Fatalf("throttle left: rates %v follower %v leader %v", f.rates, f.throttled, f.leaderThr)
	}
	for _, p := range f.topics["__consumer_offsets"] {
		if len(p.Replicas) != 3 || len(p.ISR) != 3 {
			t.Fatalf("partition %d: replicas %v ISR %v", p.ID, p.Replicas, p.ISR)
		}
	}
	if res.Took != clk.Waited() || res.Took < 3*time.Second {
		t.Fatalf("took %s, the clock waited %s: the executor must poll on the injected clock", res.Took, clk.Waited())
	}
}

// The throttle is set before the reassignment: the fake records the
// follower list the moment Reassign runs.
func TestThrottleListsNameCurrentAndAddedReplicas(t *testing.T) {
	th := throttleFor([]Move{{Topic: "t", Partition: 4, Current: []int32{1}, Target: []int32{1, 2, 3}, Adding: []int32{2, 3}}}, 10, []int32{1, 2, 3})
	if !slices.Equal(th.Leader["t"], []string{"4:1"}) || !slices.Equal(th.Follower["t"], []string{"4:2", "4:3"}) || th.RateBytes != 10 {
		t.Fatalf("throttle %+v", th)
	}
}

func TestForeignReassignmentRefused(t *testing.T) {
	f := newFake(3, 5, 1, 1, 2, 3)
	f.running["other-0"] = &fakeMove{topic: "other", partition: 0, target: []int32{2, 3}, adding: []int32{3}, left: 100}
	x := &Executor{Cluster: f, Clock: clock.NewStepping(time.Unix(0, 0))}
	for _, execute := range []bool{false, true} {
		_, err := x.Run(context.Background(), offsetsRequest(execute))
		if !IsForeign(err) || !strings.Contains(err.Error(), "other-0 (replicas [2,3], adding [3], removing [])") {
			t.Fatalf("execute=%v: want a ForeignReassignmentError naming other-0, got %v", execute, err)
		}
	}
	if m := f.mutations(); len(m) != 0 {
		t.Fatalf("a refused repair called %v", m)
	}
	// An unmarked reassignment of the repaired topic itself is foreign too.
	delete(f.running, "other-0")
	f.running["__consumer_offsets-0"] = &fakeMove{topic: "__consumer_offsets", partition: 0, target: []int32{1, 2}, adding: []int32{2}, left: 100}
	if _, err := x.Run(context.Background(), offsetsRequest(true)); !IsForeign(err) {
		t.Fatalf("unmarked reassignment of __consumer_offsets: want refused, got %v", err)
	}
}

// An interrupted run lists what remains and leaves the throttle (the
// reassignment goes on); the second run resumes without submitting the
// running moves again, and cleans up.
func TestInterruptedThenResumed(t *testing.T) {
	f := newFake(3, 10, 1, 1, 2, 3)
	f.steps = -1 // nothing completes during the first run
	x := &Executor{Cluster: f, Clock: clock.NewStepping(time.Unix(0, 0))}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			f.mu.Lock()
			n := len(f.calls)
			f.mu.Unlock()
			if n > 5 {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	res, err := x.Run(ctx, offsetsRequest(true))
	if !errors.Is(err, context.Canceled) || len(res.Remaining) != 10 || res.ThrottleRemoved {
		t.Fatalf("interrupted: err %v remaining %d throttle removed %v", err, len(res.Remaining), res.ThrottleRemoved)
	}
	if len(f.throttled["__consumer_offsets"]) != 20 || f.rates[2] != 50_000_000 {
		t.Fatalf("the throttle must stay while the reassignment runs: %v %v", f.throttled, f.rates)
	}

	f.steps = 3
	for _, m := range f.running {
		m.left = 3
	}
	before := len(f.mutations())
	res, err = x.Run(context.Background(), offsetsRequest(true))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.mutations()[before:]; !slices.Equal(got, []string{"remove-throttle"}) {
		t.Fatalf("resumed run called %v, want only the throttle removal", got)
	}
	if len(res.Resumed) != 10 || len(res.Plan.Moves) != 0 || len(res.Done) != 10 {
		t.Fatalf("resumed %d planned %d done %d", len(res.Resumed), len(res.Plan.Moves), len(res.Done))
	}
	if m := res.Resumed[0]; !slices.Equal(m.Current, []int32{1}) || len(m.Target) != 3 {
		t.Fatalf("resumed move %+v", m)
	}
}

func TestBlockedPartitionsRefuseExecution(t *testing.T) {
	f := newFake(3, 3, 9, 1, 2, 3) // replicas on broker 9, which is not live
	x := &Executor{Cluster: f, Clock: clock.NewStepping(time.Unix(0, 0))}
	_, err := x.Run(context.Background(), offsetsRequest(true))
	if err == nil || !strings.Contains(err.Error(), "not up") {
		t.Fatalf("want refusal naming the broker not up, got %v", err)
	}
	if m := f.mutations(); len(m) != 0 {
		t.Fatalf("a refused repair called %v", m)
	}
}

func TestThrottleFailureSubmitsNothing(t *testing.T) {
	f := newFake(3, 3, 1, 1, 2, 3)
	f.failSet = errors.New("CLUSTER_AUTHORIZATION_FAILED")
	x := &Executor{Cluster: f, Clock: clock.NewStepping(time.Unix(0, 0))}
	_, err := x.Run(context.Background(), offsetsRequest(true))
	if err == nil || !strings.Contains(err.Error(), "set the replication throttle") {
		t.Fatalf("got %v", err)
	}
	if got := f.mutations(); !slices.Equal(got, []string{"set-throttle"}) {
		t.Fatalf("calls %v: nothing may be submitted after the throttle failed", got)
	}
}

func TestMissingTopic(t *testing.T) {
	f := newFake(3, 3, 1, 1, 2, 3)
	x := &Executor{Cluster: f}
	_, err := x.Run(context.Background(), Request{Topics: []TopicRequest{{Name: "nope", TargetRF: 3}}})
	if err == nil || !strings.Contains(err.Error(), "topic nope does not exist") {
		t.Fatalf("got %v", err)
	}
}

func TestMerge(t *testing.T) {
	if got := merge([]string{"0:1"}, []string{"0:1", "0:2"}); !slices.Equal(got, []string{"0:1", "0:2"}) {
		t.Fatal(got)
	}
	if got := merge([]string{"*"}, []string{"0:2"}); !slices.Equal(got, []string{"*"}) {
		t.Fatal(got)
	}
}

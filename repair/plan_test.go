package repair

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func brokers(ids ...int32) []Broker {
	out := make([]Broker, len(ids))
	for i, id := range ids {
		out[i] = Broker{ID: id}
	}
	return out
}

func singleReplica(topic string, n int, on int32) TopicRequest {
	t := TopicRequest{Name: topic}
	for p := 0; p < n; p++ {
		t.Partitions = append(t.Partitions, PartitionState{ID: int32(p), Leader: on, Replicas: []int32{on}, ISR: []int32{on}})
	}
	return t
}

// Incident 2: 50 partitions, all on broker 1, raised to 3 on 3 brokers.
func TestPlanIncident2(t *testing.T) {
	req := singleReplica("__consumer_offsets", 50, 1)
	req.TargetRF = 3
	plan, err := MakePlan([]TopicRequest{req}, brokers(3, 1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Moves) != 50 || len(plan.Blocked) != 0 {
		t.Fatalf("moves %d blocked %d, want 50 and 0", len(plan.Moves), len(plan.Blocked))
	}
	for _, m := range plan.Moves {
		if !reflect.DeepEqual(m.Target, []int32{1, 2, 3}) && !reflect.DeepEqual(m.Target, []int32{1, 3, 2}) {
			t.Fatalf("partition %d: target %v, want broker 1 first then 2 and 3", m.Partition, m.Target)
		}
	}
	if tp := plan.Topics[0]; tp.CurrentRF != 1 || tp.TargetRF != 3 || tp.Moves != 50 || tp.Partitions != 50 {
		t.Fatalf("topic plan %+v", tp)
	}
}

// On 5 brokers the 100 added replicas of 50 partitions land 25 on each of
// brokers 2-5.
func TestPlanSpreadsAddedReplicas(t *testing.T) {
	req := singleReplica("__consumer_offsets", 50, 1)
	req.TargetRF = 3
	plan, err := MakePlan([]TopicRequest{req}, brokers(1, 2, 3, 4, 5))
	if err != nil {
		t.Fatal(err)
	}
	added := map[int32]int{}
	for _, m := range plan.Moves {
		for _, a := range m.Adding {
			added[a]++
		}
	}
	if !reflect.DeepEqual(added, map[int32]int{2: 25, 3: 25, 4: 25, 5: 25}) {
		t.Fatalf("added replicas per broker %v, want 25 on each of 2-5", added)
	}
}

func TestPlanRackAware(t *testing.T) {
	live := []Broker{{1, "a"}, {2, "a"}, {3, "b"}, {4, "c"}}
	req := singleReplica("t", 6, 1)
	req.TargetRF = 3
	plan, err := MakePlan([]TopicRequest{req}, live)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.RackAware {
		t.Fatal("every broker has a rack, the plan must be rack-aware")
	}
	for _, m := range plan.Moves {
		if !reflect.DeepEqual(m.Target, []int32{1, 3, 4}) {
			t.Fatalf("partition %d: target %v, want [1 3 4] (racks a, b, c; broker 2 shares rack a with 1)", m.Partition, m.Target)
		}
	}
	// Racks on only some brokers: ignored, with a note.
	live[3].Rack = ""
	plan, err = MakePlan([]TopicRequest{req}, live)
	if err != nil {
		t.Fatal(err)
	}
	if plan.RackAware || len(plan.Notes) != 1 || !strings.Contains(plan.Notes[0], "only 3 of 4") {
		t.Fatalf("mixed racks: rack-aware %v notes %v", plan.RackAware, plan.Notes)
	}
}

func TestPlanTooFewBrokers(t *testing.T) {
	req := singleReplica("__consumer_offsets", 3, 1)
	req.TargetRF = 3
	_, err := MakePlan([]TopicRequest{req}, brokers(1, 2))
	if !IsTooFewBrokers(err) || !strings.Contains(err.Error(), "needs 3 live brokers, only 2 are up ([1 2])") {
		t.Fatalf("want a TooFewBrokersError, got %v", err)
	}
	req.TargetRF = 0
	if _, err := MakePlan([]TopicRequest{req}, brokers(1, 2)); err == nil || IsTooFewBrokers(err) {
		t.Fatalf("target 0: want an error, got %v", err)
	}
}

func TestPlanBlocksPartitionsOnDeadBrokers(t *testing.T) {
	req := TopicRequest{Name: "t", TargetRF: 3, Partitions: []PartitionState{
		{ID: 0, Leader: -1, Replicas: []int32{9}},
		{ID: 1, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}},
		{ID: 2, Leader: 1, Replicas: []int32{1, 1}, ISR: []int32{1}},
	}}
	plan, err := MakePlan([]TopicRequest{req}, brokers(1, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Moves) != 1 || plan.Moves[0].Partition != 1 {
		t.Fatalf("moves %+v, want only partition 1", plan.Moves)
	}
	if len(plan.Blocked) != 2 || !strings.Contains(plan.Blocked[0].Reason, "[9], which are not up") || !strings.Contains(plan.Blocked[1].Reason, "listed twice") {
		t.Fatalf("blocked %+v", plan.Blocked)
	}
}

func TestPlanLeavesEnoughReplicasAlone(t *testing.T) {
	req := TopicRequest{Name: "t", TargetRF: 2, Partitions: []PartitionState{
		{ID: 0, Replicas: []int32{1, 2, 3}}, {ID: 1, Replicas: []int32{2, 3}}, {ID: 2, Replicas: []int32{3}},
	}}
	plan, err := MakePlan([]TopicRequest{req}, brokers(1, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Moves) != 1 || plan.Moves[0].Partition != 2 || !reflect.DeepEqual(plan.Moves[0].Target, []int32{3, 1}) {
		t.Fatalf("moves %+v, want only partition 2: [3] -> [3 1] (broker 1 holds the fewest replicas)", plan.Moves)
	}
	if plan.Topics[0].CurrentRF != 1 {
		t.Fatalf("current RF %d, want the smallest, 1", plan.Topics[0].CurrentRF)
	}
}

// randomInput is a cluster of 1-9 brokers (racks on all, some or none),
// 1-3 topics of 1-60 partitions with 1-3 distinct replicas, some on dead
// brokers, and targets of 1-4.
func randomInput(r *rand.Rand) ([]TopicRequest, []Broker) {
	n := 1 + r.Intn(9)
	var live []Broker
	rackMode := r.Intn(3)
	for i := 0; i < n; i++ {
		b := Broker{ID: int32(1 + i*2)}
		if rackMode == 2 || rackMode == 1 && r.Intn(2) == 0 {
			b.Rack = fmt.Sprintf("r%d", r.Intn(3))
		}
		live = append(live, b)
	}
	all := slices.Clone(live)
	all = append(all, Broker{ID: 100}) // a dead broker
	var topics []TopicRequest
	for t := 0; t < 1+r.Intn(3); t++ {
		tr := TopicRequest{Name: fmt.Sprintf("topic-%d", t), TargetRF: 1 + r.Intn(min(4, n))}
		for p := 0; p < 1+r.Intn(60); p++ {
			k := 1 + r.Intn(min(3, len(all)))
			perm := r.Perm(len(all))[:k]
			var reps []int32
			for _, i := range perm {
				if all[i].ID == 100 && r.Intn(10) > 0 {
					continue
				}
				reps = append(reps, all[i].ID)
			}
			if len(reps) == 0 {
				reps = []int32{live[0].ID}
			}
			tr.Partitions = append(tr.Partitions, PartitionState{ID: int32(p), Replicas: reps, ISR: reps})
		}
		topics = append(topics, tr)
	}
	return topics, live
}

// Properties over random inputs: every partition below its target on live
// brokers reaches exactly the target, keeps its replicas in order, gains
// only live brokers, never holds a broker twice; partitions at or above
// the target are untouched; dead replicas block; rack-aware plans add a
// new rack while one is left; the plan does not depend on input order.
func TestPlanProperties(t *testing.T) {
	r := rand.New(rand.NewSource(16))
	for iter := 0; iter < 2000; iter++ {
		topics, live := randomInput(r)
		plan, err := MakePlan(topics, live)
		if err != nil {
			t.Fatalf("iteration %d: %v", iter, err)
		}
		liveIDs := map[int32]string{}
		racks := map[string]bool{}
		for _, b := range live {
			liveIDs[b.ID] = b.Rack
			racks[b.Rack] = true
		}
		moves := map[string]Move{}
		for _, m := range plan.Moves {
			moves[fmt.Sprintf("%s-%d", m.Topic, m.Partition)] = m
		}
		blocked := map[string]bool{}
		for _, b := range plan.Blocked {
			blocked[fmt.Sprintf("%s-%d", b.Topic, b.Partition)] = true
		}
		for _, tr := range topics {
			for _, p := range tr.Partitions {
				key := fmt.Sprintf("%s-%d", tr.Name, p.ID)
				m, moved := moves[key]
				dead := len(notIn(p.Replicas, liveIDs)) > 0
				switch {
				case len(p.Replicas) >= tr.TargetRF:
					if moved || blocked[key] {
						t.Fatalf("iteration %d: %s has %v, target %d, yet is in the plan", iter, key, p.Replicas, tr.TargetRF)
					}
				case dead:
					if moved || !blocked[key] {
						t.Fatalf("iteration %d: %s has a dead replica %v: want blocked", iter, key, p.Replicas)
					}
				default:
					if !moved {
						t.Fatalf("iteration %d: %s %v below target %d not planned", iter, key, p.Replicas, tr.TargetRF)
					}
					if len(m.Target) != tr.TargetRF || !slices.Equal(m.Target[:len(p.Replicas)], p.Replicas) || !slices.Equal(m.Target[len(p.Replicas):], m.Adding) {
						t.Fatalf("iteration %d: %s %v -> %v (adding %v), target %d", iter, key, p.Replicas, m.Target, m.Adding, tr.TargetRF)
					}
					if duplicate(m.Target) >= 0 {
						t.Fatalf("iteration %d: %s target %v holds a broker twice", iter, key, m.Target)
					}
					for _, a := range m.Adding {
						if _, ok := liveIDs[a]; !ok {
							t.Fatalf("iteration %d: %s gains broker %d, not live", iter, key, a)
						}
					}
					if plan.RackAware {
						have := map[string]bool{}
						for _, b := range p.Replicas {
							have[liveIDs[b]] = true
						}
						if want := min(len(racks), len(have)+len(m.Adding)); len(rackSet(m.Target, liveIDs)) != want {
							t.Fatalf("iteration %d: %s target %v spans %d racks, want %d", iter, key, m.Target, len(rackSet(m.Target, liveIDs)), want)
						}
					}
				}
			}
		}
		// Shuffled input, same plan.
		shuffled := slices.Clone(topics)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for i := range shuffled {
			ps := slices.Clone(shuffled[i].Partitions)
			r.Shuffle(len(ps), func(a, b int) { ps[a], ps[b] = ps[b], ps[a] })
			shuffled[i].Partitions = ps
		}
		sl := slices.Clone(live)
		r.Shuffle(len(sl), func(i, j int) { sl[i], sl[j] = sl[j], sl[i] })
		again, err := MakePlan(shuffled, sl)
		if err != nil || !reflect.DeepEqual(plan, again) {
			t.Fatalf("iteration %d: the plan depends on the input order (%v)", iter, err)
		}
	}
}

// Balance: from single-replica partitions piled on one broker (incident
// 2), without racks, the final replica counts of the other brokers differ
// by at most one; from partitions spread evenly, by at most two (the
// choice is greedy, and a partition cannot take a replica on its own
// broker, so the last partitions may find the lightest broker taken).
func TestPlanBalanceProperty(t *testing.T) {
	r := rand.New(rand.NewSource(17))
	for iter := 0; iter < 500; iter++ {
		n := 2 + r.Intn(8)
		var live []Broker
		for i := 1; i <= n; i++ {
			live = append(live, Broker{ID: int32(i)})
		}
		req := TopicRequest{Name: "t", TargetRF: 2 + r.Intn(n-1)}
		piled := r.Intn(2) == 0
		for p := 0; p < 1+r.Intn(100); p++ {
			on := int32(1)
			if !piled {
				on = int32(1 + p%n)
			}
			req.Partitions = append(req.Partitions, PartitionState{ID: int32(p), Replicas: []int32{on}})
		}
		plan, err := MakePlan([]TopicRequest{req}, live)
		if err != nil {
			t.Fatal(err)
		}
		load := map[int32]int{}
		for _, m := range plan.Moves {
			for _, b := range m.Target {
				if !piled || b != 1 {
					load[b]++
				}
			}
		}
		lo, hi := -1, 0
		for _, b := range live {
			if piled && b.ID == 1 {
				continue
			}
			c := load[b.ID]
			if lo < 0 || c < lo {
				lo = c
			}
			hi = max(hi, c)
		}
		if limit := map[bool]int{true: 1, false: 2}[piled]; hi-lo > limit {
			t.Fatalf("iteration %d (%d brokers, %d partitions, target %d, piled %v): replicas per broker %v", iter, n, len(req.Partitions), req.TargetRF, piled, load)
		}
	}
}

func rackSet(ids []int32, rackOf map[int32]string) map[string]bool {
	out := map[string]bool{}
	for _, id := range ids {
		out[rackOf[id]] = true
	}
	return out
}

func TestFormatIDs(t *testing.T) {
	if got := FormatIDs([]int32{1, 2, 3}); got != "[1,2,3]" {
		t.Fatal(got)
	}
	if got := FormatIDs(nil); got != "[]" {
		t.Fatal(got)
	}
}

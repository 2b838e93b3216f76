// Package repair plans and carries out one repair online: raising the
// replication factor of topics (__consumer_offsets, Connect's internal
// topics) by partition reassignment, the safe mend for a single-replica
// __consumer_offsets (created while one broker ran), where one broker's
// death leaves groups without a coordinator.
//
// It has two halves. Plan is pure: from the topics' current assignments,
// the live brokers (with their racks) and a target replication factor it
// computes, deterministically, which replicas each partition gains.
// Executor.Run carries a plan out against a Cluster (sarama.go is the real one): it
// throttles replication, submits the reassignment, follows it until every
// partition's in-sync replicas hold the new replicas, removes the throttle
// and verifies. Interrupted, it says what remains; run again, it resumes.
//
// Targets decides each topic's target factor from the brokers' settings
// and the worker's configured factors, and CountBrokers and ShortTargets
// the refusals (a registered broker down, a target below the one wanted).
// The package knows nothing of connect-init's settings: the command reads
// them and hands the topics and their configured factors over.
package repair

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Broker is a live broker as the metadata lists it.
type Broker struct {
	ID int32
	// Rack is broker.rack, "" when unset.
	Rack string
}

// PartitionState is one partition as the cluster reports it.
type PartitionState struct {
	ID int32
	// Leader is -1 when the partition has none.
	Leader   int32
	Replicas []int32
	ISR      []int32
}

// TopicRequest asks for one topic to reach a replication factor.
type TopicRequest struct {
	Name       string
	Partitions []PartitionState
	// TargetRF is the replication factor wanted; partitions that already
	// have at least this many replicas are left alone (a repair never
	// removes a replica).
	TargetRF int
	// Why says where TargetRF comes from ("offsets.topic.replication.factor=3
	// on the brokers", "--replication-factor 3"), for the printed plan.
	Why string
	// Wanted, when above TargetRF, is the factor the request would have
	// aimed for had enough brokers been live: the plan says so first, and
	// ShortTargets holds the execution back (RefuseShort) unless the
	// factor was asked for explicitly.
	Wanted int
}

// Move is one partition's reassignment: its replica list before and after.
// Target keeps Current's replicas in their order (so the preferred leader,
// Target[0], is unchanged) and appends Adding.
type Move struct {
	Topic     string
	Partition int32
	Current   []int32
	Target    []int32
	Adding    []int32
}

// Blocked is a partition the plan cannot raise, with the reason.
type Blocked struct {
	Topic     string
	Partition int32
	Replicas  []int32
	Reason    string
}

// TopicPlan summarises one topic of a plan.
type TopicPlan struct {
	Name       string
	Partitions int
	// CurrentRF is the smallest replica count of any partition, and
	// TargetRF the factor asked for.
	CurrentRF, TargetRF int
	Why                 string
	// Moves is how many of its partitions the plan reassigns.
	Moves int
}

// Plan is what a repair will do. It is the same for the same input,
// whatever the order of topics, partitions or brokers.
type Plan struct {
	Topics  []TopicPlan
	Moves   []Move
	Blocked []Blocked
	// Brokers are the live brokers the plan spreads over, by id.
	Brokers []Broker
	// RackAware is true when every live broker has a rack; the plan then
	// gives each partition as many racks as it can.
	RackAware bool
	// Notes are remarks worth printing (racks on only some brokers).
	Notes []string
}

// TooFewBrokersError is a target replication factor above the number of
// live brokers: no plan can give a partition two replicas on one broker.
type TooFewBrokersError struct {
	Topic    string
	TargetRF int
	Live     []int32
}

func (e *TooFewBrokersError) Error() string {
	return fmt.Sprintf("topic %s: replication factor %d needs %d live brokers, only %d are up (%v): start the missing brokers, or ask for a smaller --replication-factor",
		e.Topic, e.TargetRF, e.TargetRF, len(e.Live), e.Live)
}

// MakePlan computes the reassignments that raise every requested topic to
// its target replication factor over the live brokers.
//
// Each partition keeps its replicas in their order, so no leadership moves:
// moving the leaders of __consumer_offsets would move group coordinators
// (every group of a moved partition reloads) in the middle of a repair.
// Each missing replica goes, one at a time, to the live broker not yet in
// the partition that (1) adds a rack the partition lacks, when every broker
// has a rack, (2) holds the fewest replicas of the requested topics so far,
// (3) holds the fewest of the replicas this plan adds, and (4) has the
// lowest id. Partitions are taken in topic-name and partition order, so the
// result depends only on the input's content. A partition with a replica
// on a broker that is not live is blocked: the reassignment could never
// complete, since every target replica must join the ISR.
func MakePlan(topics []TopicRequest, live []Broker) (Plan, error) {
	sp := newSpread(live)
	plan := Plan{Brokers: sp.brokers, RackAware: sp.rackAware}
	if sp.withRack > 0 && !sp.rackAware {
		plan.Notes = append(plan.Notes, fmt.Sprintf("only %d of %d live brokers have broker.rack set: racks are ignored", sp.withRack, len(sp.brokers)))
	}
	reqs := slices.Clone(topics)
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].Name < reqs[j].Name })
	for _, t := range reqs {
		if t.TargetRF > len(sp.brokers) {
			return Plan{}, &TooFewBrokersError{Topic: t.Name, TargetRF: t.TargetRF, Live: sp.ids}
		}
		if t.TargetRF < 1 {
			return Plan{}, fmt.Errorf("topic %s: target replication factor %d is not positive", t.Name, t.TargetRF)
		}
	}
	for _, t := range reqs {
		for _, p := range t.Partitions {
			for _, r := range p.Replicas {
				sp.load[r]++
			}
		}
	}
	for _, t := range reqs {
		plan.Topics = append(plan.Topics, sp.planTopic(t, &plan))
	}
	return plan, nil
}

// spread is the state MakePlan places replicas with: the live brokers,
// deduplicated and by id (so the input's order cannot change the plan),
// their racks, and the counts the order of preference reads.
type spread struct {
	brokers   []Broker
	ids       []int32
	rackOf    map[int32]string // every live broker, "" without a rack
	withRack  int
	rackAware bool
	// load counts every replica of the requested topics per live broker;
	// added counts the replicas this plan adds.
	load, added map[int32]int
}

// newSpread takes in the live brokers; racks count only when every one
// has a rack, since a half-racked cluster gives no even spread.
func newSpread(live []Broker) *spread {
	brokers := slices.Clone(live)
	sort.Slice(brokers, func(i, j int) bool { return brokers[i].ID < brokers[j].ID })
	brokers = slices.CompactFunc(brokers, func(a, b Broker) bool { return a.ID == b.ID })
	sp := &spread{brokers: brokers, ids: make([]int32, len(brokers)), rackOf: map[int32]string{},
		load: map[int32]int{}, added: map[int32]int{}}
	for i, b := range brokers {
		sp.ids[i] = b.ID
		sp.rackOf[b.ID] = b.Rack
		if b.Rack != "" {
			sp.withRack++
		}
	}
	sp.rackAware = sp.withRack > 0 && sp.withRack == len(brokers)
	return sp
}

// planTopic plans one topic's partitions, in partition order, adding its
// moves and blocked partitions to plan, and returns its summary.
func (sp *spread) planTopic(t TopicRequest, plan *Plan) TopicPlan {
	parts := slices.Clone(t.Partitions)
	sort.Slice(parts, func(i, j int) bool { return parts[i].ID < parts[j].ID })
	tp := TopicPlan{Name: t.Name, Partitions: len(parts), TargetRF: t.TargetRF, Why: t.Why, CurrentRF: -1}
	for _, p := range parts {
		if tp.CurrentRF < 0 || len(p.Replicas) < tp.CurrentRF {
			tp.CurrentRF = len(p.Replicas)
		}
		if len(p.Replicas) >= t.TargetRF {
			continue
		}
		if reason := sp.blocked(p.Replicas); reason != "" {
			plan.Blocked = append(plan.Blocked, Blocked{Topic: t.Name, Partition: p.ID, Replicas: slices.Clone(p.Replicas), Reason: reason})
			continue
		}
		target := slices.Clone(p.Replicas)
		var adding []int32
		for len(target) < t.TargetRF {
			b := sp.pick(target)
			target = append(target, b)
			adding = append(adding, b)
			sp.load[b]++
			sp.added[b]++
		}
		plan.Moves = append(plan.Moves, Move{Topic: t.Name, Partition: p.ID, Current: slices.Clone(p.Replicas), Target: target, Adding: adding})
		tp.Moves++
	}
	if tp.CurrentRF < 0 {
		tp.CurrentRF = 0
	}
	return tp
}

// blocked says why a partition's reassignment could not complete, ""
// when it can: a replica on a broker that is down never joins the ISR,
// and a broker listed twice is a replica list Kafka refuses.
func (sp *spread) blocked(replicas []int32) string {
	if dead := notIn(replicas, sp.rackOf); len(dead) > 0 {
		return fmt.Sprintf("replica(s) on broker(s) %v, which are not up: a reassignment completes only when every replica is in sync; bring them back first", dead)
	}
	if dup := duplicate(replicas); dup >= 0 {
		return fmt.Sprintf("broker %d is listed twice in its replicas", dup)
	}
	return ""
}

// pick chooses the broker for one more replica of a partition whose
// replicas are so far `have` (see MakePlan for the order of preference).
func (sp *spread) pick(have []int32) int32 {
	racks := map[string]bool{}
	for _, r := range have {
		racks[sp.rackOf[r]] = true
	}
	best, bestKey := int32(-1), [3]int{}
	for _, b := range sp.brokers {
		if slices.Contains(have, b.ID) {
			continue
		}
		newRack := 1
		if sp.rackAware && !racks[b.Rack] {
			newRack = 0
		}
		key := [3]int{newRack, sp.load[b.ID], sp.added[b.ID]}
		if best < 0 || less(key, bestKey) {
			best, bestKey = b.ID, key
		}
	}
	return best // MakePlan checked len(brokers) >= target > len(have)
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// notIn returns the replicas that are not live brokers.
func notIn(replicas []int32, live map[int32]string) []int32 {
	var out []int32
	for _, r := range replicas {
		if _, ok := live[r]; !ok {
			out = append(out, r)
		}
	}
	return out
}

// duplicate returns a broker listed twice in replicas, or -1.
func duplicate(replicas []int32) int32 {
	seen := map[int32]bool{}
	for _, r := range replicas {
		if seen[r] {
			return r
		}
		seen[r] = true
	}
	return -1
}

// Empty reports whether the plan changes nothing.
func (p Plan) Empty() bool { return len(p.Moves) == 0 }

// FormatIDs renders broker ids as Kafka's tools do: [1,2,3].
func FormatIDs(ids []int32) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

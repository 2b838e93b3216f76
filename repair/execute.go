package repair

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka/notyet"
)

// Reassignment is one partition reassignment in progress, as
// ListPartitionReassignments reports it.
type Reassignment struct {
	Topic     string
	Partition int32
	// Replicas is the partition's replica set now (target and removing).
	Replicas []int32
	Adding   []int32
	Removing []int32
}

// State is one look at the cluster.
type State struct {
	Brokers []Broker
	// Topics maps the topics asked about to their partitions; a topic that
	// does not exist is absent.
	Topics map[string][]PartitionState
	// Reassignments are every reassignment in progress in the cluster, of
	// any topic.
	Reassignments []Reassignment
	// FollowerThrottled maps each topic asked about to its
	// follower.replication.throttled.replicas entries ("partition:broker").
	FollowerThrottled map[string][]string
}

// Throttle is what Executor.Run sets for the reassignment and removes after it:
// on topics, leader.replication.throttled.replicas (the replicas that send)
// and follower.replication.throttled.replicas (those that receive); on the
// brokers, leader/follower.replication.throttled.rate (RateBytes per second;
// 0 sets no rate). The topic lists are set even without a rate: they mark
// the reassignments as this tool's, so that a second run resumes them.
type Throttle struct {
	RateBytes int64
	Brokers   []int32
	// Leader and Follower map topic -> "partition:broker" entries.
	Leader, Follower map[string][]string
}

// Cluster is what a repair needs from Kafka (Targets and Executor.Run);
// sarama.go has the real one.
type Cluster interface {
	// Describe reads the live brokers, the topics' partitions, all
	// reassignments in progress and the topics' follower throttle lists.
	Describe(ctx context.Context, topics []string) (State, error)
	// Reassign submits the moves (AlterPartitionReassignments).
	Reassign(ctx context.Context, moves []Move) error
	// SetThrottle sets t (merging the topic lists with what is there).
	SetThrottle(ctx context.Context, t Throttle) error
	// RemoveThrottle deletes the throttle settings from the topics and
	// brokers named.
	RemoveThrottle(ctx context.Context, topics []string, brokers []int32) error
	// BrokerSetting reads one setting of a live broker ("" when the broker
	// does not report it), for the targets that follow the brokers'
	// configuration.
	BrokerSetting(id int32, name string) (string, error)
}

// ForeignReassignmentError is a reassignment in progress that this tool did
// not start: Executor.Run refuses to add its own beside it.
type ForeignReassignmentError struct {
	Running []Reassignment
}

func (e *ForeignReassignmentError) Error() string {
	parts := make([]string, 0, len(e.Running))
	for i, r := range e.Running {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Running)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%s-%d (replicas %s, adding %s, removing %s)", r.Topic, r.Partition,
			FormatIDs(r.Replicas), FormatIDs(r.Adding), FormatIDs(r.Removing)))
	}
	return fmt.Sprintf("a partition reassignment that connect-init repair did not start is in progress: %s; let it finish (kafka-reassign-partitions --verify) or cancel it (kafka-reassign-partitions --cancel), then run repair again",
		strings.Join(parts, ", "))
}

// Request is one repair: the topics with their target factors, how to
// throttle, and whether to change anything.
type Request struct {
	// Topics are the topics to raise, with their target factors.
	// Partitions are read by Executor.Run and need not be filled in.
	Topics []TopicRequest
	// RateBytes is the replication throttle in bytes per second (0: none).
	RateBytes int64
	// Execute false only plans: nothing in the cluster changes.
	Execute bool
	// Poll is how often progress is read (default 1 s).
	Poll time.Duration
}

// Result is what a repair found and did.
type Result struct {
	Plan Plan
	// Resumed are reassignments this tool started earlier and found still
	// in progress: Executor.Run follows them instead of planning them again.
	Resumed []Move
	// Submitted is true once the plan's moves were handed to Kafka.
	Submitted bool
	// Done lists the moves whose partitions have the target replicas, all
	// in sync; Remaining those that do not (yet).
	Done, Remaining []Move
	// ThrottleRemoved is true once the throttle settings were deleted.
	ThrottleRemoved bool
	// Took is how long the execution ran, on the injected clock.
	Took time.Duration
}

// Executor runs repairs against a Cluster.
type Executor struct {
	Cluster Cluster
	Log     *slog.Logger
	Clock   clock.Clock
}

// Look reads the cluster and plans the request without changing
// anything: the reassignments this tool started earlier and that are still
// running are returned as Resumed, a reassignment anyone else started is
// a ForeignReassignmentError.
func (x *Executor) Look(ctx context.Context, req Request) (Result, State, error) {
	names := make([]string, len(req.Topics))
	for i, t := range req.Topics {
		names[i] = t.Name
	}
	st, err := x.describe(ctx, names)
	if err != nil {
		return Result{}, st, fmt.Errorf("read the cluster: %w", err)
	}
	var res Result
	var foreign []Reassignment
	for _, r := range st.Reassignments {
		if m, ok := ours(r, st.FollowerThrottled[r.Topic]); ok && slices.Contains(names, r.Topic) {
			res.Resumed = append(res.Resumed, m)
			continue
		}
		foreign = append(foreign, r)
	}
	if len(foreign) > 0 {
		return res, st, &ForeignReassignmentError{Running: foreign}
	}
	reqs := make([]TopicRequest, 0, len(req.Topics))
	for _, t := range req.Topics {
		parts, ok := st.Topics[t.Name]
		if !ok {
			return res, st, fmt.Errorf("topic %s does not exist", t.Name)
		}
		t.Partitions = parts
		reqs = append(reqs, t)
	}
	if res.Plan, err = MakePlan(reqs, st.Brokers); err != nil {
		return res, st, err
	}
	return res, st, nil
}

// ours reports whether a reassignment in progress is one this tool
// started: it only adds replicas, and the topic's follower throttle list
// (which Executor.Run sets before it submits) names every replica it adds.
func ours(r Reassignment, throttled []string) (Move, bool) {
	if len(r.Removing) > 0 || len(r.Adding) == 0 {
		return Move{}, false
	}
	for _, a := range r.Adding {
		if !slices.Contains(throttled, fmt.Sprintf("%d:%d", r.Partition, a)) {
			return Move{}, false
		}
	}
	var current []int32
	for _, id := range r.Replicas {
		if !slices.Contains(r.Adding, id) {
			current = append(current, id)
		}
	}
	return Move{Topic: r.Topic, Partition: r.Partition, Current: current, Target: slices.Clone(r.Replicas), Adding: slices.Clone(r.Adding)}, true
}

// Run plans the request and, when req.Execute is set, carries it out:
// throttle, submit, follow until done (or ctx ends), remove the throttle,
// verify. The returned Result says what remains when it did not finish.
func (x *Executor) Run(ctx context.Context, req Request) (res Result, err error) {
	clk := clock.Or(x.Clock)
	log := x.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	res, st, err := x.Look(ctx, req)
	if err != nil || !req.Execute {
		return res, err
	}
	if len(res.Plan.Blocked) > 0 {
		b := res.Plan.Blocked[0]
		return res, fmt.Errorf("%d partition(s) cannot be raised, e.g. %s-%d with replicas %s: %s", len(res.Plan.Blocked), b.Topic, b.Partition, FormatIDs(b.Replicas), b.Reason)
	}
	start := clk.Now()
	defer func() { res.Took = clk.Now().Sub(start) }()

	moves := append(slices.Clone(res.Resumed), res.Plan.Moves...)
	topics := topicNames(req.Topics)
	brokers := brokerIDs(st.Brokers)
	if len(moves) == 0 {
		log.Info("nothing to reassign", "topics", topics)
	} else {
		if len(res.Plan.Moves) > 0 {
			if err := x.Cluster.SetThrottle(ctx, throttleFor(res.Plan.Moves, req.RateBytes, brokers)); err != nil {
				return res, fmt.Errorf("set the replication throttle: %w", err)
			}
			if err := x.Cluster.Reassign(ctx, res.Plan.Moves); err != nil {
				res.Remaining = moves
				return res, fmt.Errorf("submit the reassignment of %d partition(s): %w", len(res.Plan.Moves), err)
			}
			res.Submitted = true
			log.Info("reassignment submitted", "partitions", len(res.Plan.Moves), "resumed", len(res.Resumed), "throttle_bytes_per_second", req.RateBytes)
		} else {
			log.Info("resuming reassignment", "partitions", len(res.Resumed))
		}
		if err := x.follow(ctx, clk, log, req, topics, moves, &res); err != nil {
			return res, err
		}
	}
	if err := x.Cluster.RemoveThrottle(ctx, topics, brokers); err != nil {
		return res, fmt.Errorf("remove the replication throttle: %w", err)
	}
	res.ThrottleRemoved = true
	return res, x.verify(ctx, topics, moves)
}

// describe reads the cluster, looking again while its answer is "not
// yet" (notyet.Is: the controller moving, a leader being elected, a broker
// restarting) until ctx ends, with a wait line every 5 s; an answer
// waiting cannot change is returned at once.
func (x *Executor) describe(ctx context.Context, topics []string) (State, error) {
	clk := clock.Or(x.Clock)
	log := x.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var lastLog time.Time
	for n := 0; ; n++ {
		st, err := x.Cluster.Describe(ctx, topics)
		if err == nil || !notyet.Is(err) || ctx.Err() != nil {
			return st, err
		}
		if n == 1 || n > 1 && clk.Now().Sub(lastLog) >= 5*time.Second {
			log.Info("waiting for the cluster to finish creating or moving", "waiting_for", "the topics' metadata", "answer", err.Error())
			lastLog = clk.Now()
		}
		select {
		case <-ctx.Done():
			return st, err
		case <-clk.After(200 * time.Millisecond):
		}
	}
}

// follow polls until every move is done or ctx ends.
func (x *Executor) follow(ctx context.Context, clk clock.Clock, log *slog.Logger, req Request, topics []string, moves []Move, res *Result) error {
	poll := req.Poll
	if poll <= 0 {
		poll = time.Second
	}
	lastDone, lastLog := -1, clk.Now()
	for {
		st, err := x.Cluster.Describe(ctx, topics)
		if err == nil {
			res.Done, res.Remaining = split(moves, st)
			if len(res.Remaining) == 0 {
				log.Info("reassignment complete", "partitions", len(moves))
				return nil
			}
			if len(res.Done) != lastDone || clk.Now().Sub(lastLog) >= 5*time.Second {
				r := res.Remaining[0]
				log.Info("reassignment progress", "done", len(res.Done), "of", len(moves), "waiting_for", fmt.Sprintf("%s-%d", r.Topic, r.Partition))
				lastDone, lastLog = len(res.Done), clk.Now()
			}
		} else {
			log.Warn("cannot read the reassignment's progress", "error", err.Error())
			if res.Remaining == nil {
				res.Remaining = moves
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped before the reassignment finished (%d of %d partitions done): %w", len(res.Done), len(moves), ctx.Err())
		case <-clk.After(poll):
		}
	}
}

// split sorts moves into done (no reassignment running, replicas are the
// target, all of them in sync) and remaining.
func split(moves []Move, st State) (done, remaining []Move) {
	running := map[string]bool{}
	for _, r := range st.Reassignments {
		running[fmt.Sprintf("%s-%d", r.Topic, r.Partition)] = true
	}
	for _, m := range moves {
		if !running[fmt.Sprintf("%s-%d", m.Topic, m.Partition)] && reached(m, st) {
			done = append(done, m)
		} else {
			remaining = append(remaining, m)
		}
	}
	return done, remaining
}

// reached reports whether m's partition has exactly the target replicas,
// all in sync.
func reached(m Move, st State) bool {
	for _, p := range st.Topics[m.Topic] {
		if p.ID != m.Partition {
			continue
		}
		if len(p.Replicas) != len(m.Target) {
			return false
		}
		for _, t := range m.Target {
			if !slices.Contains(p.Replicas, t) || !slices.Contains(p.ISR, t) {
				return false
			}
		}
		return true
	}
	return false
}

// verify reads the cluster once more after the throttle is gone: every
// move's partition must have its target replicas in sync.
func (x *Executor) verify(ctx context.Context, topics []string, moves []Move) error {
	if len(moves) == 0 {
		return nil
	}
	st, err := x.describe(ctx, topics)
	if err != nil {
		return fmt.Errorf("verify the result: %w", err)
	}
	if _, remaining := split(moves, st); len(remaining) > 0 {
		m := remaining[0]
		return fmt.Errorf("verify: %d partition(s) do not have their target replicas in sync, e.g. %s-%d (want %s)", len(remaining), m.Topic, m.Partition, FormatIDs(m.Target))
	}
	return nil
}

// throttleFor is the throttle for moves: the current replicas send
// (leader list), the added ones receive (follower list).
func throttleFor(moves []Move, rate int64, brokers []int32) Throttle {
	t := Throttle{RateBytes: rate, Brokers: brokers, Leader: map[string][]string{}, Follower: map[string][]string{}}
	for _, m := range moves {
		for _, r := range m.Current {
			t.Leader[m.Topic] = append(t.Leader[m.Topic], fmt.Sprintf("%d:%d", m.Partition, r))
		}
		for _, r := range m.Adding {
			t.Follower[m.Topic] = append(t.Follower[m.Topic], fmt.Sprintf("%d:%d", m.Partition, r))
		}
	}
	return t
}

func topicNames(ts []TopicRequest) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	sort.Strings(out)
	return out
}

func brokerIDs(bs []Broker) []int32 {
	out := make([]int32, len(bs))
	for i, b := range bs {
		out[i] = b.ID
	}
	slices.Sort(out)
	return out
}

// IsForeign reports whether err is a ForeignReassignmentError.
func IsForeign(err error) bool {
	var fe *ForeignReassignmentError
	return errors.As(err, &fe)
}

// IsTooFewBrokers reports whether err is a TooFewBrokersError.
func IsTooFewBrokers(err error) bool {
	var te *TooFewBrokersError
	return errors.As(err, &te)
}

package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/future"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/step"
)

// JavaStringHashCode is Java's String.hashCode: s[0]*31^(n-1) + ... over
// UTF-16 code units, in 32-bit two's complement arithmetic.
func JavaStringHashCode(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// GroupPartition is the __consumer_offsets partition that holds a group:
// Kafka's Utils.abs(groupId.hashCode()) % partitions, where Utils.abs maps
// Integer.MIN_VALUE to 0.
func GroupPartition(groupID string, partitions int) int32 {
	h := JavaStringHashCode(groupID)
	if h == -2147483648 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % int32(partitions)
}

// CoordinatorReport is what the coordinator gate found.
type CoordinatorReport struct {
	GroupID         string  `json:"group_id"`
	CoordinatorID   int32   `json:"coordinator_id"`
	CoordinatorAddr string  `json:"coordinator_address"`
	Partition       int32   `json:"partition"`
	Partitions      int     `json:"partitions"`
	Leader          int32   `json:"leader"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	// OffsetsTopicReplicationFactor is the broker setting, "" if unreadable.
	OffsetsTopicReplicationFactor string `json:"offsets_topic_replication_factor,omitempty"`
	Brokers                       int    `json:"brokers"`
	// FindError is why no coordinator was found, "" once one was.
	FindError string `json:"find_error,omitempty"`
	// DownReplicas are the replicas of the group's partition whose broker
	// is not live (fenced or no longer registered), read when no
	// coordinator was found.
	DownReplicas []AbsentBroker `json:"down_replicas,omitempty"`
	// Checks are the broken rules (checks.CoordinatorChecks()).
	Checks []checks.Result `json:"checks,omitempty"`
	// Warning is set when the group's partition has fewer than two in-sync
	// replicas on a multi-broker cluster: the consumer-offsets-single-replica
	// result as a line.
	Warning string `json:"warning,omitempty"`
}

// Subject is what the coordinator checks judge; strict is
// CONNECT_INIT_STRICT.
func (r *CoordinatorReport) Subject(strict bool) checks.Coordinator {
	partition := r.Partition
	if r.Partitions == 0 {
		partition = GroupPartition(r.GroupID, 50)
	}
	var down []checks.DownBroker
	for _, d := range r.DownReplicas {
		down = append(down, checks.DownBroker{ID: d.ID, Text: d.String()})
	}
	return checks.Coordinator{GroupID: r.GroupID, Found: r.CoordinatorID >= 0, FindError: r.FindError, DownReplicas: down,
		Partition: partition, Partitions: r.Partitions, Leader: r.Leader, Replicas: r.Replicas, ISR: r.ISR,
		OffsetsTopicReplicationFactor: r.OffsetsTopicReplicationFactor, Brokers: r.Brokers, Strict: strict}
}

// Judge runs the coordinator checks, sets the results and returns the
// gate's verdict: a *GateError naming the error-severity results, nil when
// there is none. Exported so that a test can hold doctor to it.
func (r *CoordinatorReport) Judge(strict bool) error {
	r.Checks = checks.Run(checks.CoordinatorChecks(), r.Subject(strict))
	r.Warning = ""
	for _, c := range r.Checks {
		if c.ID == checks.IDConsumerOffsetsSingle {
			r.Warning = c.String()
		}
	}
	if errs := checks.Errors(r.Checks); len(errs) > 0 {
		return &GateError{Gate: step.Coordinator, Err: errors.New(checks.Join(errs))}
	}
	return nil
}

// CoordinatorGate finds the worker group's coordinator (which makes the
// brokers create __consumer_offsets if needed, now that every broker is
// up) and checks that the group's partition survives a broker loss.
type CoordinatorGate struct {
	Client  sarama.Client
	Admin   sarama.ClusterAdmin
	GroupID string
	Log     *slog.Logger
	Clock   clock.Clock
	// Strict turns the single-replica warning into a failure.
	Strict bool
	// Wait is false for doctor: one look, no retries.
	Wait bool
	// ReadReplicationFactor reads the coordinator's
	// offsets.topic.replication.factor beside the partition (doctor reports
	// it). Otherwise it is read only when a check's finding quotes it: on a
	// healthy cluster it was a round trip of every start (issue 39).
	ReadReplicationFactor bool
	// Known is the coordinator the brokers step found
	// (BrokerGate.FindCoordinator); nil asks for it.
	Known *FoundCoordinator

	// registrations lists the registered brokers with their fenced flag;
	// nil asks the admin client's controller (DescribeClusterVia). Tests
	// set it.
	registrations func() ([]kafka.Registration, error)
}

// Check runs the gate.
func (g *CoordinatorGate) Check(ctx context.Context) (*CoordinatorReport, error) {
	rep := &CoordinatorReport{GroupID: g.GroupID, CoordinatorID: -1, Leader: -1, Partition: -1}
	// The metadata of __consumer_offsets is read while the coordinator is
	// asked for, not after (issue 39): it exists on every cluster that has
	// had a group. Where it does not yet, FindCoordinator creates it and
	// readPartition reads again. The start-up's clients read it with their
	// first metadata (seedTopics), a moment ago: then it is not read again,
	// a round trip less on every start.
	refreshed := future.Done(struct{}{}, nil)
	if !g.cached() {
		refreshed = future.Go(ctx, func(context.Context) (struct{}, error) {
			return struct{}{}, g.Client.RefreshMetadata(ConsumerOffsetsTopic)
		})
	}
	if k := g.Known; k != nil {
		rep.CoordinatorID, rep.CoordinatorAddr = k.ID, k.Addr
	} else {
		coord, done := g.findCoordinator(ctx, rep)
		if done {
			return rep, rep.Judge(g.Strict)
		}
		rep.DownReplicas = nil
		rep.FindError = ""
		rep.CoordinatorID = coord.ID()
		rep.CoordinatorAddr = coord.Addr()
	}
	_, refreshErr := refreshed.WaitContext(ctx)
	if err := g.readPartition(ctx, rep, refreshErr == nil); err != nil {
		return rep, err
	}
	err := rep.Judge(g.Strict)
	if len(rep.Checks) > 0 && !g.ReadReplicationFactor {
		// A finding quotes the setting: read it now, and judge again.
		rep.OffsetsTopicReplicationFactor, _ = g.replicationFactor(ctx, rep.CoordinatorID).Wait()
		err = rep.Judge(g.Strict)
	}
	if err != nil {
		return rep, err
	}
	for _, c := range rep.Checks {
		g.Log.Warn("group coordinator check", "gate", step.Coordinator, "check", c.ID, "partition", rep.Partition,
			"replicas", fmt.Sprint(rep.Replicas), "isr", fmt.Sprint(rep.ISR), "error", c.Summary+" ("+c.Evidence+")", "fix", c.Fix)
	}
	if len(rep.Checks) == 0 {
		g.Log.Info("group coordinator found", "gate", step.Coordinator, "group", g.GroupID, "coordinator", rep.CoordinatorID,
			"partition", rep.Partition, "replicas", fmt.Sprint(rep.Replicas), "isr", fmt.Sprint(rep.ISR))
	}
	return rep, nil
}

// cached says the client's metadata already holds __consumer_offsets.
// sarama's Topics answers from its cache without asking.
func (g *CoordinatorGate) cached() bool {
	topics, err := g.Client.Topics()
	return err == nil && slices.Contains(topics, ConsumerOffsetsTopic)
}

// findCoordinator asks for the group's coordinator until one answers, or
// (done) ctx ends or, without Wait, at the first failure; while it fails it
// looks at where the group lives, at once and then every 5 s, and logs
// every 5 s which replicas are down and the fix.
func (g *CoordinatorGate) findCoordinator(ctx context.Context, rep *CoordinatorReport) (coord *sarama.Broker, done bool) {
	clk := clock.Or(g.Clock)
	lastLog := clk.Now()
	var lastLook time.Time
	for {
		coord, err := bounded(ctx, func() (*sarama.Broker, error) {
			if err := g.Client.RefreshCoordinator(g.GroupID); err != nil {
				return nil, err
			}
			return g.Client.Coordinator(g.GroupID)
		})
		if err == nil {
			return coord, false
		}
		if ctx.Err() == nil || rep.FindError == "" {
			rep.FindError = "find coordinator of group " + strconv.Quote(g.GroupID) + ": " + kafka.ExplainConnError(err)
		}
		if ctx.Err() != nil {
			return nil, true
		}
		if !kafka.NotYet(err) {
			// An answer waiting cannot change (GROUP_AUTHORIZATION_FAILED,
			// INVALID_GROUP_ID, refused credentials): fail now.
			return nil, true
		}
		if lastLook.IsZero() || clk.Now().Sub(lastLook) >= 5*time.Second {
			g.lookAtPartition(ctx, rep)
			lastLook = clk.Now()
		}
		if !g.Wait {
			return nil, true
		}
		if clk.Now().Sub(lastLog) >= 5*time.Second {
			g.logWaiting(rep, err)
			lastLog = clk.Now()
		}
		select {
		case <-ctx.Done():
			return nil, true
		case <-clk.After(jittered(200 * time.Millisecond)):
		}
	}
}

// logWaiting is the progress line while no coordinator answers: the
// group's partition, its replicas, ISR, leader, the brokers down, the fix.
func (g *CoordinatorGate) logWaiting(rep *CoordinatorReport, err error) {
	attrs := []any{"gate", step.Coordinator, "group", g.GroupID, "error", kafka.ExplainConnError(err)}
	if rep.Partitions > 0 {
		down := make([]string, len(rep.DownReplicas))
		for i, d := range rep.DownReplicas {
			down[i] = d.String()
		}
		attrs = append(attrs, "partition", rep.Partition, "replicas", fmt.Sprint(rep.Replicas), "isr", fmt.Sprint(rep.ISR),
			"leader", rep.Leader, "down", strings.Join(down, "; "))
	}
	if c := checks.Run(checks.CoordinatorChecks(), rep.Subject(g.Strict)); len(c) > 0 {
		attrs = append(attrs, "fix", c[0].Fix)
	}
	g.Log.Info("waiting for the group coordinator", attrs...)
}

// readPartition fills in the group's __consumer_offsets partition as the
// metadata shows it, and the coordinator's offsets.topic.replication.factor.
// Partitions of other groups may be offline (a dead broker holding their
// only replica): that is no failure of ours, the metadata read still holds
// every partition. FindCoordinator may just have made the cluster create
// the topic, and the broker this read reaches may not know it yet
// (UNKNOWN_TOPIC_OR_PARTITION), nor a leader for the group's partition:
// those answers are "not yet", and with Wait the read looks again
// (lookAgain) until ctx ends.
//
// fresh says the client's metadata of __consumer_offsets was just read
// (Check reads it ahead): the first look then reads no more. The
// coordinator's offsets.topic.replication.factor is read meanwhile.
func (g *CoordinatorGate) readPartition(ctx context.Context, rep *CoordinatorReport, fresh bool) error {
	var rf *future.Future[string]
	if g.ReadReplicationFactor {
		rf = g.replicationFactor(ctx, rep.CoordinatorID)
	}
	type partition struct {
		count    int
		leader   int32
		replicas []int32
		isr      []int32
	}
	p, err := lookAgain(ctx, g.Clock, g.Log, step.Coordinator, ConsumerOffsetsTopic+" in the metadata, with a leader for the group's partition", g.Wait,
		func() (partition, error) {
			var p partition
			if !fresh {
				if err := g.Client.RefreshMetadata(ConsumerOffsetsTopic); err != nil && !errors.Is(err, sarama.ErrLeaderNotAvailable) {
					return p, err
				}
			}
			fresh = false // a look that failed reads again
			parts, err := g.Client.Partitions(ConsumerOffsetsTopic)
			if err != nil {
				return p, err
			}
			if len(parts) == 0 {
				return p, &notYetGap{what: ConsumerOffsetsTopic + " shows no partitions yet"}
			}
			p.count = len(parts)
			id := GroupPartition(g.GroupID, len(parts))
			p.leader = -1
			leader, err := g.Client.Leader(ConsumerOffsetsTopic, id)
			switch {
			case err == nil:
				p.leader = leader.ID()
			case g.Wait:
				// The coordinator answered for this partition, so it has a
				// leader: a metadata read that shows none lags.
				return p, fmt.Errorf("partition %d: %w", id, err)
			}
			p.replicas, _ = g.Client.Replicas(ConsumerOffsetsTopic, id)
			p.isr, _ = g.Client.InSyncReplicas(ConsumerOffsetsTopic, id)
			return p, nil
		})
	if err != nil {
		return &GateError{Gate: step.Coordinator, Err: lookFailed("describe "+ConsumerOffsetsTopic, err)}
	}
	rep.Partitions = p.count
	rep.Partition = GroupPartition(g.GroupID, p.count)
	rep.Leader, rep.Replicas, rep.ISR = p.leader, p.replicas, p.isr
	rep.Brokers = len(g.Client.Brokers())
	if rf != nil {
		rep.OffsetsTopicReplicationFactor, _ = rf.Wait()
	}
	return nil
}

// replicationFactor reads broker id's offsets.topic.replication.factor in
// the background: "" when it could not be read before ctx ended.
func (g *CoordinatorGate) replicationFactor(ctx context.Context, id int32) *future.Future[string] {
	return future.Go(ctx, func(ctx context.Context) (string, error) {
		v, err := bounded(ctx, func() (string, error) {
			configs, err := kafka.DescribeConfig(g.Admin, sarama.ConfigResource{Type: sarama.BrokerResource,
				Name: strconv.Itoa(int(id)), ConfigNames: []string{offsetsTopicReplicationFactor}})
			return configs[offsetsTopicReplicationFactor], err
		})
		if err != nil {
			return "", nil
		}
		return v, nil
	})
}

// lookAtPartition reads the group's __consumer_offsets partition (leader,
// replicas, ISR) and which replicas' brokers are not live, for the
// coordinator-not-available message. What it cannot read stays unset.
func (g *CoordinatorGate) lookAtPartition(ctx context.Context, rep *CoordinatorReport) {
	if g.Admin == nil {
		return
	}
	type look struct {
		mds         []*sarama.TopicMetadata
		regs        []kafka.Registration
		fencedKnown bool
		regErr      error
	}
	l, err := bounded(ctx, func() (look, error) {
		var l look
		var err error
		if l.mds, err = g.Admin.DescribeTopics([]string{ConsumerOffsetsTopic}); err != nil {
			return l, err
		}
		if g.registrations != nil {
			l.regs, l.regErr = g.registrations()
			l.fencedKnown = true
			return l, nil
		}
		controller, err := g.Admin.Controller()
		if err != nil {
			l.regErr = err
			return l, nil
		}
		l.regs, l.fencedKnown, l.regErr = kafka.DescribeClusterVia(controller)
		return l, nil
	})
	mds, regs, regErr := l.mds, l.regs, l.regErr
	if err != nil || len(mds) != 1 || len(mds[0].Partitions) == 0 {
		return
	}
	rep.Partitions = len(mds[0].Partitions)
	rep.Partition = GroupPartition(g.GroupID, rep.Partitions)
	for _, p := range mds[0].Partitions {
		if p.ID == rep.Partition {
			rep.Leader, rep.Replicas, rep.ISR = p.Leader, p.Replicas, p.Isr
		}
	}
	if regErr != nil {
		return
	}
	rep.DownReplicas = downReplicas(rep.Replicas, regs, l.fencedKnown)
}

// downReplicas are the replicas whose broker is fenced or not registered;
// without fencedKnown (before Kafka 4.0) the two look alike.
func downReplicas(replicas []int32, regs []kafka.Registration, fencedKnown bool) []AbsentBroker {
	byID := map[int32]kafka.Registration{}
	for _, r := range regs {
		byID[r.ID] = r
	}
	var out []AbsentBroker
	for _, id := range replicas {
		r, ok := byID[id]
		switch {
		case !ok && fencedKnown:
			out = append(out, AbsentBroker{ID: id, Addr: "unknown", State: "not registered"})
		case !ok:
			out = append(out, AbsentBroker{ID: id, Addr: "unknown", State: StateNotLive})
		case r.Fenced:
			out = append(out, AbsentBroker{ID: id, Addr: r.Addr, State: StateFenced})
		}
	}
	return out
}

// bounded runs f and returns its answer, or ctx's error as soon as ctx
// ends: sarama's client calls do not take a context, and a gate must end
// with its timeout (CONNECT_INIT_TIMEOUT), not a request timeout later.
// When ctx ends first, f finishes in the background and its answer is
// dropped; f must not write to variables the caller reads.
func bounded[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type answer struct {
		v   T
		err error
	}
	done := make(chan answer, 1)
	go func() {
		v, err := f()
		done <- answer{v, err}
	}()
	select {
	case a := <-done:
		return a.v, a.err
	case <-ctx.Done():
		select {
		case a := <-done: // finished as ctx ended: keep its answer
			return a.v, a.err
		default:
			var zero T
			return zero, ctx.Err()
		}
	}
}

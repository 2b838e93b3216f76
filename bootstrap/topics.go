package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/bootstrap/workerconfig"
)

// TopicOutcome is what the topic gate did with or found for one topic.
type TopicOutcome string

// Topic outcomes.
const (
	TopicCreated                  TopicOutcome = "created"
	TopicExistedOK                TopicOutcome = "existed-ok"
	TopicExistedWithWarnings      TopicOutcome = "existed-with-warnings"
	TopicMissing                  TopicOutcome = "missing" // doctor only: never created there
	TopicError                    TopicOutcome = "error"
	cleanupPolicy                              = "cleanup.policy"
	minInsyncReplicas                          = "min.insync.replicas"
	consumerOffsetsTopic                       = "__consumer_offsets"
	offsetsTopicReplicationFactor              = "offsets.topic.replication.factor"
)

// TopicResult is the typed result for one internal topic.
type TopicResult struct {
	Role              string       `json:"role"`
	Name              string       `json:"name"`
	Outcome           TopicOutcome `json:"outcome"`
	Partitions        int          `json:"partitions"`
	ReplicationFactor int          `json:"replication_factor"`
	CleanupPolicy     string       `json:"cleanup_policy,omitempty"`
	MinInsyncReplicas string       `json:"min_insync_replicas,omitempty"`
	// UnderReplicated lists partitions whose ISR is smaller than their
	// replica set; Offline those without a leader.
	UnderReplicated []int32  `json:"under_replicated,omitempty"`
	Offline         []int32  `json:"offline,omitempty"`
	Warnings        []string `json:"warnings,omitempty"`
	Errors          []string `json:"errors,omitempty"`
}

// TopicReport is the outcome of the topic gate.
type TopicReport struct {
	Topics []TopicResult `json:"topics"`
	// Propagated is true once every broker's metadata showed every topic
	// with a leader for every partition.
	Propagated bool `json:"propagated"`
}

// Failed reports whether any topic is in error.
func (r *TopicReport) Failed() bool {
	for _, t := range r.Topics {
		if t.Outcome == TopicError {
			return true
		}
	}
	return false
}

// TopicGate makes sure Connect's internal topics exist with the right
// layout. Existing topics are validated, never changed.
type TopicGate struct {
	Admin  sarama.ClusterAdmin
	Config *sarama.Config
	Specs  []TopicSpec
	Log    *slog.Logger
	Clock  Clock
	// Create is false for doctor, which only inspects.
	Create bool
}

// Ensure creates missing topics (all three validated by the broker first,
// so a bad setting creates none), validates every topic and waits until
// every broker sees them with leaders.
func (g *TopicGate) Ensure(ctx context.Context) (*TopicReport, error) {
	clock := g.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	existing, err := g.describe(ctx)
	if err != nil {
		return nil, err
	}
	created := map[string]bool{}
	if g.Create {
		var missing []TopicSpec
		for _, s := range g.Specs {
			if _, ok := existing[s.Name]; !ok {
				missing = append(missing, s)
			}
		}
		for _, s := range missing { // validate all before creating any
			if err := g.create(s, true); err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
				return nil, g.createError(s, err)
			}
		}
		for _, s := range missing {
			err := g.create(s, false)
			switch {
			case err == nil:
				created[s.Name] = true
				g.Log.Info("created internal topic", "topic", s.Name, "role", s.Role, "partitions", s.Partitions,
					"replication_factor", s.ReplicationFactor)
			case errors.Is(err, sarama.ErrTopicAlreadyExists):
				g.Log.Info("internal topic was created by another process meanwhile", "topic", s.Name)
			default:
				return nil, g.createError(s, err)
			}
		}
		if len(missing) > 0 {
			if existing, err = g.describeUntilPresent(ctx, clock); err != nil {
				return nil, err
			}
		}
	}

	configs, cfgErr := g.describeTopicConfigs(ctx, existing)
	rep := &TopicReport{}
	for _, s := range g.Specs {
		res := g.validate(s, existing[s.Name], configs[s.Name], cfgErr)
		if created[s.Name] && res.Outcome != TopicError {
			res.Outcome = TopicCreated
		}
		for _, w := range res.Warnings {
			g.Log.Warn(w, "topic", s.Name)
		}
		rep.Topics = append(rep.Topics, res)
	}
	if rep.Failed() {
		var msgs []string
		for _, t := range rep.Topics {
			msgs = append(msgs, t.Errors...)
		}
		return rep, &GateError{Gate: "topics", Err: errors.New(strings.Join(msgs, "; "))}
	}
	if !g.Create {
		return rep, nil
	}
	if err := g.waitPropagated(ctx, clock); err != nil {
		return rep, err
	}
	rep.Propagated = true
	return rep, nil
}

func (g *TopicGate) names() []string {
	var n []string
	for _, s := range g.Specs {
		n = append(n, s.Name)
	}
	return n
}

// describe returns metadata for the internal topics that exist.
func (g *TopicGate) describe(ctx context.Context) (map[string]*sarama.TopicMetadata, error) {
	mds, err := g.Admin.DescribeTopics(g.names())
	if err != nil {
		return nil, &GateError{Gate: "topics", Err: fmt.Errorf("describe internal topics: %s", ExplainConnError(err))}
	}
	out := map[string]*sarama.TopicMetadata{}
	for _, md := range mds {
		switch {
		case errors.Is(md.Err, sarama.ErrNoError):
			out[md.Name] = md
		case errors.Is(md.Err, sarama.ErrUnknownTopicOrPartition):
		default:
			return nil, &GateError{Gate: "topics", Err: fmt.Errorf("describe topic %q: %w", md.Name, md.Err)}
		}
	}
	return out, nil
}

// describeUntilPresent re-describes until the controller's metadata shows
// every topic (creation is asynchronous in KRaft).
func (g *TopicGate) describeUntilPresent(ctx context.Context, clock Clock) (map[string]*sarama.TopicMetadata, error) {
	for {
		ex, err := g.describe(ctx)
		if err == nil && len(ex) == len(g.Specs) {
			return ex, nil
		}
		select {
		case <-ctx.Done():
			return nil, &GateError{Gate: "topics", Err: fmt.Errorf("internal topics not visible after creation: %w", ctx.Err())}
		case <-clock.After(100 * time.Millisecond):
		}
	}
}

func (g *TopicGate) create(s TopicSpec, validateOnly bool) error {
	entries := map[string]*string{}
	for k, v := range s.Configs {
		entries[k] = &v
	}
	return g.Admin.CreateTopic(s.Name, &sarama.TopicDetail{
		NumPartitions: s.Partitions, ReplicationFactor: s.ReplicationFactor, ConfigEntries: entries,
	}, validateOnly)
}

// createError classifies a creation failure: settings the broker rejects
// are configuration errors (exit 2), the rest gate failures.
func (g *TopicGate) createError(s TopicSpec, err error) error {
	var te *sarama.TopicError
	msg := err.Error()
	if errors.As(err, &te) && te.ErrMsg != nil && *te.ErrMsg != "" {
		msg = fmt.Sprintf("%s (%s)", te.Err.Error(), *te.ErrMsg)
	}
	switch {
	case errors.Is(err, sarama.ErrInvalidReplicationFactor):
		return &GateError{Gate: "topics", Err: fmt.Errorf("create topic %q with replication factor %d: %s", s.Name, s.ReplicationFactor, msg),
			Fix: fmt.Sprintf("lower %s to at most the number of brokers, or start more brokers", workerconfig.EnvName(s.Role+".storage.replication.factor"))}
	case errors.Is(err, sarama.ErrInvalidConfig), errors.Is(err, sarama.ErrPolicyViolation), errors.Is(err, sarama.ErrInvalidPartitions):
		return &ConfigError{Setting: "CONNECT_" + strings.ToUpper(s.Role) + "_STORAGE_*", Problem: fmt.Sprintf("makes the broker refuse to create topic %q: %s", s.Name, msg),
			Fix: "fix the topic settings; nothing was created"}
	case errors.Is(err, sarama.ErrTopicAuthorizationFailed), errors.Is(err, sarama.ErrClusterAuthorizationFailed):
		return &GateError{Gate: "topics", Err: fmt.Errorf("create topic %q: %s", s.Name, msg),
			Fix: "grant this principal CREATE on the topic (or the cluster), or create the topics beforehand"}
	}
	return &GateError{Gate: "topics", Err: fmt.Errorf("create topic %q: %s", s.Name, ExplainConnError(err))}
}

func (g *TopicGate) validate(s TopicSpec, md *sarama.TopicMetadata, configs map[string]string, cfgErr error) TopicResult {
	res := TopicResult{Role: s.Role, Name: s.Name, Outcome: TopicExistedOK}
	if md == nil {
		res.Outcome = TopicMissing
		return res
	}
	res.Partitions = len(md.Partitions)
	for _, p := range md.Partitions {
		if len(p.Replicas) > res.ReplicationFactor {
			res.ReplicationFactor = len(p.Replicas)
		}
		if p.Leader < 0 {
			res.Offline = append(res.Offline, p.ID)
		} else if len(p.Isr) < len(p.Replicas) {
			res.UnderReplicated = append(res.UnderReplicated, p.ID)
		}
	}
	if configs == nil {
		res.Outcome = TopicError
		res.Errors = append(res.Errors, fmt.Sprintf("describe configs of topic %q: %s", s.Name, ExplainConnError(cfgErr)))
		return res
	}
	res.CleanupPolicy = configs[cleanupPolicy]
	res.MinInsyncReplicas = configs[minInsyncReplicas]
	if s.Role == RoleConfig && res.Partitions != 1 {
		res.Errors = append(res.Errors, fmt.Sprintf("config topic %q has %d partitions, Connect requires exactly 1 (the worker refuses to start); fix: create a new topic with 1 partition and cleanup.policy=compact and point %s at it (a topic cannot lose partitions)",
			s.Name, res.Partitions, workerconfig.EnvName("config.storage.topic")))
	}
	if res.CleanupPolicy != "compact" {
		res.Errors = append(res.Errors, fmt.Sprintf("topic %q has cleanup.policy=%s, Connect requires exactly compact (the worker refuses to start); fix: kafka-configs --bootstrap-server ... --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact",
			s.Name, res.CleanupPolicy, s.Name))
	}
	if s.ReplicationFactor > 0 && res.ReplicationFactor < int(s.ReplicationFactor) {
		res.Warnings = append(res.Warnings, fmt.Sprintf("topic %q has replication factor %d, below the configured %d (%s); it was created elsewhere: reassign its partitions to add replicas",
			s.Name, res.ReplicationFactor, s.ReplicationFactor, workerconfig.EnvName(s.Role+".storage.replication.factor")))
	}
	if misr, err := strconv.Atoi(res.MinInsyncReplicas); err == nil && res.ReplicationFactor > 1 && misr >= res.ReplicationFactor {
		res.Warnings = append(res.Warnings, fmt.Sprintf("topic %q has min.insync.replicas=%d with replication factor %d: Connect cannot write to it as soon as one replica is down; lower min.insync.replicas or add replicas",
			s.Name, misr, res.ReplicationFactor))
	}
	if len(res.Offline) > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("topic %q has partitions without a leader: %v", s.Name, res.Offline))
	}
	if len(res.Errors) > 0 {
		res.Outcome = TopicError
	} else if len(res.Warnings) > 0 {
		res.Outcome = TopicExistedWithWarnings
	}
	return res
}

// describeTopicConfigs reads the cleanup policy and min ISR of the
// existing topics in one request. A topic just created may be unknown to
// the broker that answers for a moment (metadata propagation), so that
// error is retried until ctx ends.
func (g *TopicGate) describeTopicConfigs(ctx context.Context, existing map[string]*sarama.TopicMetadata) (map[string]map[string]string, error) {
	clock := g.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	var resources []*sarama.ConfigResource
	for _, s := range g.Specs {
		if existing[s.Name] != nil {
			resources = append(resources, &sarama.ConfigResource{Type: sarama.TopicResource, Name: s.Name,
				ConfigNames: []string{cleanupPolicy, minInsyncReplicas}})
		}
	}
	if len(resources) == 0 {
		return nil, nil
	}
	for {
		out, err := describeConfigs(g.Admin, resources)
		if err == nil || !errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-clock.After(100 * time.Millisecond):
		}
	}
}

// waitPropagated waits until every registered broker's own metadata shows
// every internal topic with a leader for every partition: the propagation
// race the operators of incident 1 suspected.
func (g *TopicGate) waitPropagated(ctx context.Context, clock Clock) error {
	var last string
	for {
		last = g.propagationGap(ctx)
		if last == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return &GateError{Gate: "topics", Err: fmt.Errorf("internal topics not visible on every broker: %s", last)}
		case <-clock.After(100 * time.Millisecond):
		}
	}
}

// propagationGap returns "" when every broker sees every topic with
// leaders, else what is missing where.
func (g *TopicGate) propagationGap(ctx context.Context) string {
	brokers, _, err := g.Admin.DescribeCluster()
	if err != nil {
		return "describe cluster: " + ExplainConnError(err)
	}
	want := map[string]int{}
	for _, s := range g.Specs {
		want[s.Name] = -1
	}
	mds := make([]*sarama.MetadataResponse, len(brokers))
	errs := make([]error, len(brokers))
	var wg sync.WaitGroup
	for i, b := range brokers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mds[i], errs[i] = Metadata(ctx, g.Config, b.Addr(), g.names())
		}()
	}
	wg.Wait()
	for i, b := range brokers {
		if errs[i] != nil {
			return fmt.Sprintf("broker %d: %s", b.ID(), ExplainConnError(errs[i]))
		}
		for _, t := range mds[i].Topics {
			if !errors.Is(t.Err, sarama.ErrNoError) {
				return fmt.Sprintf("broker %d does not know topic %q yet (%v)", b.ID(), t.Name, t.Err)
			}
			if len(t.Partitions) == 0 {
				return fmt.Sprintf("broker %d shows topic %q without partitions", b.ID(), t.Name)
			}
			for _, p := range t.Partitions {
				if p.Leader < 0 || !errors.Is(p.Err, sarama.ErrNoError) && !errors.Is(p.Err, sarama.ErrReplicaNotAvailable) {
					return fmt.Sprintf("broker %d shows topic %q partition %d without a leader", b.ID(), t.Name, p.ID)
				}
			}
			if n, ok := want[t.Name]; ok && n >= 0 && n != len(t.Partitions) {
				return fmt.Sprintf("brokers disagree on the partition count of %q", t.Name)
			}
			want[t.Name] = len(t.Partitions)
		}
	}
	return ""
}

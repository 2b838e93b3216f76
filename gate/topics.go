package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/future"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
	"github.com/connect-init/connect-init/workerconfig"
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
	offsetsTopicReplicationFactor              = "offsets.topic.replication.factor"
)

// ConsumerOffsetsTopic is Kafka's topic of group offsets and metadata,
// whose partition for the group decides its coordinator.
const ConsumerOffsetsTopic = "__consumer_offsets"

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
	UnderReplicated []int32 `json:"under_replicated,omitempty"`
	Offline         []int32 `json:"offline,omitempty"`
	// MinISR is the fewest in-sync replicas of any partition (0 for a
	// missing topic): doctor --watch exports it, since one partition down
	// to a single replica is one broker away from offline.
	MinISR int `json:"min_isr"`
	// ConfigError is why this topic's settings could not be read (its
	// own DescribeConfigs error, never another topic's).
	ConfigError string `json:"config_error,omitempty"`
	// Checks are the broken rules (checks.TopicChecks()); Warnings and
	// Errors are the same results as lines.
	Checks   []checks.Result `json:"checks,omitempty"`
	Warnings []string        `json:"warnings,omitempty"`
	Errors   []string        `json:"errors,omitempty"`
}

// Subject is what the topic checks judge: this result's facts, spec's
// configured replication factor and the variables that set them.
func (r TopicResult) Subject(spec settings.TopicSpec) checks.Topic {
	return checks.Topic{
		Role: r.Role, Name: r.Name,
		TopicEnv:       workerconfig.EnvName(r.Role + ".storage.topic"),
		ReplicationEnv: workerconfig.EnvName(r.Role + ".storage.replication.factor"),
		Exists:         r.Outcome != TopicMissing, Partitions: r.Partitions, ReplicationFactor: r.ReplicationFactor,
		ConfiguredReplicationFactor: int(spec.ReplicationFactor),
		ConfigError:                 r.ConfigError, CleanupPolicy: r.CleanupPolicy, MinInsyncReplicas: r.MinInsyncReplicas,
		UnderReplicated: r.UnderReplicated, Offline: r.Offline,
	}
}

// judge runs the topic checks on r and sets its outcome from them.
func (r *TopicResult) judge(spec settings.TopicSpec) {
	r.Checks = checks.Run(checks.TopicChecks(), r.Subject(spec))
	r.Warnings, r.Errors = nil, nil
	for _, c := range r.Checks {
		switch c.Severity {
		case checks.Error:
			r.Errors = append(r.Errors, c.String())
		case checks.Warning:
			r.Warnings = append(r.Warnings, c.String())
		}
	}
	switch {
	case r.Outcome == TopicMissing:
	case len(r.Errors) > 0:
		r.Outcome = TopicError
	case len(r.Warnings) > 0:
		r.Outcome = TopicExistedWithWarnings
	default:
		r.Outcome = TopicExistedOK
	}
}

// TopicReport is the outcome of the topic gate.
type TopicReport struct {
	Topics []TopicResult `json:"topics"`
	// Propagated is true once every broker's metadata showed every topic
	// with a leader for every partition.
	Propagated bool `json:"propagated"`
}

// Failed reports whether any topic is in error.
func (r *TopicReport) Failed() bool { return len(r.errors()) > 0 }

func (r *TopicReport) errors() []checks.Result {
	var out []checks.Result
	for _, t := range r.Topics {
		out = append(out, checks.Errors(t.Checks)...)
	}
	return out
}

// Err is the topics gate's verdict on the report: a *GateError naming
// every error-severity check result, nil when there is none. The gate and
// doctor judge by the same results (checks.TopicChecks()).
func (r *TopicReport) Err() error {
	errs := r.errors()
	if len(errs) == 0 {
		return nil
	}
	return &GateError{Gate: step.Topics, Err: errors.New(checks.Join(errs))}
}

// TopicGate makes sure Connect's internal topics exist with the right
// layout. Existing topics are validated, never changed.
type TopicGate struct {
	Admin  sarama.ClusterAdmin
	Config *sarama.Config
	// Client is Admin's client, when known: each broker's view of the
	// topics is read over its connection to that broker instead of a new
	// one (a handshake and an ApiVersions round trip each, issue 39).
	Client sarama.Client
	Specs  []settings.TopicSpec
	Log    *slog.Logger
	Clock  clock.Clock
	// Create is false for doctor, which only inspects.
	Create bool
	// Handoff is what the brokers step read (nil: ask for everything).
	// Its metadata answer, when it shows every internal topic, is the
	// first look's; its live brokers and their views of the topics serve
	// the first look at every broker's view, its topics' settings the
	// first judgement (each a request or a round of them of every start,
	// issue 39). Later looks ask, since a creation's wait may outlast them.
	Handoff *Handoff
}

// TopicSettings are the internal topics' settings the checks read
// (cleanup.policy, min.insync.replicas), read by another step ahead of
// the topics step (BrokerGate.ReadTopicSettings).
type TopicSettings struct {
	byName map[string]topicConfig
}

// topicSettingNames are the settings of a topic the checks read.
var topicSettingNames = []string{cleanupPolicy, minInsyncReplicas}

// readTopicSettingsVia reads names' settings over b in one request; nil
// unless every topic answered without an error (the topics step then asks
// itself, and says what is wrong).
func readTopicSettingsVia(b *sarama.Broker, names []string) *TopicSettings {
	req := &sarama.DescribeConfigsRequest{Version: 2}
	for _, n := range names {
		req.Resources = append(req.Resources, &sarama.ConfigResource{Type: sarama.TopicResource, Name: n, ConfigNames: topicSettingNames})
	}
	resp, err := b.DescribeConfigs(req)
	if err != nil || len(resp.Resources) != len(names) {
		return nil
	}
	results := make([]*sarama.ConfigResourceResult, len(resp.Resources))
	for i, r := range resp.Resources {
		results[i] = &sarama.ConfigResourceResult{Type: r.Type, Name: r.Name, ErrorCode: sarama.KError(r.ErrorCode), ErrorMsg: r.ErrorMsg}
		for _, e := range r.Configs {
			results[i].Configs = append(results[i].Configs, *e)
		}
	}
	out := &TopicSettings{byName: map[string]topicConfig{}}
	topicConfigsOf(results, out.byName)
	for _, c := range out.byName {
		if c.err != "" {
			return nil
		}
	}
	return out
}

// seenTopics is the first look's metadata from Seen, when Seen shows every
// internal topic without an error; nil otherwise.
func (g *TopicGate) seenTopics() map[string]*sarama.TopicMetadata {
	seen := g.Handoff.metadata()
	if seen == nil || !showsAll(seen, g.names()) {
		return nil
	}
	out := map[string]*sarama.TopicMetadata{}
	for _, t := range seen.Topics {
		if errors.Is(t.Err, sarama.ErrNoError) {
			out[t.Name] = t
		}
	}
	return out
}

// Ensure creates missing topics (all three validated by the broker first,
// so a bad setting creates none), validates every topic and waits until
// every broker sees them with leaders.
//
// On a restart the topics exist: their settings and every broker's view
// of them are read while their metadata is, not after it (one after the
// other they were most of the step, issue 39). When the metadata shows a
// topic missing, those reads are dropped and done again after the
// creation, as before.
func (g *TopicGate) Ensure(ctx context.Context) (*TopicReport, error) {
	clk := clock.Or(g.Clock)
	var configs *future.Future[map[string]topicConfig]
	var propagated *future.Future[struct{}]
	if g.Create {
		configs, propagated = g.configsAhead(ctx), g.propagationAhead(ctx, clk, nil)
		defer configs.Stop()
		defer propagated.Stop()
	}
	existing := g.seenTopics()
	var err error
	if existing == nil {
		if existing, err = g.describe(ctx); err != nil {
			return nil, err
		}
	}
	created := map[string]bool{}
	if g.Create && !g.allExist(existing) {
		configs.Stop()
		propagated.Stop()
		configs, propagated = nil, nil
		if existing, created, err = g.createMissing(ctx, clk, existing); err != nil {
			return nil, err
		}
		if len(created) == 0 { // another process created them meanwhile
			propagated = g.propagationAhead(ctx, clk, created)
			defer propagated.Stop()
		}
	}
	var first map[string]topicConfig
	if configs != nil {
		first, _ = configs.Wait()
	}
	rep, err := g.judgeFrom(ctx, clk, existing, created, first)
	if err == nil && g.Create {
		rep, err = g.settle(ctx, clk, rep, created, propagated)
	}
	g.logWarnings(rep)
	return rep, err
}

// settle waits until every broker sees the topics (the propagation read
// ahead, when not nil: topics that all existed need no creation to
// propagate) and, when the first judgement warned, judges them again.
func (g *TopicGate) settle(ctx context.Context, clk clock.Clock, rep *TopicReport, created map[string]bool, propagated *future.Future[struct{}]) (*TopicReport, error) {
	var err error
	if propagated != nil {
		_, err = propagated.Wait()
	} else {
		err = g.waitPropagated(ctx, clk, created)
	}
	if err != nil {
		return rep, err
	}
	if rep.warned() {
		if rep, err = g.judgeAgain(ctx, clk, rep, created); err != nil {
			return rep, err
		}
	}
	rep.Propagated = true
	return rep, nil
}

// createMissing creates the topics of Specs that existing lacks, each
// validated before any is created, and returns the topics as described
// once every created one is present, with the names this run created. A
// topic another process created meanwhile is not an error.
func (g *TopicGate) createMissing(ctx context.Context, clk clock.Clock, existing map[string]*sarama.TopicMetadata) (map[string]*sarama.TopicMetadata, map[string]bool, error) {
	created := map[string]bool{}
	var missing []settings.TopicSpec
	for _, s := range g.Specs {
		if _, ok := existing[s.Name]; !ok {
			missing = append(missing, s)
		}
	}
	for _, s := range missing { // validate all before creating any
		if err := g.create(ctx, s, true); err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
			return nil, nil, g.createError(s, err)
		}
	}
	for _, s := range missing {
		err := g.create(ctx, s, false)
		switch {
		case err == nil:
			created[s.Name] = true
			g.Log.Info("created internal topic", "topic", s.Name, "role", s.Role, "partitions", s.Partitions,
				"replication_factor", s.ReplicationFactor)
		case errors.Is(err, sarama.ErrTopicAlreadyExists):
			g.Log.Info("internal topic was created by another process meanwhile", "topic", s.Name)
		default:
			return nil, nil, g.createError(s, err)
		}
	}
	if len(missing) == 0 {
		return existing, created, nil
	}
	existing, err := g.describeUntilPresent(ctx, clk)
	return existing, created, err
}

// judgeAgain judges the topics once more when the first judgement warned:
// it may have read metadata that lagged the creation (fewer replicas or
// in-sync replicas than the topic has), so what every broker now shows
// decides. It keeps rep when the topics cannot be described again.
func (g *TopicGate) judgeAgain(ctx context.Context, clk clock.Clock, rep *TopicReport, created map[string]bool) (*TopicReport, error) {
	existing, err := g.describe(ctx)
	if err != nil {
		return rep, nil
	}
	again, err := g.judgeUntilSettled(ctx, clk, existing, created)
	if again == nil {
		return rep, nil
	}
	return again, err
}

// warned reports whether any topic has a warning.
func (r *TopicReport) warned() bool {
	for _, t := range r.Topics {
		if len(t.Warnings) > 0 {
			return true
		}
	}
	return false
}

// logWarnings logs the report's warnings, once, on the last judgement.
func (g *TopicGate) logWarnings(rep *TopicReport) {
	if rep == nil {
		return
	}
	for _, t := range rep.Topics {
		for _, c := range t.Checks {
			if c.Severity == checks.Warning {
				g.Log.Warn("internal topic check", "gate", step.Topics, "check", c.ID, "topic", t.Name,
					"error", c.Summary+" ("+c.Evidence+")", "fix", c.Fix)
			}
		}
	}
}

// allExist reports whether existing has every topic of the gate.
func (g *TopicGate) allExist(existing map[string]*sarama.TopicMetadata) bool {
	for _, s := range g.Specs {
		if existing[s.Name] == nil {
			return false
		}
	}
	return true
}

// configsAhead starts reading the settings of every topic of the gate, as
// if all existed: the hand-off's when it has every topic's, else asked.
func (g *TopicGate) configsAhead(ctx context.Context) *future.Future[map[string]topicConfig] {
	if seen := g.Handoff.takeSettings(); seen != nil && len(seen.byName) == len(g.Specs) {
		return future.Done(seen.byName, nil)
	}
	all := map[string]*sarama.TopicMetadata{}
	for _, s := range g.Specs {
		all[s.Name] = &sarama.TopicMetadata{Name: s.Name}
	}
	return future.Go(ctx, func(ctx context.Context) (map[string]topicConfig, error) {
		return g.describeTopicConfigs(ctx, all), nil
	})
}

// propagationAhead starts waiting until every broker shows the topics
// (waitPropagated).
func (g *TopicGate) propagationAhead(ctx context.Context, clk clock.Clock, created map[string]bool) *future.Future[struct{}] {
	return future.Go(ctx, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, g.waitPropagated(ctx, clk, created)
	})
}

// judgeUntilSettled reads the topics' settings and runs the checks (Ensure
// logs the warnings of the last judgement). When the only errors are transient (a partition between
// leaders) and the gate waits (Create), it reads again until ctx ends.
func (g *TopicGate) judgeUntilSettled(ctx context.Context, clk clock.Clock, existing map[string]*sarama.TopicMetadata, created map[string]bool) (*TopicReport, error) {
	return g.judgeFrom(ctx, clk, existing, created, nil)
}

// judgeFrom is judgeUntilSettled whose first look judges configs, the
// settings read ahead, when not nil.
func (g *TopicGate) judgeFrom(ctx context.Context, clk clock.Clock, existing map[string]*sarama.TopicMetadata, created map[string]bool, configs map[string]topicConfig) (*TopicReport, error) {
	lastLog := clk.Now()
	for {
		if configs == nil {
			configs = g.describeTopicConfigs(ctx, existing)
		}
		rep := g.look(existing, created, configs)
		configs = nil
		err := rep.Err()
		if err != nil && g.Create && checks.OnlyTransient(rep.errors()) && ctx.Err() == nil {
			if clk.Now().Sub(lastLog) >= waitLineEvery {
				g.Log.Info("waiting for internal topics", "gate", step.Topics, "waiting_for", "a leader for every partition", "error", checks.Join(rep.errors()))
				lastLog = clk.Now()
			}
			select {
			case <-ctx.Done():
				return rep, err // the last look's verdict: the deadline came first
			case <-clk.After(jittered(200 * time.Millisecond)):
			}
			last := err
			if ctx.Err() != nil {
				return rep, last
			}
			if existing, err = g.describe(ctx); err != nil {
				if ctx.Err() != nil {
					return rep, last
				}
				return rep, err
			}
			continue
		}
		return rep, err
	}
}

// look judges the topics on their metadata and settings (configs).
func (g *TopicGate) look(existing map[string]*sarama.TopicMetadata, created map[string]bool, configs map[string]topicConfig) *TopicReport {
	rep := &TopicReport{}
	for _, s := range g.Specs {
		rep.Topics = append(rep.Topics, layout(s, existing[s.Name], configs[s.Name]))
	}
	_ = rep.Judge(g.Specs)
	for i := range rep.Topics {
		if t := &rep.Topics[i]; created[t.Name] && t.Outcome != TopicError {
			t.Outcome = TopicCreated
		}
	}
	return rep
}

// Judge runs the topic checks on every topic of the report against its
// spec (matched by name), sets the results and outcomes, and returns the
// gate's verdict (Err). It is the topics gate's whole judgement, exported
// so that a test can hold doctor to the same verdict.
func (r *TopicReport) Judge(specs []settings.TopicSpec) error {
	byName := map[string]settings.TopicSpec{}
	for _, s := range specs {
		byName[s.Name] = s
	}
	for i := range r.Topics {
		r.Topics[i].judge(byName[r.Topics[i].Name])
	}
	return r.Err()
}

func (g *TopicGate) names() []string {
	var n []string
	for _, s := range g.Specs {
		n = append(n, s.Name)
	}
	return n
}

// create sends one CreateTopics request for s, bounded by ctx.
func (g *TopicGate) create(ctx context.Context, s settings.TopicSpec, validateOnly bool) error {
	entries := map[string]*string{}
	for k, v := range s.Configs {
		entries[k] = &v
	}
	what := "the controller to create topic " + strconv.Quote(s.Name)
	if validateOnly {
		what = "the controller to validate topic " + strconv.Quote(s.Name)
	}
	// NOT_CONTROLLER, REQUEST_TIMED_OUT (the controller busy; the topic may
	// be created meanwhile, and the next attempt says TOPIC_ALREADY_EXISTS)
	// and the like are looked at again; what the broker refuses fails.
	_, err := lookAgain(ctx, g.Clock, g.Log, step.Topics, what, true, func() (struct{}, error) {
		return struct{}{}, g.Admin.CreateTopic(s.Name, &sarama.TopicDetail{
			NumPartitions: s.Partitions, ReplicationFactor: s.ReplicationFactor, ConfigEntries: entries,
		}, validateOnly)
	})
	return err
}

// createError classifies a creation failure: settings the broker rejects
// are configuration errors (exit 2), the rest gate failures.
func (g *TopicGate) createError(s settings.TopicSpec, err error) error {
	var te *sarama.TopicError
	msg := err.Error()
	if errors.As(err, &te) && te.ErrMsg != nil && *te.ErrMsg != "" {
		msg = fmt.Sprintf("%s (%s)", te.Err.Error(), *te.ErrMsg)
	}
	switch {
	case errors.Is(err, sarama.ErrInvalidReplicationFactor):
		return &GateError{Gate: step.Topics, Err: fmt.Errorf("create topic %q with replication factor %d: %s", s.Name, s.ReplicationFactor, msg),
			Fix: fmt.Sprintf("lower %s to at most the number of brokers, or start more brokers", workerconfig.EnvName(s.Role+".storage.replication.factor"))}
	case errors.Is(err, sarama.ErrInvalidConfig), errors.Is(err, sarama.ErrPolicyViolation), errors.Is(err, sarama.ErrInvalidPartitions):
		return &settings.ConfigError{Setting: "CONNECT_" + strings.ToUpper(s.Role) + "_STORAGE_*", Problem: fmt.Sprintf("makes the broker refuse to create topic %q: %s", s.Name, msg),
			Fix: "fix the topic settings; nothing was created"}
	case errors.Is(err, sarama.ErrTopicAuthorizationFailed), errors.Is(err, sarama.ErrClusterAuthorizationFailed):
		return &GateError{Gate: step.Topics, Err: fmt.Errorf("create topic %q: %s", s.Name, msg),
			Fix: "grant this principal CREATE on the topic (or the cluster), or create the topics beforehand"}
	}
	return &GateError{Gate: step.Topics, Err: fmt.Errorf("create topic %q: %s", s.Name, kafka.ExplainConnError(err))}
}

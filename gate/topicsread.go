package gate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
)

// The topics step's reads of what the cluster holds: the topics'
// metadata and settings, and every live broker's view of a topic just
// created (propagation).

// describe returns metadata for the internal topics that exist. A topic
// the answer does not know (UNKNOWN_TOPIC_OR_PARTITION) is missing; an
// answer of a cluster at work (NOT_CONTROLLER, LEADER_NOT_AVAILABLE for a
// topic being created, a broker restarting) is looked at again while the
// gate waits (Create); an answer waiting cannot change fails.
func (g *TopicGate) describe(ctx context.Context) (map[string]*sarama.TopicMetadata, error) {
	out, err := lookAgain(ctx, g.Clock, g.Log, step.Topics, "the internal topics' metadata", g.Create, func() (map[string]*sarama.TopicMetadata, error) {
		mds, err := g.Admin.DescribeTopics(g.names())
		if err != nil {
			return nil, err
		}
		out := map[string]*sarama.TopicMetadata{}
		for _, md := range mds {
			switch {
			case errors.Is(md.Err, sarama.ErrNoError):
				out[md.Name] = md
			case errors.Is(md.Err, sarama.ErrUnknownTopicOrPartition):
			default:
				return nil, fmt.Errorf("topic %q: %w", md.Name, md.Err)
			}
		}
		return out, nil
	})
	if err != nil {
		return nil, &GateError{Gate: step.Topics, Err: lookFailed("describe internal topics", err)}
	}
	return out, nil
}

// describeUntilPresent re-describes until the metadata shows every topic
// (creation is asynchronous in KRaft: a topic just created is unknown to a
// broker whose metadata lags, "not yet").
func (g *TopicGate) describeUntilPresent(ctx context.Context, clk clock.Clock) (map[string]*sarama.TopicMetadata, error) {
	ex, err := lookAgain(ctx, clk, g.Log, step.Topics, "the internal topics just created to show in the metadata", true, func() (map[string]*sarama.TopicMetadata, error) {
		ex, err := g.describe(ctx)
		if err != nil {
			return nil, err
		}
		var missing []string
		for _, s := range g.Specs {
			if ex[s.Name] == nil {
				missing = append(missing, s.Name)
			}
		}
		if len(missing) > 0 {
			return nil, &notYetGap{what: "not in the metadata yet: " + strings.Join(missing, ", ")}
		}
		return ex, nil
	})
	if err != nil {
		var ge *GateError
		if errors.As(err, &ge) {
			return nil, err
		}
		return nil, &GateError{Gate: step.Topics, Err: lookFailed("internal topics not visible after creation", err)}
	}
	return ex, nil
}

// topicConfig is one topic's settings as read, or why they were not.
type topicConfig struct {
	values map[string]string
	err    string
}

// layout is what the metadata and settings say about one topic; the checks
// judge it (TopicResult.judge).
func layout(s settings.TopicSpec, md *sarama.TopicMetadata, cfg topicConfig) TopicResult {
	res := TopicResult{Role: s.Role, Name: s.Name, Outcome: TopicExistedOK}
	if md == nil {
		res.Outcome = TopicMissing
		return res
	}
	res.Partitions = len(md.Partitions)
	for i, p := range md.Partitions {
		if i == 0 || len(p.Isr) < res.MinISR {
			res.MinISR = len(p.Isr)
		}
		if len(p.Replicas) > res.ReplicationFactor {
			res.ReplicationFactor = len(p.Replicas)
		}
		if p.Leader < 0 {
			res.Offline = append(res.Offline, p.ID)
		} else if len(p.Isr) < len(p.Replicas) {
			res.UnderReplicated = append(res.UnderReplicated, p.ID)
		}
	}
	switch {
	case cfg.err != "":
		res.ConfigError = cfg.err
	case cfg.values == nil:
		res.ConfigError = "the broker's answer does not mention this topic"
	default:
		res.CleanupPolicy = cfg.values[cleanupPolicy]
		res.MinInsyncReplicas = cfg.values[minInsyncReplicas]
	}
	return res
}

// describeTopicConfigs reads the cleanup policy and min ISR of the
// existing topics in one request. Each topic gets its own answer, kadm
// style: a topic the broker refuses to describe does not stamp its error
// on the others. A topic just created may be unknown to the broker that
// answers for a moment (metadata propagation): that answer and every other
// "not yet" (kafka.NotYet) is asked again until ctx ends, logging every 5 s.
func (g *TopicGate) describeTopicConfigs(ctx context.Context, existing map[string]*sarama.TopicMetadata) map[string]topicConfig {
	clk := clock.Or(g.Clock)
	var resources []*sarama.ConfigResource
	for _, s := range g.Specs {
		if existing[s.Name] != nil {
			resources = append(resources, &sarama.ConfigResource{Type: sarama.TopicResource, Name: s.Name,
				ConfigNames: topicSettingNames})
		}
	}
	out := map[string]topicConfig{}
	if len(resources) == 0 {
		return out
	}
	lastLog := clk.Now()
	for {
		clear(out)
		retry := false
		results, err := bounded(ctx, func() ([]*sarama.ConfigResourceResult, error) {
			return g.Admin.DescribeConfigs(resources, sarama.DescribeConfigsOptions{})
		})
		if err != nil {
			// The request itself failed: that is every topic's answer.
			retry = kafka.NotYet(err)
			for _, r := range resources {
				out[r.Name] = topicConfig{err: kafka.ExplainConnError(err)}
			}
		}
		if topicConfigsOf(results, out) {
			retry = true
		}
		if !retry || !g.Create {
			return out
		}
		if clk.Now().Sub(lastLog) >= waitLineEvery {
			var errs []string
			for _, name := range sortedTopicNames(out) {
				if out[name].err != "" {
					errs = append(errs, name+": "+out[name].err)
				}
			}
			g.Log.Info("waiting for the cluster to finish creating or moving", "gate", step.Topics, "waiting_for", "the internal topics' settings", "answer", strings.Join(errs, "; "))
			lastLog = clk.Now()
		}
		select {
		case <-ctx.Done():
			return out
		case <-clk.After(jittered(100 * time.Millisecond)):
		}
	}
}

// topicConfigsOf reads a DescribeConfigs answer into out: each topic's
// values, or its error with the broker's message. It returns whether an
// error means "not yet" (kafka.CodeNotYet). The one reading of that
// answer for the topics gate and the brokers step's side read.
func topicConfigsOf(results []*sarama.ConfigResourceResult, out map[string]topicConfig) (retry bool) {
	for _, r := range results {
		if r.ErrorCode != sarama.ErrNoError {
			retry = retry || kafka.CodeNotYet(r.ErrorCode)
			msg := r.ErrorCode.Error()
			if r.ErrorMsg != "" {
				msg += " (" + r.ErrorMsg + ")"
			}
			out[r.Name] = topicConfig{err: msg}
			continue
		}
		out[r.Name] = topicConfig{values: kafka.ConfigValues(r.Configs)}
	}
	return retry
}

// waitPropagated waits until every registered broker's own metadata shows
// every internal topic with a leader for every partition: the propagation
// race the operators of incident 1 suspected. A gap is "not yet" and
// logged every 5 s; an answer waiting cannot change (a broker refusing
// this principal the topic's metadata) fails at once.
func (g *TopicGate) waitPropagated(ctx context.Context, clk clock.Clock, created map[string]bool) error {
	_, err := lookAgain(ctx, clk, g.Log, step.Topics, "the internal topics, not visible on every broker yet with a leader for every partition", true,
		func() (struct{}, error) { return struct{}{}, g.propagationGap(ctx, created) })
	if err != nil {
		return &GateError{Gate: step.Topics, Err: lookFailed("internal topics not visible on every broker", err)}
	}
	return nil
}

// liveBrokers are the registered brokers that are not fenced: a stopped
// broker stays registered in KRaft until kafka-cluster unregister, and
// waiting for its metadata would hold every worker back. It asks with
// fenced brokers included and reads the flag (DescribeClusterVia); brokers
// older than 4.0 leave fenced brokers out themselves, and those without
// DescribeCluster answer through sarama's metadata fallback.
func (g *TopicGate) liveBrokers() ([]kafka.Registration, error) {
	if live := g.Handoff.takeLive(); live != nil {
		return live, nil
	}
	if controller, err := g.Admin.Controller(); err == nil {
		if regs, _, err := kafka.DescribeClusterVia(controller); err == nil {
			var out []kafka.Registration
			for _, r := range regs {
				if !r.Fenced {
					out = append(out, r)
				}
			}
			return out, nil
		}
	}
	brokers, _, err := g.Admin.DescribeCluster()
	out := make([]kafka.Registration, len(brokers))
	for i, b := range brokers {
		out[i] = kafka.Registration{ID: b.ID(), Addr: b.Addr()}
	}
	return out, err
}

// propagationGap returns nil when every broker sees every topic with
// leaders, and for the topics this run created (created) every replica it
// was created with; else what is missing where, as an error kafka.NotYet
// classifies: a gap or a "not yet" code is looked at again, a final code
// (TOPIC_AUTHORIZATION_FAILED) is not.
func (g *TopicGate) propagationGap(ctx context.Context, created map[string]bool) error {
	brokers, err := bounded(ctx, func() ([]kafka.Registration, error) { return g.liveBrokers() })
	if err != nil {
		return fmt.Errorf("describe cluster: %w", err)
	}
	want := map[string]int{}
	rf := map[string]int{}
	for _, s := range g.Specs {
		want[s.Name] = -1
		if created[s.Name] && s.ReplicationFactor > 0 {
			rf[s.Name] = int(s.ReplicationFactor)
		}
	}
	mds := make([]*sarama.MetadataResponse, len(brokers))
	errs := make([]error, len(brokers))
	views := g.Handoff.takeViews()
	var wg sync.WaitGroup
	for i, b := range brokers {
		if v := views[b.ID]; v != nil {
			mds[i] = v
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			mds[i], errs[i] = g.brokerMetadata(ctx, b)
		}()
	}
	wg.Wait()
	for i, b := range brokers {
		if errs[i] != nil {
			return fmt.Errorf("broker %d at %s: %w", b.ID, b.Addr, errs[i])
		}
		for _, t := range mds[i].Topics {
			if !errors.Is(t.Err, sarama.ErrNoError) {
				return fmt.Errorf("broker %d does not know topic %q yet: %w", b.ID, t.Name, t.Err)
			}
			if len(t.Partitions) == 0 {
				return &notYetGap{what: fmt.Sprintf("broker %d shows topic %q without partitions", b.ID, t.Name)}
			}
			for _, p := range t.Partitions {
				if p.Leader < 0 || !errors.Is(p.Err, sarama.ErrNoError) && !errors.Is(p.Err, sarama.ErrReplicaNotAvailable) {
					return &notYetGap{what: fmt.Sprintf("broker %d shows topic %q partition %d without a leader", b.ID, t.Name, p.ID)}
				}
				if n := rf[t.Name]; n > 0 && len(p.Replicas) < n {
					return &notYetGap{what: fmt.Sprintf("broker %d shows topic %q partition %d with %d of the %d replicas it was created with", b.ID, t.Name, p.ID, len(p.Replicas), n)}
				}
			}
			if n, ok := want[t.Name]; ok && n >= 0 && n != len(t.Partitions) {
				return &notYetGap{what: fmt.Sprintf("brokers disagree on the partition count of %q", t.Name)}
			}
			want[t.Name] = len(t.Partitions)
		}
	}
	return nil
}

// brokerMetadata reads broker b's own metadata of the internal topics:
// over the client's connection to it when the client knows b at the same
// address, else over a connection of its own.
func (g *TopicGate) brokerMetadata(ctx context.Context, b kafka.Registration) (*sarama.MetadataResponse, error) {
	if g.Client != nil {
		if conn, err := g.Client.Broker(b.ID); err == nil && conn.Addr() == b.Addr {
			return bounded(ctx, func() (*sarama.MetadataResponse, error) {
				req := sarama.NewMetadataRequest(g.Config.Version, g.names())
				req.AllowAutoTopicCreation = false
				return conn.GetMetadata(req)
			})
		}
	}
	return kafka.Metadata(ctx, g.Config, b.Addr, g.names())
}

// sortedTopicNames are m's keys in order, for stable wait lines.
func sortedTopicNames(m map[string]topicConfig) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

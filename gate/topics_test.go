package gate

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/settings"
)

// topicAdmin answers the two calls the topic gate makes on existing topics;
// every other method panics through the nil embedded interface.
type topicAdmin struct {
	sarama.ClusterAdmin
	// describes are DescribeTopics answers, one per call (the last repeats).
	describes [][]*sarama.TopicMetadata
	mu        sync.Mutex // the gate may leave a call running when its context ends
	calls     int
	configs   func(names []string) ([]*sarama.ConfigResourceResult, error)
}

func (a *topicAdmin) DescribeTopics([]string) ([]*sarama.TopicMetadata, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := min(a.calls, len(a.describes)-1)
	a.calls++
	return a.describes[i], nil
}

func (a *topicAdmin) DescribeConfigs(rs []*sarama.ConfigResource, _ sarama.DescribeConfigsOptions) ([]*sarama.ConfigResourceResult, error) {
	var names []string
	for _, r := range rs {
		names = append(names, r.Name)
	}
	return a.configs(names)
}

// looks is how many DescribeTopics calls were made.
func (a *topicAdmin) looks() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls
}

func topicMD(name string, partitions int, leader int32) *sarama.TopicMetadata {
	md := &sarama.TopicMetadata{Name: name}
	for i := range partitions {
		md.Partitions = append(md.Partitions, &sarama.PartitionMetadata{ID: int32(i), Leader: leader, Replicas: []int32{1, 2, 3}, Isr: []int32{1, 2, 3}})
	}
	return md
}

func compactConfigs(names []string) ([]*sarama.ConfigResourceResult, error) {
	var out []*sarama.ConfigResourceResult
	for _, n := range names {
		out = append(out, &sarama.ConfigResourceResult{Name: n, Configs: []sarama.ConfigEntry{{Name: "cleanup.policy", Value: "compact"}, {Name: "min.insync.replicas", Value: "2"}}})
	}
	return out, nil
}

var testSpecs = []settings.TopicSpec{
	{Role: settings.RoleConfig, Name: "c", Partitions: 1, ReplicationFactor: 3},
	{Role: settings.RoleOffset, Name: "o", Partitions: 2, ReplicationFactor: 3},
	{Role: settings.RoleStatus, Name: "s", Partitions: 2, ReplicationFactor: 3},
}

// A DescribeConfigs error for one topic is that topic's, kadm style: the
// other two are judged on their own settings.
func TestTopicGatePerTopicConfigError(t *testing.T) {
	admin := &topicAdmin{
		describes: [][]*sarama.TopicMetadata{{topicMD("c", 1, 1), topicMD("o", 2, 1), topicMD("s", 2, 1)}},
		configs: func(names []string) ([]*sarama.ConfigResourceResult, error) {
			out, _ := compactConfigs(names)
			out[1] = &sarama.ConfigResourceResult{Name: "o", ErrorCode: sarama.ErrTopicAuthorizationFailed, ErrorMsg: "denied"}
			return out, nil
		},
	}
	g := &TopicGate{Admin: admin, Specs: testSpecs, Log: slog.New(slog.DiscardHandler), Clock: clock.NewStepping(time.Unix(0, 0))}
	rep, err := g.Ensure(context.Background())
	var ge *GateError
	if !errors.As(err, &ge) || ge.Gate != "topics" || !strings.Contains(err.Error(), `settings of topic "o" could not be read`) {
		t.Fatalf("Ensure = %v, want the topics gate failing on o's settings", err)
	}
	for _, tr := range rep.Topics {
		wantErr := tr.Name == "o"
		if got := tr.ConfigError != ""; got != wantErr {
			t.Errorf("%s: settings.ConfigError %q, want set: %v", tr.Name, tr.ConfigError, wantErr)
		}
		if wantErr != (tr.Outcome == TopicError) || (!wantErr && tr.CleanupPolicy != "compact") {
			t.Errorf("%s: %+v", tr.Name, tr)
		}
	}
	if got := rep.Topics[1].Checks; len(got) != 1 || got[0].ID != checks.IDTopicConfigsUnreadable || !strings.Contains(got[0].Evidence, "denied") {
		t.Errorf("o's checks = %+v", got)
	}
}

// An offline partition is an error the waiting gate reads again until its
// deadline: a leader elected meanwhile lets it pass, one that never comes
// fails it.
func TestTopicGateWaitsOutOfflinePartitions(t *testing.T) {
	healthy := []*sarama.TopicMetadata{topicMD("c", 1, 1), topicMD("o", 2, 1), topicMD("s", 2, 1)}
	offline := []*sarama.TopicMetadata{topicMD("c", 1, 1), topicMD("o", 2, 1), topicMD("s", 2, -1)}
	t.Run("heals", func(t *testing.T) {
		admin := &topicAdmin{describes: [][]*sarama.TopicMetadata{offline, offline, offline, healthy}, configs: compactConfigs}
		g := &TopicGate{Admin: admin, Specs: testSpecs, Log: slog.New(slog.DiscardHandler), Clock: clock.NewStepping(time.Unix(0, 0)), Create: true}
		rep, err := g.judgeUntilSettled(context.Background(), g.Clock, mustDescribe(t, g), nil)
		if err != nil || rep.Failed() {
			t.Fatalf("judgeUntilSettled = %v, %+v; want a pass once the leader is back", err, rep)
		}
		if admin.looks() != 4 {
			t.Errorf("described %d times, want 4 (three offline looks, then healthy)", admin.looks())
		}
	})
	t.Run("deadline", func(t *testing.T) {
		admin := &topicAdmin{describes: [][]*sarama.TopicMetadata{offline}, configs: compactConfigs}
		clk := clock.NewStepping(time.Unix(0, 0))
		g := &TopicGate{Admin: admin, Specs: testSpecs, Log: slog.New(slog.DiscardHandler), Clock: clk, Create: true}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			for clk.Waited() < 2*time.Second {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		_, err := g.judgeUntilSettled(ctx, clk, mustDescribe(t, g), nil)
		if err == nil || !strings.Contains(err.Error(), `topic "s" has partitions without a leader`) {
			t.Fatalf("judgeUntilSettled = %v, want the offline partition at the deadline", err)
		}
		if clk.Waited() < 2*time.Second || admin.looks() < 2 {
			t.Fatalf("gave up after %v and %d looks, want it to keep looking until the deadline", clk.Waited(), admin.looks())
		}
	})
	t.Run("doctor does not wait", func(t *testing.T) {
		admin := &topicAdmin{describes: [][]*sarama.TopicMetadata{offline, healthy}, configs: compactConfigs}
		g := &TopicGate{Admin: admin, Specs: testSpecs, Log: slog.New(slog.DiscardHandler), Clock: clock.NewStepping(time.Unix(0, 0))}
		rep, err := g.Ensure(context.Background())
		if err == nil || rep == nil || admin.looks() != 1 {
			t.Fatalf("Ensure without Create = %v after %d looks, want one look and the offline error", err, admin.looks())
		}
	})
}

func mustDescribe(t *testing.T, g *TopicGate) map[string]*sarama.TopicMetadata {
	t.Helper()
	ex, err := g.describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

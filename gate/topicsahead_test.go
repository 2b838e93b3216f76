package gate

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
)

// aheadAdmin is a cluster of one broker (a MockBroker, for every broker's
// own metadata) whose admin answers from scripts: the topics' metadata
// (the last answer repeats), their settings, a creation.
type aheadAdmin struct {
	brokersAdmin
	mu        sync.Mutex
	describes [][]*sarama.TopicMetadata
	looks     int
	// asked is closed at the first DescribeConfigs; gate, when set, holds
	// the first DescribeTopics until then.
	asked     chan struct{}
	askedOnce sync.Once
	gate      bool
	configs   int
	created   []string
}

func (a *aheadAdmin) DescribeTopics([]string) ([]*sarama.TopicMetadata, error) {
	a.mu.Lock()
	first := a.looks == 0
	md := a.describes[min(a.looks, len(a.describes)-1)]
	a.looks++
	a.mu.Unlock()
	if first && a.gate {
		<-a.asked // a gate that read the settings only after the metadata would stop here for good
	}
	return md, nil
}

func (a *aheadAdmin) DescribeConfigs(rs []*sarama.ConfigResource, _ sarama.DescribeConfigsOptions) ([]*sarama.ConfigResourceResult, error) {
	a.askedOnce.Do(func() { close(a.asked) })
	a.mu.Lock()
	a.configs++
	existing := map[string]bool{}
	for _, md := range a.describes[min(a.looks, len(a.describes)-1)] {
		existing[md.Name] = true
	}
	a.mu.Unlock()
	var out []*sarama.ConfigResourceResult
	for _, r := range rs {
		if !existing[r.Name] {
			out = append(out, &sarama.ConfigResourceResult{Name: r.Name, ErrorCode: sarama.ErrUnknownTopicOrPartition})
			continue
		}
		res, _ := compactConfigs([]string{r.Name})
		out = append(out, res...)
	}
	return out, nil
}

func (a *aheadAdmin) CreateTopic(name string, _ *sarama.TopicDetail, validateOnly bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !validateOnly {
		a.created = append(a.created, name)
	}
	return nil
}

// metadataBroker is a MockBroker whose metadata shows the test topics led
// by broker 1, in sync on three replicas.
func metadataBroker(t *testing.T) *sarama.MockBroker {
	b := sarama.NewMockBroker(t, 1)
	t.Cleanup(b.Close)
	md := sarama.NewMockMetadataResponse(t).SetController(1).SetBroker(b.Addr(), 1)
	for id := int32(2); id <= 3; id++ {
		md.SetBroker(fmt.Sprintf("127.0.0.%d:9092", id), id) // listed only: the replica sets have three ids
	}
	for _, s := range testSpecs {
		for p := range s.Partitions {
			md.SetLeader(s.Name, p, 1)
		}
	}
	b.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
			{ApiKey: 3, MinVersion: 0, MaxVersion: 7}, {ApiKey: 18, MinVersion: 0, MaxVersion: 3}}),
		"MetadataRequest": md,
	})
	return b
}

// On a restart (every topic exists) the topics gate reads their settings
// while it reads their metadata, not after (issue 39): the metadata read
// here answers only once the settings were asked for. Each is read once.
func TestTopicGateReadsAheadOnARestart(t *testing.T) {
	b := metadataBroker(t)
	all := []*sarama.TopicMetadata{topicMD("c", 1, 1), topicMD("o", 2, 1), topicMD("s", 2, 1)}
	admin := &aheadAdmin{brokersAdmin: brokersAdmin{addrs: []string{b.Addr()}}, describes: [][]*sarama.TopicMetadata{all},
		asked: make(chan struct{}), gate: true}
	g := &TopicGate{Admin: admin, Config: mockConfig(), Specs: testSpecs, Log: slog.New(slog.DiscardHandler),
		Clock: clock.NewStepping(time.Unix(0, 0)), Create: true}
	rep, err := g.Ensure(context.Background())
	if err != nil || !rep.Propagated {
		t.Fatalf("Ensure = %v, %+v; want a pass", err, rep)
	}
	for _, tr := range rep.Topics {
		if tr.Outcome != TopicExistedOK || tr.CleanupPolicy != "compact" {
			t.Errorf("%s: %+v, want existed-ok on its settings", tr.Name, tr)
		}
	}
	if admin.looks != 1 || admin.configs != 1 {
		t.Errorf("%d metadata reads and %d settings reads, want one each", admin.looks, admin.configs)
	}
}

// A topic missing on the first look: what was read ahead is dropped, the
// topic is created, and the gate judges and waits for it as before.
func TestTopicGateDropsTheReadAheadForACreation(t *testing.T) {
	b := metadataBroker(t)
	two := []*sarama.TopicMetadata{topicMD("c", 1, 1), topicMD("o", 2, 1)}
	all := []*sarama.TopicMetadata{topicMD("c", 1, 1), topicMD("o", 2, 1), topicMD("s", 2, 1)}
	admin := &aheadAdmin{brokersAdmin: brokersAdmin{addrs: []string{b.Addr()}}, describes: [][]*sarama.TopicMetadata{two, all},
		asked: make(chan struct{})}
	g := &TopicGate{Admin: admin, Config: mockConfig(), Specs: testSpecs, Log: slog.New(slog.DiscardHandler),
		Clock: clock.NewStepping(time.Unix(0, 0)), Create: true}
	rep, err := g.Ensure(context.Background())
	if err != nil || !rep.Propagated {
		t.Fatalf("Ensure = %v, %+v; want a pass", err, rep)
	}
	if len(admin.created) != 1 || admin.created[0] != "s" {
		t.Errorf("created %v, want [s]", admin.created)
	}
	for _, tr := range rep.Topics {
		want := TopicExistedOK
		if tr.Name == "s" {
			want = TopicCreated
		}
		if tr.Outcome != want || tr.CleanupPolicy != "compact" {
			t.Errorf("%s: %+v, want %s on its settings", tr.Name, tr, want)
		}
	}
}

// clusterCounting counts the DescribeCluster calls of an aheadAdmin.
type clusterCounting struct {
	*aheadAdmin
	n atomic.Int32
}

func (a *clusterCounting) DescribeCluster() ([]*sarama.Broker, int32, error) {
	a.n.Add(1)
	return a.aheadAdmin.DescribeCluster()
}

// With the brokers the brokers step saw up (Live), the first look at
// every broker's view of the topics does not ask the cluster for its
// brokers again (issue 39); without them, it does.
func TestTopicGateFirstLookUsesTheLiveBrokers(t *testing.T) {
	for _, withLive := range []bool{true, false} {
		b := metadataBroker(t)
		all := []*sarama.TopicMetadata{topicMD("c", 1, 1), topicMD("o", 2, 1), topicMD("s", 2, 1)}
		admin := &clusterCounting{aheadAdmin: &aheadAdmin{brokersAdmin: brokersAdmin{addrs: []string{b.Addr()}}, describes: [][]*sarama.TopicMetadata{all},
			asked: make(chan struct{}), gate: true}}
		g := &TopicGate{Admin: admin, Config: mockConfig(), Specs: testSpecs, Log: slog.New(slog.DiscardHandler),
			Clock: clock.NewStepping(time.Unix(0, 0)), Create: true}
		if withLive {
			g.Handoff = NewHandoff(nil, []kafka.Registration{{ID: 1, Addr: b.Addr()}}, nil, nil, nil)
		}
		rep, err := g.Ensure(context.Background())
		if err != nil || !rep.Propagated {
			t.Fatalf("live %v: Ensure = %v, %+v; want a pass", withLive, err, rep)
		}
		if got, want := admin.n.Load(), map[bool]int32{true: 0, false: 1}[withLive]; got != want {
			t.Errorf("live %v: %d DescribeCluster calls, want %d", withLive, got, want)
		}
	}
}

// With the brokers step's metadata answer (the hand-off's) showing every internal
// topic, the first look judges it and does not ask for the topics'
// metadata again (issue 39). An answer that misses a topic is not trusted
// for a creation: the gate asks, and creates only what that answer misses.
func TestTopicGateFirstLookJudgesTheSeenMetadata(t *testing.T) {
	all := []*sarama.TopicMetadata{topicMD("c", 1, 1), topicMD("o", 2, 1), topicMD("s", 2, 1)}
	for _, c := range []struct {
		name      string
		seen      []*sarama.TopicMetadata
		wantLooks int
	}{
		{"every topic seen", all, 0},
		{"one topic missing from what was seen", all[:2], 1},
		{"nothing seen", nil, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := metadataBroker(t)
			admin := &aheadAdmin{brokersAdmin: brokersAdmin{addrs: []string{b.Addr()}}, describes: [][]*sarama.TopicMetadata{all},
				asked: make(chan struct{})}
			g := &TopicGate{Admin: admin, Config: mockConfig(), Specs: testSpecs, Log: slog.New(slog.DiscardHandler),
				Clock: clock.NewStepping(time.Unix(0, 0)), Create: true}
			if c.seen != nil {
				g.Handoff = NewHandoff(&sarama.MetadataResponse{Topics: c.seen}, nil, nil, nil, nil)
			}
			rep, err := g.Ensure(context.Background())
			if err != nil || !rep.Propagated {
				t.Fatalf("Ensure = %v, %+v; want a pass", err, rep)
			}
			if admin.looks != c.wantLooks || len(admin.created) != 0 {
				t.Errorf("%d DescribeTopics calls and created %v, want %d and none", admin.looks, admin.created, c.wantLooks)
			}
			for _, tr := range rep.Topics {
				if tr.Outcome != TopicExistedOK || tr.CleanupPolicy != "compact" {
					t.Errorf("%s: %+v, want %s on its settings", tr.Name, tr, TopicExistedOK)
				}
			}
		})
	}
}

// The first look at every broker's view of the topics takes the views the
// brokers step read (each broker's own metadata answer) instead of asking
// those brokers again (issue 39); a broker without one is asked.
func TestTopicGateFirstLookTakesTheBrokersViews(t *testing.T) {
	for _, withViews := range []bool{true, false} {
		b := metadataBroker(t)
		all := []*sarama.TopicMetadata{topicMD("c", 1, 1), topicMD("o", 2, 1), topicMD("s", 2, 1)}
		admin := &aheadAdmin{brokersAdmin: brokersAdmin{addrs: []string{b.Addr()}}, describes: [][]*sarama.TopicMetadata{all},
			asked: make(chan struct{})}
		g := &TopicGate{Admin: admin, Config: mockConfig(), Specs: testSpecs, Log: slog.New(slog.DiscardHandler),
			Clock: clock.NewStepping(time.Unix(0, 0)), Create: true}
		var views map[int32]*sarama.MetadataResponse
		if withViews {
			views = map[int32]*sarama.MetadataResponse{1: {Topics: all}}
		}
		g.Handoff = NewHandoff(nil, []kafka.Registration{{ID: 1, Addr: b.Addr()}}, views, nil, nil)
		rep, err := g.Ensure(context.Background())
		if err != nil || !rep.Propagated {
			t.Fatalf("views %v: Ensure = %v, %+v; want a pass", withViews, err, rep)
		}
		if got, want := requestsOf(b)["Metadata"], map[bool]int{true: 0, false: 1}[withViews]; got != want {
			t.Errorf("views %v: the broker was asked for its metadata %d times, want %d", withViews, got, want)
		}
	}
}

// The first look judges the settings the brokers step read (the hand-off's)
// instead of asking for them again (issue 39).
func TestTopicGateFirstLookTakesTheSettingsRead(t *testing.T) {
	b := metadataBroker(t)
	all := []*sarama.TopicMetadata{topicMD("c", 1, 1), topicMD("o", 2, 1), topicMD("s", 2, 1)}
	admin := &aheadAdmin{brokersAdmin: brokersAdmin{addrs: []string{b.Addr()}}, describes: [][]*sarama.TopicMetadata{all},
		asked: make(chan struct{})}
	settings := &TopicSettings{byName: map[string]topicConfig{}}
	for _, n := range []string{"c", "o", "s"} {
		settings.byName[n] = topicConfig{values: map[string]string{cleanupPolicy: "compact", minInsyncReplicas: "2"}}
	}
	g := &TopicGate{Admin: admin, Config: mockConfig(), Specs: testSpecs, Log: slog.New(slog.DiscardHandler),
		Clock: clock.NewStepping(time.Unix(0, 0)), Create: true, Handoff: NewHandoff(nil, nil, nil, settings, nil)}
	rep, err := g.Ensure(context.Background())
	if err != nil || !rep.Propagated {
		t.Fatalf("Ensure = %v, %+v; want a pass", err, rep)
	}
	if admin.configs != 0 {
		t.Errorf("the settings were asked %d times, want 0", admin.configs)
	}
	for _, tr := range rep.Topics {
		if tr.Outcome != TopicExistedOK || tr.CleanupPolicy != "compact" || fmt.Sprint(tr.MinInsyncReplicas) != "2" {
			t.Errorf("%s: %+v, want judged on the settings read", tr.Name, tr)
		}
	}
}

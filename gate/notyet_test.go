package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/settings"
)

// The gates' answers to a cluster that is still creating or moving
// something: "not yet" is looked at again (with a wait line), a final
// answer fails at once. The coordinator gate runs a real sarama client
// against sarama's MockBroker, so what is judged is what sarama makes of
// the broker's bytes.

// syncBuffer is a log sink the gate may write to from its goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func bufferLog() (*slog.Logger, *syncBuffer) {
	b := &syncBuffer{}
	return slog.New(slog.NewTextHandler(b, nil)), b
}

const waitLine = `msg="waiting for the cluster to finish creating or moving"`

// mockKafka is one MockBroker (id 1) that lists the API keys the
// coordinator gate uses: MockBroker's default ApiVersions answer lists only
// Produce and Fetch, and sarama then sends nothing else.
func mockKafka(t *testing.T) *sarama.MockBroker {
	b := sarama.NewMockBroker(t, 1)
	t.Cleanup(b.Close)
	b.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
			{ApiKey: 3, MinVersion: 0, MaxVersion: 7},  // Metadata
			{ApiKey: 10, MinVersion: 0, MaxVersion: 2}, // FindCoordinator
			{ApiKey: 32, MinVersion: 0, MaxVersion: 1}, // DescribeConfigs
			{ApiKey: 18, MinVersion: 0, MaxVersion: 3}, // ApiVersions
		}),
	})
	return b
}

func mockClients(t *testing.T, b *sarama.MockBroker) (sarama.Client, sarama.ClusterAdmin) {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.ApiVersionsRequest = true
	cfg.Metadata.Retry.Max = 0
	cfg.Metadata.RefreshFrequency = 0
	cfg.Metadata.Full = false
	client, err := sarama.NewClient([]string{b.Addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client, quietAdmin{}
}

// quietAdmin answers the coordinator gate's side reads (the broker's
// offsets.topic.replication.factor, the look at the group's partition
// while no coordinator is found) with an error, as a broker that does not
// let us read them would: neither decides the gate.
type quietAdmin struct{ sarama.ClusterAdmin }

func (quietAdmin) DescribeConfigs([]*sarama.ConfigResource, sarama.DescribeConfigsOptions) ([]*sarama.ConfigResourceResult, error) {
	return nil, sarama.ErrClusterAuthorizationFailed
}

func (quietAdmin) DescribeTopics([]string) ([]*sarama.TopicMetadata, error) {
	return nil, sarama.ErrClusterAuthorizationFailed
}

// offsetsMD is a metadata answer showing __consumer_offsets with 50
// partitions led by broker 1, or (leader -1) without leaders.
func offsetsMD(t *testing.T, b *sarama.MockBroker, leader int32) *sarama.MockMetadataResponse {
	md := sarama.NewMockMetadataResponse(t).SetBroker(b.Addr(), 1).SetController(1)
	for p := range int32(50) {
		md.SetLeader(ConsumerOffsetsTopic, p, leader)
	}
	return md
}

// unknownMD is the answer of a broker that does not know the topic yet.
func unknownMD(t *testing.T, b *sarama.MockBroker) *sarama.MockMetadataResponse {
	return sarama.NewMockMetadataResponse(t).SetBroker(b.Addr(), 1).SetController(1)
}

func countRequests(b *sarama.MockBroker, kind string) int {
	n := 0
	for _, rr := range b.History() {
		if strings.Contains(strings.ToLower(typeName(rr.Request)), strings.ToLower(kind)) {
			n++
		}
	}
	return n
}

func typeName(v any) string {
	switch v.(type) {
	case *sarama.MetadataRequest:
		return "Metadata"
	case *sarama.FindCoordinatorRequest:
		return "FindCoordinator"
	}
	return "other"
}

// The incident of issue 33: FindCoordinator has just made the cluster
// create __consumer_offsets, and the metadata read that follows reaches a
// broker that does not know it yet (UNKNOWN_TOPIC_OR_PARTITION), then one
// that shows it without leaders. The gate looks again, says what it waits
// for, and passes once the metadata shows the topic.
func TestCoordinatorGateWaitsForOffsetsTopicJustCreated(t *testing.T) {
	b := mockKafka(t)
	const group = "connect-cluster"
	b.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
			{ApiKey: 3, MinVersion: 0, MaxVersion: 7}, {ApiKey: 10, MinVersion: 0, MaxVersion: 2},
			{ApiKey: 32, MinVersion: 0, MaxVersion: 1}, {ApiKey: 18, MinVersion: 0, MaxVersion: 3},
		}),
		"FindCoordinatorRequest": sarama.NewMockSequence(
			sarama.NewMockFindCoordinatorResponse(t).SetError(sarama.CoordinatorGroup, group, sarama.ErrOffsetsLoadInProgress),
			sarama.NewMockFindCoordinatorResponse(t).SetError(sarama.CoordinatorGroup, group, sarama.ErrConsumerCoordinatorNotAvailable),
			sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, group, b)),
		// One more unknown answer than the looks after FindCoordinator: the
		// gate reads the metadata once while it asks for the coordinator.
		"MetadataRequest":        sarama.NewMockSequence(unknownMD(t, b), unknownMD(t, b), unknownMD(t, b), unknownMD(t, b), offsetsMD(t, b, -1), offsetsMD(t, b, 1)),
		"DescribeConfigsRequest": sarama.NewMockDescribeConfigsResponse(t),
	})
	client, admin := mockClients(t, b)
	log, buf := bufferLog()
	g := &CoordinatorGate{Client: client, Admin: admin, GroupID: group, Log: log, Clock: clock.NewStepping(time.Unix(0, 0)), Wait: true,
		registrations: func() ([]kafka.Registration, error) { return nil, nil }}
	rep, err := g.Check(context.Background())
	if err != nil {
		t.Fatalf("Check = %v, want a pass once __consumer_offsets shows\n%s", err, buf)
	}
	if rep.Partitions != 50 || rep.Partition != GroupPartition(group, 50) || rep.Leader != 1 {
		t.Errorf("report %+v, want partition %d of 50 led by 1", rep, GroupPartition(group, 50))
	}
	if n := countRequests(b, "FindCoordinator"); n != 3 {
		t.Errorf("%d FindCoordinator requests, want 3 (loading, not available, found)", n)
	}
	if n := countRequests(b, "Metadata"); n < 5 {
		t.Errorf("%d metadata requests, want at least 5 (three unknown, one leaderless, one whole)", n)
	}
	out := buf.String()
	if !strings.Contains(out, waitLine) || !strings.Contains(out, "waiting_for=\"__consumer_offsets in the metadata") {
		t.Errorf("no wait line naming __consumer_offsets:\n%s", out)
	}
}

// An answer waiting cannot change fails the gate at once, in both of the
// gate's reads: FindCoordinator refused for the group (an ACL), and the
// metadata of __consumer_offsets refused (an ACL).
func TestCoordinatorGateFailsAtOnceOnFinalAnswers(t *testing.T) {
	const group = "connect-cluster"
	keys := []sarama.ApiVersionsResponseKey{{ApiKey: 3, MinVersion: 0, MaxVersion: 7}, {ApiKey: 10, MinVersion: 0, MaxVersion: 2},
		{ApiKey: 32, MinVersion: 0, MaxVersion: 1}, {ApiKey: 18, MinVersion: 0, MaxVersion: 3}}
	t.Run("group authorization", func(t *testing.T) {
		b := mockKafka(t)
		b.SetHandlerByMap(map[string]sarama.MockResponse{
			"ApiVersionsRequest":     sarama.NewMockApiVersionsResponse(t).SetApiKeys(keys),
			"FindCoordinatorRequest": sarama.NewMockFindCoordinatorResponse(t).SetError(sarama.CoordinatorGroup, group, sarama.ErrGroupAuthorizationFailed),
			"MetadataRequest":        offsetsMD(t, b, 1),
		})
		client, admin := mockClients(t, b)
		clk := clock.NewStepping(time.Unix(0, 0))
		g := &CoordinatorGate{Client: client, Admin: admin, GroupID: group, Log: slog.New(slog.DiscardHandler), Clock: clk, Wait: true,
			registrations: func() ([]kafka.Registration, error) { return nil, nil }}
		_, err := g.Check(context.Background())
		var ge *GateError
		if !errors.As(err, &ge) || !strings.Contains(err.Error(), "authoriz") {
			t.Fatalf("Check = %v, want the coordinator gate failing on the group authorization", err)
		}
		if n := countRequests(b, "FindCoordinator"); n != 1 || clk.Waited() != 0 {
			t.Errorf("%d FindCoordinator requests and %v waited, want one look and no wait", n, clk.Waited())
		}
	})
	t.Run("topic authorization", func(t *testing.T) {
		b := mockKafka(t)
		b.SetHandlerByMap(map[string]sarama.MockResponse{
			"ApiVersionsRequest":     sarama.NewMockApiVersionsResponse(t).SetApiKeys(keys),
			"FindCoordinatorRequest": sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, group, b),
			"MetadataRequest":        unknownMD(t, b).SetError(ConsumerOffsetsTopic, sarama.ErrTopicAuthorizationFailed),
		})
		client, admin := mockClients(t, b)
		clk := clock.NewStepping(time.Unix(0, 0))
		g := &CoordinatorGate{Client: client, Admin: admin, GroupID: group, Log: slog.New(slog.DiscardHandler), Clock: clk, Wait: true}
		_, err := g.Check(context.Background())
		if err == nil || !strings.Contains(err.Error(), "describe __consumer_offsets") || strings.Contains(err.Error(), "not yet") {
			t.Fatalf("Check = %v, want a final failure describing __consumer_offsets", err)
		}
		if clk.Waited() != 0 {
			t.Errorf("waited %v before failing, want no wait", clk.Waited())
		}
	})
}

// answeringAdmin answers DescribeTopics and CreateTopic from scripts (the
// last answer repeats), for the topics gate's reads and writes.
type answeringAdmin struct {
	sarama.ClusterAdmin
	mu       sync.Mutex
	describe []func() ([]*sarama.TopicMetadata, error)
	create   []error
	looks    int
	creates  int
}

func (a *answeringAdmin) DescribeTopics([]string) ([]*sarama.TopicMetadata, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	f := a.describe[min(a.looks, len(a.describe)-1)]
	a.looks++
	return f()
}

func (a *answeringAdmin) CreateTopic(string, *sarama.TopicDetail, bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	err := a.create[min(a.creates, len(a.create)-1)]
	a.creates++
	return err
}

func topicsWith(err sarama.KError) func() ([]*sarama.TopicMetadata, error) {
	return func() ([]*sarama.TopicMetadata, error) {
		out := []*sarama.TopicMetadata{topicMD("c", 1, 1), topicMD("o", 2, 1), topicMD("s", 2, 1)}
		out[2].Err, out[2].Partitions = err, nil
		return out, nil
	}
}

func requestFails(err error) func() ([]*sarama.TopicMetadata, error) {
	return func() ([]*sarama.TopicMetadata, error) { return nil, err }
}

// The topics gate's metadata read: NOT_CONTROLLER for the request and
// LEADER_NOT_AVAILABLE for a topic being created are looked at again
// (with a wait line); TOPIC_AUTHORIZATION_FAILED fails at the first look;
// UNKNOWN_TOPIC_OR_PARTITION is a missing topic.
func TestTopicGateDescribeLooksAgainOnNotYet(t *testing.T) {
	healthy := topicsWith(sarama.ErrNoError)
	cases := []struct {
		name      string
		answers   []func() ([]*sarama.TopicMetadata, error)
		wantErr   string
		wantLooks int
		wantTopic bool // "s" present in the result
	}{
		{"not controller, then an answer", []func() ([]*sarama.TopicMetadata, error){requestFails(sarama.ErrNotController), requestFails(sarama.ErrNotController), healthy}, "", 3, true},
		{"leader not available, then an answer", []func() ([]*sarama.TopicMetadata, error){topicsWith(sarama.ErrLeaderNotAvailable), healthy}, "", 2, true},
		{"a connection reset, then an answer", []func() ([]*sarama.TopicMetadata, error){requestFails(errors.New("read: connection reset by peer")), healthy}, "", 2, true},
		{"unknown is missing", []func() ([]*sarama.TopicMetadata, error){topicsWith(sarama.ErrUnknownTopicOrPartition)}, "", 1, false},
		{"topic authorization", []func() ([]*sarama.TopicMetadata, error){topicsWith(sarama.ErrTopicAuthorizationFailed), healthy}, "not authorized to access this topic", 1, false},
		{"cluster authorization", []func() ([]*sarama.TopicMetadata, error){requestFails(sarama.ErrClusterAuthorizationFailed), healthy}, "not authorized", 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			admin := &answeringAdmin{describe: c.answers}
			log, buf := bufferLog()
			g := &TopicGate{Admin: admin, Specs: testSpecs, Log: log, Clock: clock.NewStepping(time.Unix(0, 0)), Create: true}
			got, err := g.describe(context.Background())
			switch {
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || strings.Contains(err.Error(), "not yet")):
				t.Fatalf("describe = %v, want a final %q", err, c.wantErr)
			case c.wantErr == "" && err != nil:
				t.Fatalf("describe = %v, want an answer", err)
			}
			if admin.looks != c.wantLooks {
				t.Errorf("%d looks, want %d", admin.looks, c.wantLooks)
			}
			if c.wantErr == "" && (got["s"] != nil) != c.wantTopic {
				t.Errorf("topic s present = %v, want %v", got["s"] != nil, c.wantTopic)
			}
			// The wait line comes with the second "not yet" in a row: one
			// lagging answer is no wait worth a line.
			if wantWait := c.wantLooks > 2; strings.Contains(buf.String(), waitLine) != wantWait {
				t.Errorf("wait line logged = %v, want %v:\n%s", !wantWait, wantWait, buf)
			}
		})
	}
}

// CreateTopics answered NOT_CONTROLLER (the controller moved) is sent
// again; the next answer, TOPIC_ALREADY_EXISTS (the first request went
// through after all), is the topics gate's success. INVALID_CONFIG fails
// at once.
func TestTopicGateCreateLooksAgainOnNotYet(t *testing.T) {
	spec := testSpecs[0]
	t.Run("not controller", func(t *testing.T) {
		admin := &answeringAdmin{create: []error{&sarama.TopicError{Err: sarama.ErrNotController}, &sarama.TopicError{Err: sarama.ErrRequestTimedOut},
			&sarama.TopicError{Err: sarama.ErrTopicAlreadyExists}}}
		g := &TopicGate{Admin: admin, Specs: testSpecs, Log: slog.New(slog.DiscardHandler), Clock: clock.NewStepping(time.Unix(0, 0)), Create: true}
		err := g.create(context.Background(), spec, false)
		if !errors.Is(err, sarama.ErrTopicAlreadyExists) || admin.creates != 3 {
			t.Fatalf("create = %v after %d requests, want TOPIC_ALREADY_EXISTS after 3", err, admin.creates)
		}
	})
	t.Run("invalid config", func(t *testing.T) {
		admin := &answeringAdmin{create: []error{&sarama.TopicError{Err: sarama.ErrInvalidConfig}, nil}}
		g := &TopicGate{Admin: admin, Specs: testSpecs, Log: slog.New(slog.DiscardHandler), Clock: clock.NewStepping(time.Unix(0, 0)), Create: true}
		err := g.create(context.Background(), spec, true)
		if !errors.Is(err, sarama.ErrInvalidConfig) || admin.creates != 1 {
			t.Fatalf("create = %v after %d requests, want INVALID_CONFIG at once", err, admin.creates)
		}
	})
}

// The topics gate's propagation wait, against MockBrokers: a broker whose
// metadata does not show a topic just created yet, then shows it with
// fewer replicas than it was created with, then whole. The gate looks
// again through both and passes; a broker that refuses the topic's
// metadata (TOPIC_AUTHORIZATION_FAILED) fails it at once.
func TestTopicGatePropagationLooksAgainOnNotYet(t *testing.T) {
	specs := []settings.TopicSpec{{Role: settings.RoleConfig, Name: "c", Partitions: 1, ReplicationFactor: 3}}
	keys := []sarama.ApiVersionsResponseKey{{ApiKey: 3, MinVersion: 0, MaxVersion: 7}, {ApiKey: 18, MinVersion: 0, MaxVersion: 3}}
	whole := func(t *testing.T, b *sarama.MockBroker) *sarama.MockMetadataResponse {
		md := sarama.NewMockMetadataResponse(t).SetController(1)
		for id := int32(1); id <= 3; id++ {
			md.SetBroker(fmt.Sprintf("127.0.0.%d:9092", id), id) // three brokers: the replica set has three ids (only listed)
		}
		return md.SetLeader("c", 0, 1)
	}
	short := func(t *testing.T, b *sarama.MockBroker) *sarama.MockMetadataResponse {
		return sarama.NewMockMetadataResponse(t).SetController(1).SetBroker(b.Addr(), 1).SetLeader("c", 0, 1)
	}
	t.Run("lags, then shows the topic", func(t *testing.T) {
		b := sarama.NewMockBroker(t, 1)
		defer b.Close()
		b.SetHandlerByMap(map[string]sarama.MockResponse{
			"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys(keys),
			"MetadataRequest":    sarama.NewMockSequence(unknownMD(t, b), short(t, b), whole(t, b)),
		})
		log, buf := bufferLog()
		g := &TopicGate{Admin: &brokersAdmin{addrs: []string{b.Addr()}}, Config: mockConfig(), Specs: specs, Log: log,
			Clock: clock.NewStepping(time.Unix(0, 0)), Create: true}
		if err := g.waitPropagated(context.Background(), g.Clock, map[string]bool{"c": true}); err != nil {
			t.Fatalf("waitPropagated = %v\n%s", err, buf)
		}
		if n := countRequests(b, "Metadata"); n != 3 {
			t.Errorf("%d metadata requests, want 3 (unknown, one replica of three, whole)", n)
		}
		if !strings.Contains(buf.String(), waitLine) || !strings.Contains(buf.String(), "with 1 of the 3 replicas it was created with") {
			t.Errorf("wait lines do not say what was missing:\n%s", buf)
		}
	})
	t.Run("refused", func(t *testing.T) {
		b := sarama.NewMockBroker(t, 1)
		defer b.Close()
		b.SetHandlerByMap(map[string]sarama.MockResponse{
			"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys(keys),
			"MetadataRequest":    sarama.NewMockSequence(unknownMD(t, b).SetError("c", sarama.ErrTopicAuthorizationFailed), whole(t, b)),
		})
		clk := clock.NewStepping(time.Unix(0, 0))
		g := &TopicGate{Admin: &brokersAdmin{addrs: []string{b.Addr()}}, Config: mockConfig(), Specs: specs, Log: slog.New(slog.DiscardHandler), Clock: clk, Create: true}
		err := g.waitPropagated(context.Background(), clk, map[string]bool{"c": true})
		if err == nil || !strings.Contains(err.Error(), "not authorized to access this topic") || clk.Waited() != 0 {
			t.Fatalf("waitPropagated = %v after %v, want a final failure at once", err, clk.Waited())
		}
	})
}

// brokersAdmin lists brokers at addrs through sarama's DescribeCluster
// fallback (no controller to ask DescribeCluster v2).
type brokersAdmin struct {
	sarama.ClusterAdmin
	addrs []string
}

func (a *brokersAdmin) Controller() (*sarama.Broker, error) {
	return nil, sarama.ErrControllerNotAvailable
}

func (a *brokersAdmin) DescribeCluster() ([]*sarama.Broker, int32, error) {
	var out []*sarama.Broker
	for _, addr := range a.addrs {
		out = append(out, sarama.NewBroker(addr))
	}
	return out, 1, nil
}

func mockConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.ApiVersionsRequest = true
	return cfg
}

// The group gate: a coordinator still loading is described again, past
// StableWait when run waits (UntilCalm), until it answers; an ACL fails
// at the first look.
func TestGroupGateDescribeLooksAgainOnNotYet(t *testing.T) {
	t.Run("loading", func(t *testing.T) {
		g, _ := gate(nil, 0, 0)
		g.UntilCalm = true
		n := 0
		g.describeFn = func(context.Context) (*sarama.GroupDescription, error) {
			n++
			if n <= 40 { // 40 looks of 100 ms: past StableWait (2 s)
				return nil, sarama.ErrOffsetsLoadInProgress
			}
			return &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupEmpty}, nil
		}
		rep, err := g.Check(context.Background())
		if err != nil || rep.State != GroupEmpty || n != 41 {
			t.Fatalf("Check = %v after %d looks, want the Empty group after 41", err, n)
		}
	})
	t.Run("authorization", func(t *testing.T) {
		g, _ := gate(nil, 0, 0)
		g.UntilCalm = true
		n := 0
		g.describeFn = func(context.Context) (*sarama.GroupDescription, error) {
			n++
			return nil, fmt.Errorf("describe group: %w", sarama.ErrGroupAuthorizationFailed)
		}
		_, err := g.Check(context.Background())
		var ge *GateError
		if !errors.As(err, &ge) || n != 1 {
			t.Fatalf("Check = %v after %d looks, want the group gate failing at the first", err, n)
		}
	})
	t.Run("the config topic's end offset", func(t *testing.T) {
		g, _ := gate([]*sarama.GroupDescription{{GroupId: "connect-cluster", State: GroupEmpty}}, 0, 0)
		g.UntilCalm = true
		n := 0
		g.offsetsFn = func(context.Context) (int64, int64, error) {
			n++
			if n < 3 {
				return -1, -1, fmt.Errorf("leader of config topic: %w", sarama.ErrLeaderNotAvailable)
			}
			return 7, 7, nil
		}
		rep, err := g.Check(context.Background())
		if err != nil || rep.ConfigEndOffset != 7 || n != 3 {
			t.Fatalf("Check = %v, end offset %d after %d reads, want 7 after 3", err, rep.ConfigEndOffset, n)
		}
	})
}

// lookAgain's wait line: none for one lagging answer, then at the second
// "not yet" and at least every 5 s; at ctx's end the last "not yet" answer
// is what the step reports, not the context's error.
func TestLookAgainWaitLines(t *testing.T) {
	clk := clock.NewStepping(time.Unix(0, 0))
	log, buf := bufferLog()
	looks := 0
	_, err := lookAgain(context.Background(), clk, log, "coordinator", "something", true, func() (int, error) {
		looks++
		if looks <= 60 { // 60 looks 200 ms apart: 12 s of "not yet"
			return 0, sarama.ErrLeaderNotAvailable
		}
		return 1, nil
	})
	if err != nil || looks != 61 {
		t.Fatalf("lookAgain = %v after %d looks, want an answer after 61", err, looks)
	}
	if n := strings.Count(buf.String(), waitLine); n < 3 || n > 4 {
		t.Errorf("%d wait lines over 12 s, want one at the second look and then one every 5 s:\n%s", n, buf)
	}
	if !strings.Contains(buf.String(), `waiting_for=something`) || !strings.Contains(buf.String(), "gate=coordinator") {
		t.Errorf("the wait line does not name the step and what it waits for:\n%s", buf)
	}

	ctx, cancel := context.WithCancel(context.Background())
	looks = 0
	_, err = lookAgain(ctx, clock.NewStepping(time.Unix(0, 0)), nil, "topics", "x", true, func() (int, error) {
		looks++
		if looks == 3 {
			cancel()
		}
		return 0, sarama.ErrNotController
	})
	if !errors.Is(err, sarama.ErrNotController) {
		t.Fatalf("at ctx's end lookAgain = %v, want the last answer (NOT_CONTROLLER)", err)
	}
	if e := lookFailed("describe x", err); !strings.Contains(e.Error(), "not yet") {
		t.Errorf("lookFailed = %v, want it to say not yet", e)
	}
	if e := lookFailed("describe x", sarama.ErrTopicAuthorizationFailed); strings.Contains(e.Error(), "not yet") {
		t.Errorf("lookFailed = %v on a final answer, want no not yet", e)
	}
}

// LookAgain, the plugins step's read of the config topic: a broker gone
// ("not leader", a refused connection) is looked at again; a final answer
// fails at once, named.
func TestExportedLookAgain(t *testing.T) {
	looks := 0
	v, err := LookAgain(context.Background(), clock.NewStepping(time.Unix(0, 0)), nil, "plugins", "config topic c to be read", func() (int, error) {
		looks++
		if looks < 3 {
			return 0, sarama.ErrNotLeaderForPartition
		}
		return 7, nil
	})
	if err != nil || v != 7 || looks != 3 {
		t.Fatalf("LookAgain = %d, %v after %d looks, want 7 after 3", v, err, looks)
	}
	looks = 0
	_, err = LookAgain(context.Background(), clock.NewStepping(time.Unix(0, 0)), nil, "plugins", "config topic c to be read", func() (int, error) {
		looks++
		return 0, sarama.ErrTopicAuthorizationFailed
	})
	if err == nil || looks != 1 || !strings.Contains(err.Error(), "config topic c to be read") || !errors.Is(err, sarama.ErrTopicAuthorizationFailed) {
		t.Fatalf("final answer: %v after %d looks", err, looks)
	}
}

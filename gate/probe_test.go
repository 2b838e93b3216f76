package gate

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
)

// probeBroker is a MockBroker that answers what the broker gate's probe
// asks: metadata listing brokers (id to address), DescribeCluster v2 with
// the same brokers, none fenced, and ApiVersions.
func probeBroker(t *testing.T, id int32) *sarama.MockBroker {
	b := sarama.NewMockBroker(t, id)
	t.Cleanup(b.Close)
	return b
}

func answerProbe(t *testing.T, b *sarama.MockBroker, brokers map[int32]*sarama.MockBroker) {
	addrs := map[int32]string{}
	for id, other := range brokers {
		addrs[id] = other.Addr()
	}
	answerProbeAt(t, b, addrs)
}

// answerProbeAt is answerProbe with the brokers advertised at addrs.
func answerProbeAt(t *testing.T, b *sarama.MockBroker, addrs map[int32]string) {
	md := sarama.NewMockMetadataResponse(t).SetController(1)
	dc := &sarama.DescribeClusterResponse{Version: 2, ControllerID: 1, ClusterID: "c"}
	for id, addr := range addrs {
		md.SetBroker(addr, id)
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := strconv.Atoi(port)
		dc.Brokers = append(dc.Brokers, &sarama.DescribeClusterBroker{BrokerID: id, Host: host, Port: int32(p)})
	}
	b.SetHandlerByMap(map[string]sarama.MockResponse{
		"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
			{ApiKey: 3, MinVersion: 0, MaxVersion: 7},  // Metadata
			{ApiKey: 18, MinVersion: 0, MaxVersion: 3}, // ApiVersions
			{ApiKey: 60, MinVersion: 0, MaxVersion: 2}, // DescribeCluster
		}),
		"MetadataRequest":        md,
		"DescribeClusterRequest": sarama.NewMockWrapper(dc),
	})
}

// requestsOf counts b's requests by kind.
func requestsOf(b *sarama.MockBroker) map[string]int {
	n := map[string]int{}
	for _, rr := range b.History() {
		switch rr.Request.(type) {
		case *sarama.ApiVersionsRequest:
			n["ApiVersions"]++
		case *sarama.MetadataRequest:
			n["Metadata"]++
		case *sarama.DescribeClusterRequest:
			n["DescribeCluster"]++
		default:
			n["other"]++
		}
	}
	return n
}

// The probe asks the registrations over the connection that answered the
// metadata request, and a broker advertised at a bootstrap address that
// answered is not dialed again: one connection (one ApiVersions handshake)
// per broker, where each was a connection of its own before (issue 39); a
// ready look does not ask the mode (TestProbeAsksTheModeOnlyWhenItIsUsed).
// A broker that is no bootstrap server is still pinged on its own.
func TestProbeReusesTheBootstrapAnswers(t *testing.T) {
	b1, b2 := probeBroker(t, 1), probeBroker(t, 2)
	all := map[int32]*sarama.MockBroker{1: b1, 2: b2}
	answerProbe(t, b1, all)
	answerProbe(t, b2, all)
	g := &BrokerGate{Config: mockConfig(), Bootstrap: []string{b1.Addr()}, Expected: 2, Log: slog.New(slog.DiscardHandler),
		Clock: clock.NewStepping(time.Unix(0, 0))}
	rep := g.Probe(context.Background())
	if !rep.Ready || rep.UpCount() != 2 {
		t.Fatalf("probe %+v, want both brokers up", rep)
	}
	if got, want := requestsOf(b1), map[string]int{"ApiVersions": 1, "Metadata": 1, "DescribeCluster": 1}; !sameCounts(got, want) {
		t.Errorf("the bootstrap broker got %v, want %v (one connection: its handshake, the metadata, the registrations; no mode on a ready look)", got, want)
	}
	if got, want := requestsOf(b2), map[string]int{"ApiVersions": 2}; !sameCounts(got, want) {
		t.Errorf("the other broker got %v, want %v (its ping: a handshake and an ApiVersions)", got, want)
	}
	// The bootstrap server's answer is its own view of the topics, for the
	// topics step; the broker only pinged has none.
	if len(rep.Handoff.views) != 1 || rep.Handoff.views[1] == nil || rep.Handoff.views[1] != rep.Handoff.Metadata {
		t.Errorf("views %v, want broker 1's metadata answer only", rep.Handoff.views)
	}
}

// A bootstrap server that does not answer is pinged as any broker, so its
// status carries the ping's own error; the others' answers still count.
func TestProbePingsABootstrapServerThatFailed(t *testing.T) {
	b1, b2 := probeBroker(t, 1), sarama.NewMockBroker(t, 2)
	all := map[int32]*sarama.MockBroker{1: b1, 2: b2}
	answerProbe(t, b1, all)
	addr2 := b2.Addr()
	b2.Close() // listed by the cluster, down
	g := &BrokerGate{Config: mockConfig(), Bootstrap: []string{b1.Addr(), addr2}, Expected: 2, Log: slog.New(slog.DiscardHandler),
		Clock: clock.NewStepping(time.Unix(0, 0))}
	rep := g.Probe(context.Background())
	if rep.Ready || rep.UpCount() != 1 {
		t.Fatalf("probe %+v, want broker 1 up and broker 2 down", rep)
	}
	for _, st := range rep.Brokers {
		if st.ID == 2 && (st.Up || st.Err == "") {
			t.Errorf("broker 2: %+v, want down with the ping's error", st)
		}
	}
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A look the deadline cuts short is not what the gate reports: the error
// names the last whole look and its fix. Regression test for
// internal/zkmode TestKilledBroker in CI's rehearsal of 2026-12-04: with
// one broker of three gone for good, the deadline fell during a look, the
// two live brokers' pings ended "no answer in time", and the error said
// "0/3 brokers up" with the fix for unreachable brokers, not "set
// CONNECT_INIT_EXPECTED_BROKERS=2". Here broker 2 is reached through a
// proxy whose second connection (the second look's ping) cancels the
// gate's context and is never answered: the deadline falls inside that
// look, every time.
func TestBrokerGateReportsTheLastWholeLook(t *testing.T) {
	b1, b2 := probeBroker(t, 1), probeBroker(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	proxy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	var conns atomic.Int32
	var heldClosed atomic.Bool
	go func() {
		for {
			c, err := proxy.Accept()
			if err != nil {
				return
			}
			if conns.Add(1) > 1 {
				cancel() // the deadline, in the middle of this look
				go func() { io.Copy(io.Discard, c); heldClosed.Store(true); c.Close() }()
				continue
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", b2.Addr())
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, c)
				io.Copy(c, up)
			}()
		}
	}()
	addrs := map[int32]string{1: b1.Addr(), 2: proxy.Addr().String()}
	answerProbeAt(t, b1, addrs)
	answerProbeAt(t, b2, addrs)
	g := &BrokerGate{Config: mockConfig(), Bootstrap: []string{b1.Addr()}, Expected: 3, Log: slog.New(slog.DiscardHandler),
		Clock: clock.NewStepping(time.Unix(0, 0)), Jitter: func() float64 { return 0 }}
	rep, err := g.Wait(ctx)
	var ge *GateError
	if !errors.As(err, &ge) {
		t.Fatalf("Wait: %v, want a GateError at the deadline", err)
	}
	if n := conns.Load(); n < 2 {
		t.Fatalf("broker 2 was dialed %d times, want a second look cut by the deadline", n)
	}
	if heldClosed.Load() {
		t.Errorf("the gate waited for the cut ping to time out (the client closed it) before it returned")
	}
	if rep.UpCount() != 2 || !strings.Contains(ge.Err.Error(), "2/3 brokers up") || strings.Contains(ge.Err.Error(), "no answer in time") {
		t.Errorf("the error reports the cut look: %v", err)
	}
	if !strings.Contains(ge.Fix, "CONNECT_INIT_EXPECTED_BROKERS=2") {
		t.Errorf("fix %q, want the fix for a missing broker (lower CONNECT_INIT_EXPECTED_BROKERS)", ge.Fix)
	}
}

// A bootstrap server that accepts and never answers does not keep the
// gate past its end: sarama's handshake holds the connection's lock, so
// closing it at ctx's end waited for the read timeout (30 s here,
// request.timeout.ms in a worker).
func TestBrokerGateEndsWithItsContextAgainstASilentServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	var closed atomic.Bool
	go func() {
		c, err := silent.Accept()
		if err != nil {
			return
		}
		cancel()
		io.Copy(io.Discard, c)
		closed.Store(true)
		c.Close()
	}()
	g := &BrokerGate{Config: mockConfig(), Bootstrap: []string{silent.Addr().String()}, Expected: 1, Log: slog.New(slog.DiscardHandler),
		Clock: clock.NewStepping(time.Unix(0, 0))}
	_, err = g.Wait(ctx)
	var ge *GateError
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "no bootstrap server answers") {
		t.Fatalf("Wait: %v, want the gate's error naming the silent bootstrap server", err)
	}
	if closed.Load() {
		t.Errorf("the gate waited for the dial's read timeout before it returned")
	}
}

// The registrations and the cluster's mode are asked over the same
// connection when the look is not ready (they tell fenced brokers and word
// what is absent), and at every look for doctor (AskQuorum), which reports
// them; a ready look of the start-up's gate (ReadyOnMetadata) asks neither
// (issue 39).
func TestProbeAsksTheModeOnlyWhenItIsUsed(t *testing.T) {
	for _, c := range []struct {
		name     string
		expected int
		ask      bool
		modes    int
	}{
		{"ready", 2, false, 0},
		{"not ready", 3, false, 1},
		{"doctor", 2, true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			b1, b2 := probeBroker(t, 1), probeBroker(t, 2)
			all := map[int32]*sarama.MockBroker{1: b1, 2: b2}
			answerProbe(t, b1, all)
			answerProbe(t, b2, all)
			g := &BrokerGate{Config: mockConfig(), Bootstrap: []string{b1.Addr()}, Expected: c.expected, Log: slog.New(slog.DiscardHandler),
				Clock: clock.NewStepping(time.Unix(0, 0)), AskQuorum: c.ask, QuorumWait: time.Millisecond, ReadyOnMetadata: true}
			rep := g.Probe(context.Background())
			if rep.Ready != (c.expected == 2) {
				t.Fatalf("ready %v, want %v", rep.Ready, c.expected == 2)
			}
			// The handshake is one ApiVersions; the mode is the other.
			if got := requestsOf(b1)["ApiVersions"] - 1; got != c.modes {
				t.Errorf("the mode was asked %d times, want %d", got, c.modes)
			}
			if c.modes > 0 && rep.Mode == kafka.ModeUnknown {
				t.Errorf("the mode was asked but not reported")
			}
			if got := requestsOf(b1)["DescribeCluster"]; got != c.modes || rep.FencedKnown != (c.modes > 0) {
				t.Errorf("the registrations were asked %d times (fenced known %v), want %d", got, rep.FencedKnown, c.modes)
			}
		})
	}
}

// With ReadTopicSettings the probe reads the internal topics' settings over
// the connection that answered the metadata, beside the pings, when that
// answer shows them all (issue 39); when it misses one, it asks nothing
// and leaves them to the topics step; nor when the answer lists fewer
// brokers than expected (it lists the live ones only: the look cannot be
// ready, and the read would be wasted at every look while a broker is
// missing).
func TestProbeReadsTheTopicSettingsBeside(t *testing.T) {
	for _, c := range []struct {
		name     string
		shown    []string
		expected int
		want     bool
	}{
		{"every topic shown", []string{"c", "o", "s"}, 1, true},
		{"one topic missing", []string{"c", "o"}, 1, false},
		{"a broker missing", []string{"c", "o", "s"}, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := probeBroker(t, 1)
			md := sarama.NewMockMetadataResponse(t).SetController(1).SetBroker(b.Addr(), 1)
			for _, n := range c.shown {
				md.SetLeader(n, 0, 1)
			}
			dc := &sarama.DescribeConfigsResponse{Version: 2}
			for _, n := range []string{"c", "o", "s"} {
				dc.Resources = append(dc.Resources, &sarama.ResourceResponse{Type: sarama.TopicResource, Name: n,
					Configs: []*sarama.ConfigEntry{{Name: cleanupPolicy, Value: "compact"}, {Name: minInsyncReplicas, Value: "2"}}})
			}
			b.SetHandlerByMap(map[string]sarama.MockResponse{
				"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
					{ApiKey: 3, MinVersion: 0, MaxVersion: 7}, {ApiKey: 18, MinVersion: 0, MaxVersion: 3}, {ApiKey: 32, MinVersion: 0, MaxVersion: 2}}),
				"MetadataRequest":        md,
				"DescribeConfigsRequest": sarama.NewMockWrapper(dc),
			})
			g := &BrokerGate{Config: mockConfig(), Bootstrap: []string{b.Addr()}, Expected: c.expected, Topics: []string{"c", "o", "s"},
				Log: slog.New(slog.DiscardHandler), Clock: clock.NewStepping(time.Unix(0, 0)), ReadyOnMetadata: true, ReadTopicSettings: true}
			rep := g.Probe(context.Background())
			if rep.Ready != (c.expected == 1) {
				t.Fatalf("probe %+v, want ready %v", rep, c.expected == 1)
			}
			asked := 0
			for _, rr := range b.History() {
				if _, ok := rr.Request.(*sarama.DescribeConfigsRequest); ok {
					asked++
				}
			}
			if got := rep.Handoff.settings != nil; got != c.want || asked != map[bool]int{true: 1, false: 0}[c.want] {
				t.Fatalf("settings read %v (%d DescribeConfigs), want %v", got, asked, c.want)
			}
			if c.want && rep.Handoff.settings.byName["o"].values[cleanupPolicy] != "compact" {
				t.Errorf("settings %+v, want each topic's", rep.Handoff.settings.byName)
			}
		})
	}
}

// With FindCoordinator the probe asks for the group's coordinator over the
// connection that answered the metadata, beside the pings (issue 39), when
// that answer lists every expected broker: FindCoordinator makes a new
// cluster create __consumer_offsets, which must wait for them all. An
// answer that names no coordinator is not kept (the coordinator step asks
// again and says why).
func TestProbeFindsTheCoordinatorBeside(t *testing.T) {
	const group = "connect-cluster"
	for _, c := range []struct {
		name     string
		expected int
		answer   sarama.KError
		asked    int
		found    bool
	}{
		{"every broker listed", 1, sarama.ErrNoError, 1, true},
		{"a broker missing", 2, sarama.ErrNoError, 0, false},
		{"no coordinator yet", 1, sarama.ErrConsumerCoordinatorNotAvailable, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := probeBroker(t, 1)
			md := sarama.NewMockMetadataResponse(t).SetController(1).SetBroker(b.Addr(), 1)
			fc := sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, group, b)
			if c.answer != sarama.ErrNoError {
				fc = sarama.NewMockFindCoordinatorResponse(t).SetError(sarama.CoordinatorGroup, group, c.answer)
			}
			b.SetHandlerByMap(map[string]sarama.MockResponse{
				"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
					{ApiKey: 3, MinVersion: 0, MaxVersion: 7}, {ApiKey: 10, MinVersion: 0, MaxVersion: 2}, {ApiKey: 18, MinVersion: 0, MaxVersion: 3}}),
				"MetadataRequest":        md,
				"FindCoordinatorRequest": fc,
			})
			g := &BrokerGate{Config: mockConfig(), Bootstrap: []string{b.Addr()}, Expected: c.expected, Log: slog.New(slog.DiscardHandler),
				Clock: clock.NewStepping(time.Unix(0, 0)), ReadyOnMetadata: true, FindCoordinator: group}
			rep := g.Probe(context.Background())
			asked := 0
			for _, rr := range b.History() {
				if r, ok := rr.Request.(*sarama.FindCoordinatorRequest); ok && r.CoordinatorKey == group {
					asked++
				}
			}
			if asked != c.asked {
				t.Errorf("FindCoordinator asked %d times, want %d", asked, c.asked)
			}
			if got := rep.Handoff.Coordinator != nil; got != c.found {
				t.Fatalf("coordinator %+v, want found %v", rep.Handoff.Coordinator, c.found)
			}
			if c.found && (rep.Handoff.Coordinator.ID != 1 || rep.Handoff.Coordinator.Addr != b.Addr()) {
				t.Errorf("coordinator %+v, want broker 1 at %s", rep.Handoff.Coordinator, b.Addr())
			}
		})
	}
}

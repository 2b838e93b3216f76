package gate

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clock"
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
	md := sarama.NewMockMetadataResponse(t).SetController(1)
	dc := &sarama.DescribeClusterResponse{Version: 2, ControllerID: 1, ClusterID: "c"}
	for id, other := range brokers {
		md.SetBroker(other.Addr(), id)
		dc.Brokers = append(dc.Brokers, &sarama.DescribeClusterBroker{BrokerID: id, Host: "127.0.0.1", Port: int32(other.Port())})
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

// The probe asks the registrations and the mode over the connection that
// answered the metadata request, and a broker advertised at a bootstrap
// address that answered is not dialed again: one connection (one
// ApiVersions handshake) per broker and one ApiVersions for the mode,
// where each of these was a connection of its own before (issue 39). A
// broker that is no bootstrap server is still pinged on its own.
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
	if got, want := requestsOf(b1), map[string]int{"ApiVersions": 2, "Metadata": 1, "DescribeCluster": 1}; !sameCounts(got, want) {
		t.Errorf("the bootstrap broker got %v, want %v (one connection: its handshake, the metadata, the registrations, the mode)", got, want)
	}
	if got, want := requestsOf(b2), map[string]int{"ApiVersions": 2}; !sameCounts(got, want) {
		t.Errorf("the other broker got %v, want %v (its ping: a handshake and an ApiVersions)", got, want)
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

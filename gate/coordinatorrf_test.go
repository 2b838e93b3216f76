package gate

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
)

// rfAdmin answers DescribeConfigs with offsets.topic.replication.factor=3
// and counts the requests.
type rfAdmin struct {
	sarama.ClusterAdmin
	asked *atomic.Int32
}

func (a rfAdmin) DescribeConfigs(res []*sarama.ConfigResource, _ sarama.DescribeConfigsOptions) ([]*sarama.ConfigResourceResult, error) {
	a.asked.Add(1)
	return []*sarama.ConfigResourceResult{{Type: res[0].Type, Name: res[0].Name,
		Configs: []sarama.ConfigEntry{{Name: offsetsTopicReplicationFactor, Value: "3"}}}}, nil
}

// The coordinator's offsets.topic.replication.factor is read only when a
// finding quotes it, or when asked (doctor reports it): on a healthy
// cluster it was a round trip of every start (issue 39).
func TestCoordinatorReadsTheReplicationFactorOnlyWhenQuoted(t *testing.T) {
	const group = "connect-cluster"
	for _, c := range []struct {
		name      string
		isr       []int32
		doctor    bool
		wantAsked int32
	}{
		{"healthy", []int32{1, 2}, false, 0},
		{"healthy, doctor", []int32{1, 2}, true, 1},
		{"one in-sync replica", []int32{1}, false, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := mockKafka(t)
			md := &sarama.MetadataResponse{Version: 7, ControllerID: 1}
			md.AddBroker(b.Addr(), 1)
			md.AddBroker("127.0.0.1:1", 2)
			for p := range int32(50) {
				md.AddTopicPartition(ConsumerOffsetsTopic, p, 1, []int32{1, 2}, c.isr, nil, sarama.ErrNoError)
			}
			b.SetHandlerByMap(map[string]sarama.MockResponse{
				"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
					{ApiKey: 3, MinVersion: 0, MaxVersion: 7}, {ApiKey: 10, MinVersion: 0, MaxVersion: 2}, {ApiKey: 18, MinVersion: 0, MaxVersion: 3},
				}),
				"FindCoordinatorRequest": sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, group, b),
				"MetadataRequest":        sarama.NewMockWrapper(md),
			})
			client, _ := mockClients(t, b)
			var asked atomic.Int32
			log, buf := bufferLog()
			g := &CoordinatorGate{Client: client, Admin: rfAdmin{asked: &asked}, GroupID: group, Log: log, Clock: clock.NewStepping(time.Unix(0, 0)),
				Wait: true, ReadReplicationFactor: c.doctor, registrations: func() ([]kafka.Registration, error) { return nil, nil }}
			rep, err := g.Check(context.Background())
			if err != nil {
				t.Fatalf("Check = %v\n%s", err, buf)
			}
			if n := asked.Load(); n != c.wantAsked {
				t.Errorf("DescribeConfigs asked %d times, want %d", n, c.wantAsked)
			}
			if want := map[bool]string{true: "3", false: ""}[c.wantAsked > 0]; rep.OffsetsTopicReplicationFactor != want {
				t.Errorf("offsets.topic.replication.factor %q, want %q", rep.OffsetsTopicReplicationFactor, want)
			}
			if len(c.isr) < 2 && !strings.Contains(buf.String(), "offsets.topic.replication.factor=3") {
				t.Errorf("the single-replica warning does not quote the setting:\n%s", buf)
			}
		})
	}
}

// The coordinator step reads no metadata of __consumer_offsets that its
// client already holds: the start-up's clients read it with their first
// metadata (seedTopics), and reading it again was a round trip of every
// start (issue 39). A client without it reads it, as before.
func TestCoordinatorReadsNoMetadataItsClientHas(t *testing.T) {
	const group = "connect-cluster"
	for _, seeded := range []bool{true, false} {
		t.Run(map[bool]string{true: "seeded", false: "not seeded"}[seeded], func(t *testing.T) {
			b := mockKafka(t)
			md := &sarama.MetadataResponse{Version: 7, ControllerID: 1}
			md.AddBroker(b.Addr(), 1)
			md.AddBroker("127.0.0.1:1", 2)
			for p := range int32(50) {
				md.AddTopicPartition(ConsumerOffsetsTopic, p, 1, []int32{1, 2}, []int32{1, 2}, nil, sarama.ErrNoError)
			}
			b.SetHandlerByMap(map[string]sarama.MockResponse{
				"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
					{ApiKey: 3, MinVersion: 0, MaxVersion: 7}, {ApiKey: 10, MinVersion: 0, MaxVersion: 2}, {ApiKey: 18, MinVersion: 0, MaxVersion: 3},
				}),
				"FindCoordinatorRequest": sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, group, b),
				"MetadataRequest":        sarama.NewMockWrapper(md),
			})
			metadataReads := func() int32 {
				var n int32
				for _, rr := range b.History() {
					if _, ok := rr.Request.(*sarama.MetadataRequest); ok {
						n++
					}
				}
				return n
			}
			client, _ := mockClients(t, b)
			if seeded {
				if err := client.RefreshMetadata(ConsumerOffsetsTopic); err != nil {
					t.Fatal(err)
				}
			}
			before := metadataReads()
			log, buf := bufferLog()
			g := &CoordinatorGate{Client: client, Admin: quietAdmin{}, GroupID: group, Log: log, Clock: clock.NewStepping(time.Unix(0, 0)),
				Wait: true, registrations: func() ([]kafka.Registration, error) { return nil, nil }}
			rep, err := g.Check(context.Background())
			if err != nil {
				t.Fatalf("Check = %v\n%s", err, buf)
			}
			if rep.Partitions != 50 || rep.Leader != 1 || len(rep.ISR) != 2 {
				t.Errorf("report %+v", rep)
			}
			want := map[bool]int32{true: 0, false: 1}[seeded]
			if n := metadataReads() - before; n != want {
				t.Errorf("%d metadata reads by the coordinator step, want %d", n, want)
			}
		})
	}
}

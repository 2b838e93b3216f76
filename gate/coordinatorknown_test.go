package gate

import (
	"context"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
)

// knownCoordinatorKafka is one mock broker that is the group's
// coordinator, with __consumer_offsets' metadata; answer sets how it
// answers DescribeGroups (code, or the group Empty for ErrNoError); count
// counts the requests of a kind.
func knownCoordinatorKafka(t *testing.T, group string) (b *sarama.MockBroker, answer func(code sarama.KError), count func(string) int) {
	b = mockKafka(t)
	md := &sarama.MetadataResponse{Version: 7, ControllerID: 1}
	md.AddBroker(b.Addr(), 1)
	for p := range int32(50) {
		md.AddTopicPartition(ConsumerOffsetsTopic, p, 1, []int32{1}, []int32{1}, nil, sarama.ErrNoError)
	}
	answer = func(code sarama.KError) {
		d := &sarama.GroupDescription{GroupId: group, State: "Empty", ProtocolType: "connect"}
		if code != sarama.ErrNoError {
			d = &sarama.GroupDescription{GroupId: group, Err: code, ErrorCode: int16(code)}
		}
		b.SetHandlerByMap(map[string]sarama.MockResponse{
			"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys([]sarama.ApiVersionsResponseKey{
				{ApiKey: 3, MinVersion: 0, MaxVersion: 7}, {ApiKey: 10, MinVersion: 0, MaxVersion: 2}, {ApiKey: 15, MinVersion: 0, MaxVersion: 5}, {ApiKey: 18, MinVersion: 0, MaxVersion: 3},
			}),
			"FindCoordinatorRequest": sarama.NewMockFindCoordinatorResponse(t).SetCoordinator(sarama.CoordinatorGroup, group, b),
			"MetadataRequest":        sarama.NewMockWrapper(md),
			"DescribeGroupsRequest":  sarama.NewMockDescribeGroupsResponse(t).AddGroupDescription(group, d),
		})
	}
	answer(sarama.ErrNoError)
	count = func(kind string) int {
		n := 0
		for _, rr := range b.History() {
			switch rr.Request.(type) {
			case *sarama.FindCoordinatorRequest:
				if kind == "FindCoordinator" {
					n++
				}
			case *sarama.DescribeGroupsRequest:
				if kind == "DescribeGroups" {
					n++
				}
			}
		}
		return n
	}
	return b, answer, count
}

// The coordinator the brokers step found (BrokerGate.FindCoordinator) is
// the coordinator step's and the group step's: neither asks
// FindCoordinator again (a round trip of every start, issue 39). A
// DescribeGroups answer that fails drops it, and the client looks the
// coordinator up as before.
func TestTheKnownCoordinatorIsNotAskedAgain(t *testing.T) {
	const group = "connect-cluster"
	b, answer, count := knownCoordinatorKafka(t, group)
	client, _ := mockClients(t, b)
	if err := client.RefreshMetadata(ConsumerOffsetsTopic); err != nil {
		t.Fatal(err)
	}
	known := &FoundCoordinator{ID: 1, Addr: b.Addr()}
	log, buf := bufferLog()
	cg := &CoordinatorGate{Client: client, Admin: quietAdmin{}, GroupID: group, Log: log, Clock: clock.NewStepping(time.Unix(0, 0)),
		Wait: true, Known: known, registrations: func() ([]kafka.Registration, error) { return nil, nil }}
	rep, err := cg.Check(context.Background())
	if err != nil {
		t.Fatalf("coordinator step: %v\n%s", err, buf)
	}
	if rep.CoordinatorID != 1 || rep.CoordinatorAddr != b.Addr() || rep.Partition < 0 {
		t.Errorf("coordinator report %+v", rep)
	}
	gg := &GroupGate{Client: client, GroupID: group}
	gg.UseCoordinator(known)
	if d, err := gg.describe(context.Background()); err != nil || d.State != "Empty" {
		t.Fatalf("describe: %+v, %v", d, err)
	}
	if n := count("FindCoordinator"); n != 0 {
		t.Errorf("FindCoordinator asked %d times with the coordinator known, want 0", n)
	}
	answer(sarama.ErrNotCoordinatorForConsumer)
	if _, err := gg.describe(context.Background()); err == nil {
		t.Fatal("describe at a coordinator that answers NOT_COORDINATOR: no error")
	}
	answer(sarama.ErrNoError)
	if _, err := gg.describe(context.Background()); err != nil {
		t.Fatalf("describe after NOT_COORDINATOR: %v", err)
	}
	if n := count("FindCoordinator"); n == 0 {
		t.Error("after NOT_COORDINATOR the coordinator was not looked up again")
	}
}

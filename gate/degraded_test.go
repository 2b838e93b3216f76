package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
)

// A broker that leaves the live set is named by id and last address: first
// fenced (still registered), then gone (unregistered) from the gate's
// memory of the registrations it saw; with no id known, by its bootstrap
// address.
func TestAbsentBrokersAreNamed(t *testing.T) {
	g := &BrokerGate{Expected: 3, Bootstrap: []string{"k1:9092", "k2:9092", "k3:9092"}}
	live := []BrokerStatus{{ID: 1, Addr: "k1:9092", Up: true}, {ID: 2, Addr: "k2:9092", Up: true}}
	fenced := g.absent(live, []kafka.Registration{{ID: 1, Addr: "k1:9092", Fenced: false}, {ID: 2, Addr: "k2:9092", Fenced: false}, {ID: 3, Addr: "k3:9092", Fenced: true}}, true)
	if len(fenced) != 1 || fenced[0] != (AbsentBroker{ID: 3, Addr: "k3:9092", State: StateFenced}) {
		t.Fatalf("absent with broker 3 fenced = %+v", fenced)
	}
	rep := &BrokerReport{Expected: 3, Brokers: live, Absent: fenced, ControllerID: 1}
	if s := rep.Summary(); !strings.Contains(s, "2/3 brokers up") || !strings.Contains(s, "missing: broker 3 (registered but fenced, last at k3:9092)") {
		t.Errorf("Summary = %q", s)
	}
	if fix := MissingFix(rep); !strings.Contains(fix, "restart broker 3") || !strings.Contains(fix, "kafka-cluster unregister --bootstrap-server ... --id 3") ||
		!strings.Contains(fix, "CONNECT_INIT_EXPECTED_BROKERS=2") {
		t.Errorf("MissingFix = %q", fix)
	}

	gone := g.absent(live, []kafka.Registration{{ID: 1, Addr: "k1:9092", Fenced: false}, {ID: 2, Addr: "k2:9092", Fenced: false}}, true)
	if len(gone) != 1 || gone[0] != (AbsentBroker{ID: 3, Addr: "k3:9092", State: StateGone}) {
		t.Fatalf("absent after broker 3 was unregistered = %+v", gone)
	}
	// Before Kafka 4.0 the cluster does not say fenced: a broker that left
	// the registrations is fenced or unregistered.
	old := &BrokerGate{Expected: 3, Bootstrap: g.Bootstrap}
	old.absent(live, []kafka.Registration{{ID: 1, Addr: "k1:9092", Fenced: false}, {ID: 2, Addr: "k2:9092", Fenced: false}, {ID: 3, Addr: "k3:9092", Fenced: false}}, false)
	if a := old.absent(live, []kafka.Registration{{ID: 1, Addr: "k1:9092", Fenced: false}, {ID: 2, Addr: "k2:9092", Fenced: false}}, false); len(a) != 1 || a[0].State != StateNotLive {
		t.Errorf("absent without the fenced flag = %+v, want broker 3 %q", a, StateNotLive)
	}
	rep.Absent = gone
	if fix := MissingFix(rep); !strings.Contains(fix, "start broker 3 again") {
		t.Errorf("MissingFix for a gone broker = %q", fix)
	}

	// A fresh gate on a cluster that never showed broker 3: its bootstrap
	// address is all that names it.
	fresh := &BrokerGate{Expected: 3, Bootstrap: []string{"k1:9092", "k2:9092", "k3:9092"}}
	only := fresh.absent(live, nil, false)
	if len(only) != 1 || only[0] != (AbsentBroker{ID: -1, Addr: "k3:9092", State: StateBootstrapOnly}) {
		t.Fatalf("absent with only bootstrap addresses = %+v", only)
	}
	rep.Absent = only
	if s := rep.Summary(); !strings.Contains(s, "missing: k3:9092 (bootstrap address that no live broker advertises)") {
		t.Errorf("Summary = %q", s)
	}
	// Expected 4 with 3 known: one more of unknown id.
	rep.Expected = 4
	if s := rep.MissingText(); !strings.Contains(s, "1 more broker(s) of unknown id") {
		t.Errorf("MissingText = %q", s)
	}
	// All live: nothing missing.
	ok := &BrokerGate{Expected: 2, Bootstrap: []string{"k1:9092", "k2:9092"}}
	if a := ok.absent(live, []kafka.Registration{{ID: 1, Addr: "k1:9092", Fenced: false}, {ID: 2, Addr: "k2:9092", Fenced: false}}, true); len(a) != 0 {
		t.Errorf("absent on a healthy cluster = %+v", a)
	}
}

// lostClient is a member client whose coordinator look-up fails, or blocks
// until release is closed.
type lostClient struct {
	sarama.Client
	block   bool
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (c *lostClient) RefreshCoordinator(string) error {
	if c.block {
		c.once.Do(func() { close(c.started) })
		<-c.release
	}
	return sarama.ErrConsumerCoordinatorNotAvailable
}

// RefreshMetadata fails as the coordinator look-up does: the coordinator
// gate reads __consumer_offsets' metadata while it asks.
func (c *lostClient) RefreshMetadata(...string) error {
	return sarama.ErrLeaderNotAvailable
}

// Topics is the client's cache: empty, the metadata reads fail.
func (c *lostClient) Topics() ([]string, error) { return nil, nil }

// offsetsAdmin answers DescribeTopics for __consumer_offsets with the
// group's partition as given.
type offsetsAdmin struct {
	sarama.ClusterAdmin
	partition       int32
	leader          int32
	replicas, isr   []int32
	partitionsTotal int
}

func (a *offsetsAdmin) DescribeTopics([]string) ([]*sarama.TopicMetadata, error) {
	md := &sarama.TopicMetadata{Name: ConsumerOffsetsTopic}
	for i := range a.partitionsTotal {
		p := &sarama.PartitionMetadata{ID: int32(i), Leader: 1, Replicas: []int32{1}, Isr: []int32{1}}
		if int32(i) == a.partition {
			p.Leader, p.Replicas, p.Isr = a.leader, a.replicas, a.isr
		}
		md.Partitions = append(md.Partitions, p)
	}
	return []*sarama.TopicMetadata{md}, nil
}

// deadlineClock is a Stepping clock that ends a context once its time
// reaches the deadline: a gate's timeout on the injected clock.
type deadlineClock struct {
	*clock.Stepping
	deadline time.Time
	cancel   context.CancelFunc
}

func (c *deadlineClock) After(d time.Duration) <-chan time.Time {
	ch := c.Stepping.After(d)
	if !c.Now().Before(c.deadline) {
		c.cancel()
	}
	return ch
}

// When no coordinator can be found the gate names the group's partition,
// its replicas, ISR and leader and the replicas' brokers that are down, and
// the fix depends on whether any replica is live. It keeps waiting,
// logging every 5 s, and ends within 1 s of its deadline on the clock.
func TestCoordinatorLost(t *testing.T) {
	const group = "connect-cluster"
	p := GroupPartition(group, 50)
	regs := []kafka.Registration{{ID: 1, Addr: "k1:9092", Fenced: false}, {ID: 2, Addr: "k2:9092", Fenced: false}, {ID: 3, Addr: "k3:9092", Fenced: true}}
	for _, tc := range []struct {
		name          string
		leader        int32
		replicas, isr []int32
		want          []string
	}{
		{"all replicas down", -1, []int32{3}, []int32{3}, []string{
			fmt.Sprintf("__consumer_offsets partition %d (abs(hashCode) %% 50): replicas [3], ISR [3], leader none", p),
			"down: broker 3 (registered but fenced, last at k3:9092)",
			fmt.Sprintf("fix: bring broker 3 back: every replica of __consumer_offsets partition %d is on it, and the offsets committed there are not available until it returns", p),
		}},
		{"a live replica", -1, []int32{3, 1}, []int32{1}, []string{
			"replicas [3, 1], ISR [1], leader none",
			"down: broker 3 (registered but fenced, last at k3:9092)",
			fmt.Sprintf("fix: wait for the leader election of __consumer_offsets partition %d", p),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			start := time.Unix(0, 0)
			const timeout = 30 * time.Second
			clk := &deadlineClock{Stepping: clock.NewStepping(start), deadline: start.Add(timeout), cancel: cancel}
			var logs bytes.Buffer
			g := &CoordinatorGate{Client: &lostClient{}, Admin: &offsetsAdmin{partition: p, leader: tc.leader, replicas: tc.replicas, isr: tc.isr, partitionsTotal: 50},
				GroupID: group, Log: slog.New(slog.NewTextHandler(&logs, nil)), Clock: clk, Wait: true,
				registrations: func() ([]kafka.Registration, error) { return regs, nil }}
			rep, err := g.Check(ctx)
			var ge *GateError
			if !errors.As(err, &ge) || ge.Gate != "coordinator" {
				t.Fatalf("Check = %v, want a coordinator gate error", err)
			}
			text := err.Error()
			t.Log(text)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("error %q lacks %q", text, w)
				}
			}
			if over := clk.Now().Sub(clk.deadline); over > time.Second {
				t.Errorf("the gate ended %v past its deadline on the clock, want at most 1s", over)
			}
			lines := strings.Count(logs.String(), "waiting for the group coordinator")
			if lines < 5 || lines > 6 {
				t.Errorf("%d progress lines in %v, want one every 5 s:\n%s", lines, timeout, logs.String())
			}
			if !strings.Contains(logs.String(), "down=\"broker 3 (registered but fenced") {
				t.Errorf("progress lines do not name the down broker:\n%s", logs.String())
			}
			if len(rep.DownReplicas) != 1 || rep.DownReplicas[0].ID != 3 || rep.Partitions != 50 || rep.Partition != p {
				t.Errorf("report = %+v", rep)
			}
		})
	}
}

// A coordinator look-up that hangs (a dial to a dead broker, a request
// timeout far beyond the gate's) does not hold the gate past its context:
// it returns while the call is still blocked.
func TestCoordinatorGateEndsWithItsContext(t *testing.T) {
	client := &lostClient{block: true, started: make(chan struct{}), release: make(chan struct{})}
	defer close(client.release)
	ctx, cancel := context.WithCancel(context.Background())
	g := &CoordinatorGate{Client: client, GroupID: "g", Log: slog.New(slog.DiscardHandler), Clock: clock.NewStepping(time.Unix(0, 0)), Wait: true}
	go func() {
		<-client.started
		cancel()
	}()
	_, err := g.Check(ctx)
	select {
	case <-client.release:
		t.Fatal("the blocked call was released before the gate returned")
	default:
	}
	if err == nil || !strings.Contains(err.Error(), checks.IDCoordinatorNotAvailable) && !strings.Contains(err.Error(), "no coordinator") {
		t.Fatalf("Check = %v, want no coordinator", err)
	}
}

// The brokers gate's client connection ends with its context: a bootstrap
// server that accepts and never answers (a hung broker) does not hold it
// for sarama's request timeout, and nothing half-connected is kept.
func TestConnectEndsWithItsContext(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c // held open, never answered
		}
	}()
	defer func() {
		for {
			select {
			case c := <-accepted:
				c.Close()
			default:
				return
			}
		}
	}()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.Metadata.Retry.Max = 0
	clients := &kafka.Clients{MemberConfig: cfg, AdminConfig: cfg}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c := <-accepted
		accepted <- c
		cancel()
	}()
	err = clients.ConnectContext(ctx, []string{l.Addr().String()}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ConnectContext = %v, want the context's end", err)
	}
	if clients.Member != nil || clients.Admin != nil {
		t.Fatal("clients kept after the context ended")
	}
}

// A broker that left the registrations before this run saw it (a
// controlled shutdown in ZooKeeper mode) is still a replica of the
// internal topics' partitions: it is named by that id, besides the
// bootstrap address no live broker advertises; live and already listed
// brokers are not repeated.
func TestAbsentBrokerNamedAsReplica(t *testing.T) {
	live := []BrokerStatus{{ID: 1, Addr: "k1:9092", Up: true}, {ID: 2, Addr: "k2:9092", Up: true}}
	fresh := &BrokerGate{Expected: 3, Bootstrap: []string{"k1:9092", "k2:9092", "k3:9092"}}
	md := &sarama.MetadataResponse{Topics: []*sarama.TopicMetadata{
		{Name: "configs", Partitions: []*sarama.PartitionMetadata{{ID: 0, Replicas: []int32{3, 1, 2}}}},
		{Name: "offsets", Partitions: []*sarama.PartitionMetadata{{ID: 0, Replicas: []int32{1, 2, 3}}, {ID: 1, Replicas: []int32{2, 3, 4}}}},
	}}
	got := replicaAbsent(fresh.absent(live, nil, false), live, md, fresh.seen)
	want := []AbsentBroker{
		{ID: -1, Addr: "k3:9092", State: StateBootstrapOnly},
		{ID: 3, Addr: "unknown", State: StateReplicaOnly},
		{ID: 4, Addr: "unknown", State: StateReplicaOnly},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("absent = %v, want %v", got, want)
	}
	rep := &BrokerReport{Expected: 3, Brokers: live, Absent: got, ControllerID: 1}
	if s := rep.MissingText(); !strings.Contains(s, "broker 3 (not live, still a replica of the internal topics; address unknown)") || strings.Contains(s, "unknown id") {
		t.Errorf("MissingText = %q", s)
	}
	// Seen earlier in the run: listed once, with its address.
	seen := &BrokerGate{Expected: 3, Bootstrap: fresh.Bootstrap}
	seen.absent(append(live, BrokerStatus{ID: 3, Addr: "k3:9092"}), nil, false)
	again := replicaAbsent(seen.absent(live, nil, false), live, md, seen.seen)
	if n := strings.Count(fmt.Sprint(again), "ID:3"); n > 1 || len(again) != 2 || again[0] != (AbsentBroker{ID: 3, Addr: "k3:9092", State: StateNotLive}) {
		t.Errorf("absent after broker 3 was seen = %+v", again)
	}
}

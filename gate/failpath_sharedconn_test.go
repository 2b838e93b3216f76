package gate

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A group look whose ctx ends while DescribeGroups is in flight returns
// ctx's error and leaves the client's connection to the coordinator open:
// with one Kafka client for both roles, other work shares it, and the
// Close the look used to cut the request short killed it under them
// (issue 48). Once the held answer comes, the same connection serves the
// next look.
func TestTimedOutLookKeepsTheSharedConnection(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "_connect-configs"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	release := make(chan struct{})
	held := make(chan struct{})
	var once sync.Once
	c.ControlKey(int16(kmsg.DescribeGroups), func(kmsg.Request) (kmsg.Response, error, bool) {
		first := false
		once.Do(func() { first = true })
		if first {
			close(held)
			c.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	client, err := sarama.NewClient(c.ListenAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	g := &GroupGate{Client: client, GroupID: "connect-cluster", ConfigTopic: "_connect-configs"}
	coord, err := client.Coordinator(g.GroupID)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-held
		cancel()
	}()
	if _, err := g.describe(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("describe = %v, want ctx's cancellation", err)
	}
	close(release)
	if connected, _ := coord.Connected(); !connected {
		t.Fatal("the cancelled look closed the client's connection to the coordinator, which other work shares")
	}
	next, cancelNext := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancelNext()
	if _, err := g.describe(next); err != nil {
		t.Fatalf("the next look over the shared connection: %v", err)
	}
	if _, _, err := g.ConfigEndOffsets(next); err != nil {
		t.Fatalf("the config topic's end offsets over the shared client: %v", err)
	}
}

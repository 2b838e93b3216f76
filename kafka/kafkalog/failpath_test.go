package kafkalog

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

// A read whose ctx ends while its fetch is in flight returns ctx's error
// and leaves the client's connection to the leader open: with one Kafka
// client for both roles, the group gate's requests share it, and closing
// it (as the read did to cut the fetch short) failed them (issue 48).
// After the held fetch is answered, the same connection serves the next
// read without a new dial.
func TestCancelledReadKeepsTheSharedConnection(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	release := make(chan struct{})
	var once sync.Once
	held := make(chan struct{})
	c.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
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
	leader, err := client.Leader("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-held
		cancel()
	}()
	_, err = ReadAll(ctx, client, "t", 0, func(Record) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadAll = %v, want ctx's cancellation", err)
	}
	// The held fetch is answered now; Connected waits for it (sarama
	// holds the connection's lock through a request).
	close(release)
	if connected, _ := leader.Connected(); !connected {
		t.Fatal("the cancelled read closed the client's connection to the leader, which other work shares")
	}
	again, err := client.Leader("t", 0)
	if err != nil || again != leader {
		t.Fatalf("leader %v, %v; want the same broker", again, err)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rcancel()
	if _, err := ReadAll(rctx, client, "t", 0, func(Record) error { return nil }); err != nil {
		t.Fatalf("the next read over the shared connection: %v", err)
	}
}

package lock

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
)

const testTopic = "_connect-init-lock"

type harness struct {
	t       *testing.T
	cluster *kfake.Cluster
	clock   *fakeClock
	logs    *syncBuffer
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatalf("starting kfake: %v", err)
	}
	t.Cleanup(c.Close)
	h := &harness{t: t, cluster: c, clock: newFakeClock(), logs: &syncBuffer{}}
	admin, err := sarama.NewClusterAdmin(c.ListenAddrs(), adminConfig())
	if err != nil {
		t.Fatalf("admin client: %v", err)
	}
	defer func() { _ = admin.Close() }()
	if err := EnsureTopic(context.Background(), admin, testTopic, 1); err != nil {
		t.Fatalf("EnsureTopic: %v", err)
	}
	return h
}

func adminConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	return cfg
}

// config returns a lock configuration with test-friendly timings: a 30s
// lease and 1s polls, in fake time.
func (h *harness) config(identity string) Config {
	return h.configFor(h.cluster.ListenAddrs(), identity)
}

func (h *harness) configFor(brokers []string, identity string) Config {
	return Config{
		Brokers:      brokers,
		Topic:        testTopic,
		Scope:        "connect-cluster",
		Identity:     identity,
		URL:          "http://" + identity + ":8083/",
		Lease:        30 * time.Second,
		HoldLease:    10 * time.Minute,
		PollInterval: time.Second,
		Clock:        h.clock,
		Logger:       slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("member", identity),
	}
}

func (h *harness) newLock(cfg Config) *Lock {
	h.t.Helper()
	l, err := New(cfg)
	if err != nil {
		h.t.Fatalf("New(%s): %v", cfg.Identity, err)
	}
	return l
}

// contender runs Acquire in the background.
type contender struct {
	id       string
	lock     *Lock
	cancel   context.CancelFunc
	finished chan struct{} // closed when Acquire has returned
	err      error         // Acquire's result, once finished
}

func (h *harness) start(l *Lock) *contender {
	ctx, cancel := context.WithCancel(context.Background())
	c := &contender{id: l.cfg.Identity, lock: l, cancel: cancel, finished: make(chan struct{})}
	go func() {
		c.err = l.Acquire(ctx)
		close(c.finished)
	}()
	h.t.Cleanup(func() {
		cancel()
		select {
		case <-c.finished:
		case <-time.After(10 * time.Second):
			h.t.Errorf("%s: Acquire did not return after cancel", c.id)
		}
	})
	return c
}

// result returns Acquire's result if it has returned.
func (c *contender) result() (err error, ok bool) {
	select {
	case <-c.finished:
		return c.err, true
	default:
		return nil, false
	}
}

// wait waits (bounded) for Acquire to return.
func (c *contender) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-c.finished:
		return c.err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: Acquire did not return", c.id)
		return nil
	}
}

// acquired reports whether c's Acquire has returned, and fails the test if
// it returned an error.
func (c *contender) acquired(t *testing.T) bool {
	t.Helper()
	err, ok := c.result()
	if ok && err != nil {
		t.Fatalf("%s: Acquire: %v", c.id, err)
	}
	return ok
}

// eventually polls cond, advancing the fake clock by step between polls,
// and fails after a bounded amount of wall time.
func (h *harness) eventually(what string, step time.Duration, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s\nlogs:\n%s", what, h.logs.String())
		}
		if step > 0 {
			h.clock.Advance(step)
		}
		time.Sleep(3 * time.Millisecond)
	}
}

// never checks that cond stays false over n polls of step fake time each.
func (h *harness) never(what string, n int, step time.Duration, cond func() bool) {
	h.t.Helper()
	for range n {
		if cond() {
			h.t.Fatalf("unexpectedly %s", what)
		}
		h.clock.Advance(step)
		time.Sleep(3 * time.Millisecond)
	}
	if cond() {
		h.t.Fatalf("unexpectedly %s", what)
	}
}

func (h *harness) snapshot(l *Lock) Snapshot {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := l.Queue(ctx)
	if err != nil {
		h.t.Fatalf("Queue: %v", err)
	}
	return s
}

func entry(s Snapshot, identity string) (Entry, bool) {
	for _, e := range s.Entries {
		if e.Identity == identity {
			return e, true
		}
	}
	return Entry{}, false
}

func countState(s Snapshot, st State) int {
	n := 0
	for _, e := range s.Entries {
		if e.State == st {
			n++
		}
	}
	return n
}

// rawRecords reads every record of the lock topic.
func (h *harness) rawRecords() []rawRecord {
	h.t.Helper()
	client, err := sarama.NewClient(h.cluster.ListenAddrs(), adminConfig())
	if err != nil {
		h.t.Fatalf("client: %v", err)
	}
	defer func() { _ = client.Close() }()
	oldest, newest, err := bounds(client, testTopic)
	if err != nil {
		h.t.Fatal(err)
	}
	if newest <= oldest {
		return nil
	}
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		h.t.Fatal(err)
	}
	defer func() { _ = consumer.Close() }()
	pc, err := consumer.ConsumePartition(testTopic, 0, sarama.OffsetOldest)
	if err != nil {
		h.t.Fatal(err)
	}
	defer func() { _ = pc.Close() }()
	var out []rawRecord
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-pc.Messages():
			out = append(out, rawRecord{Offset: m.Offset, Timestamp: m.Timestamp, Key: m.Key, Value: m.Value})
			if m.Offset+1 >= newest {
				return out
			}
		case <-timeout:
			h.t.Fatalf("reading the lock topic timed out after %d records", len(out))
		}
	}
}

// produce writes one raw record, stamped with the fake clock.
func (h *harness) produce(k recordKey, v any) {
	h.t.Helper()
	cfg := producerConfig(nil)
	p, err := sarama.NewSyncProducer(h.cluster.ListenAddrs(), cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	msg := &sarama.ProducerMessage{Topic: testTopic, Key: sarama.ByteEncoder(k.encode()), Timestamp: h.clock.Now()}
	if v != nil {
		b, _ := json.Marshal(v)
		msg.Value = sarama.ByteEncoder(b)
	}
	if _, _, err := p.SendMessage(msg); err != nil {
		h.t.Fatalf("producing: %v", err)
	}
}

func sortedByTicket(s Snapshot) []string {
	es := append([]Entry(nil), s.Entries...)
	sort.Slice(es, func(i, j int) bool { return es[i].Ticket < es[j].Ticket })
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.Identity
	}
	return ids
}

package lock

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
)

// fakeClock is a Clock that only moves when the test advances it. Because
// kfake keeps the producer's CreateTime instead of stamping LogAppendTime,
// it is also the fake broker's clock.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	// Start at the real time so kfake's own wall-clock checks (tombstone
	// retention) see plausible timestamps.
	return &fakeClock{now: time.Now().Truncate(time.Millisecond)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.timers = append(c.timers, fakeTimer{at: c.now.Add(d), ch: ch})
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			t.ch <- c.now
		} else {
			kept = append(kept, t)
		}
	}
	c.timers = kept
}

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
	return Config{
		Brokers:      h.cluster.ListenAddrs(),
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

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// lines returns the log lines of one member containing msg.
func (b *syncBuffer) lines(member, msg string) []string {
	var out []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "member="+member) && strings.Contains(l, msg) {
			out = append(out, l)
		}
	}
	return out
}

// readyTable is a ReadyFunc the test flips per identity.
type readyTable struct {
	mu    sync.Mutex
	ready map[string]bool
}

func newReadyTable() *readyTable { return &readyTable{ready: map[string]bool{}} }

func (r *readyTable) set(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ready[id] = true
}

func (r *readyTable) check(_ context.Context, h Holder) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ready[h.Identity], nil
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

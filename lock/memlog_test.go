package lock

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// memTopic is an in-memory lock topic for protocol tests: offsets in append
// order, timestamps from the fake clock (standing in for LogAppendTime). No
// broker, fake or real, is involved, so a test controls every append.
type memTopic struct {
	mu      sync.Mutex
	recs    []rawRecord
	clock   *fakeClock
	changed chan struct{} // closed and replaced on every append
	// fail, when set, decides whether an append is lost (and reported as
	// failed) instead of written.
	fail func(key, value []byte) bool
	// failErr is the error a lost append reports (nil: errLost, an error
	// waiting can change).
	failErr error
	logs    []*memLog
}

func newMemTopic(c *fakeClock) *memTopic {
	return &memTopic{clock: c, changed: make(chan struct{})}
}

// attach makes l's sessions use this topic.
func (t *memTopic) attach(l *Lock) *Lock {
	l.open = func() (recordLog, logBounds, error) {
		t.mu.Lock()
		defer t.mu.Unlock()
		m := &memLog{t: t, records: make(chan rawRecord, 1024), failures: make(chan appendFailure, 64), stop: make(chan struct{})}
		t.logs = append(t.logs, m)
		b := logBounds{start: 0, end: int64(len(t.recs))}
		go m.read()
		return m, b, nil
	}
	return l
}

func (t *memTopic) records() []rawRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]rawRecord(nil), t.recs...)
}

// snapshot folds the topic into a scope's queue, as Queue does.
func (t *memTopic) snapshot(scope string, permits int) Snapshot {
	v := newView(scope)
	for _, r := range t.records() {
		_ = v.apply(r)
	}
	return v.snapshot(testTopic, permits)
}

type memLog struct {
	t        *memTopic
	records  chan rawRecord
	failures chan appendFailure
	stop     chan struct{}
	next     atomic.Int64
	closed   atomic.Bool
	// closes counts Close and Abandon calls: end must call exactly one.
	closes atomic.Int32
}

func (m *memLog) read() {
	for {
		m.t.mu.Lock()
		n := m.next.Load()
		if n < int64(len(m.t.recs)) {
			r := m.t.recs[n]
			m.t.mu.Unlock()
			select {
			case m.records <- r:
				m.next.Add(1)
			case <-m.stop:
				return
			}
			continue
		}
		ch := m.t.changed
		m.t.mu.Unlock()
		select {
		case <-ch:
		case <-m.stop:
			return
		}
	}
}

func (m *memLog) Records() <-chan rawRecord      { return m.records }
func (m *memLog) ReadErrors() <-chan error       { return nil }
func (m *memLog) Failures() <-chan appendFailure { return m.failures }

// Pending counts the records fetched and not yet taken, as saramaLog's
// does (the consumer's buffer): a record leaves the count in the instant
// the session receives it. Counting every appended record not yet
// delivered raced with the reader's bookkeeping after a hand-over, so a
// session could see its own just-received record as still pending and
// leave its claim to the next poll, which a test with a still fake clock
// never brings.
func (m *memLog) Pending() int { return len(m.records) }

func (m *memLog) Append(key, value []byte, _ time.Time, seq uint64) {
	if m.closed.Load() {
		panic("append after Close")
	}
	t := m.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fail != nil && t.fail(key, value) {
		err := errLost
		if t.failErr != nil {
			err = t.failErr
		}
		m.failures <- appendFailure{seq: seq, err: err}
		return
	}
	t.recs = append(t.recs, rawRecord{Offset: int64(len(t.recs)), Timestamp: t.clock.Now(), Key: key, Value: value})
	close(t.changed)
	t.changed = make(chan struct{})
}

func (m *memLog) Close(time.Duration) error {
	m.closes.Add(1)
	m.closed.Store(true)
	close(m.stop)
	return nil
}

func (m *memLog) Abandon() {
	m.closes.Add(1)
	m.closed.Store(true)
	close(m.stop)
}

type lostError struct{}

func (lostError) Error() string { return "append lost (test)" }

var errLost error = lostError{}

// memHarness runs sessions over one memTopic.
type memHarness struct {
	*harness
	topic *memTopic
}

func newMemHarness(t *testing.T) *memHarness {
	h := &harness{t: t, clock: newFakeClock(), logs: &syncBuffer{}}
	return &memHarness{harness: h, topic: newMemTopic(h.clock)}
}

func (h *memHarness) config(identity string) Config {
	return h.harness.configFor([]string{"memory:0"}, identity)
}

func (h *memHarness) lock(cfg Config) *Lock { return h.topic.attach(h.newLock(cfg)) }

func (h *memHarness) snap(permits int) Snapshot { return h.topic.snapshot("connect-cluster", permits) }

package lock

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// A waiter whose writes all fail (a leaderless lock partition, or one with
// fewer in-sync replicas than min.insync.replicas) gives up with
// ErrUnavailable, naming topic and partition, once UnavailableAfter has
// passed since the first failure, and not before.
func TestMemUnavailableAfterBound(t *testing.T) {
	h := newMemHarness(t)
	holder := h.start(h.lock(h.config("holder")))
	h.eventually("holder holds", time.Second, func() bool { return holder.acquired(t) })
	var failing atomic.Bool
	failing.Store(true)
	h.topic.fail = func(_, _ []byte) bool { return failing.Load() }
	cfg := h.config("w")
	cfg.UnavailableAfter = 2 * time.Minute
	w := h.start(h.lock(cfg))
	h.eventually("a failed write", 0, func() bool { return len(h.logs.lines("w", "writing to the startup lock topic failed")) > 0 })
	h.never("w gives up within the bound", 110, time.Second, func() bool { _, done := w.result(); return done })
	h.eventually("w gives up", time.Second, func() bool { _, done := w.result(); return done })
	err := w.wait(t)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `"`+testTopic+`" partition 0`) {
		t.Fatalf("Acquire = %v, want ErrUnavailable naming the topic and partition 0", err)
	}
}

// A write that lands resets the bound: a failover shorter than
// UnavailableAfter costs nothing, and the failed heartbeat is written again
// within a poll rather than a heartbeat period later.
func TestMemShortOutageKeepsWaiting(t *testing.T) {
	h := newMemHarness(t)
	holder := h.start(h.lock(h.config("holder")))
	h.eventually("holder holds", time.Second, func() bool { return holder.acquired(t) })
	cfg := h.config("w")
	cfg.UnavailableAfter = time.Minute
	w := h.start(h.lock(cfg))
	h.eventually("w queued", time.Second, func() bool { return countState(h.snap(1), StateWaiting) == 1 })
	for range 3 { // three outages of 50 s each, 3 minutes in all
		var failures atomic.Int32
		h.topic.fail = func(_, _ []byte) bool { failures.Add(1); return true }
		h.never("w gives up during a 50 s outage", 50, time.Second, func() bool { _, done := w.result(); return done })
		if failures.Load() == 0 {
			t.Fatal("no write was attempted during the outage")
		}
		h.topic.fail = nil
		before := len(h.topic.records())
		// One poll (1 s) after the outage, not a heartbeat period (10 s).
		h.clock.Advance(time.Second)
		h.eventually("a write right after the outage", 0, func() bool { return len(h.topic.records()) > before })
	}
	if _, done := w.result(); done {
		t.Fatalf("w returned: %v", w.err)
	}
}

// A lock topic that cannot be opened for a reason waiting can change (no
// leader yet) is opened again every second, until UnavailableAfter.
func TestMemOpenRetriedUntilUnavailable(t *testing.T) {
	h := newMemHarness(t)
	cfg := h.config("w")
	cfg.UnavailableAfter = 20 * time.Second
	l := h.newLock(cfg)
	var opened atomic.Int32
	l.open = func() (recordLog, logBounds, error) {
		opened.Add(1)
		return nil, logBounds{}, errors.New("lock: reading the end offset: kafka server: leader not available (test)")
	}
	w := h.start(l)
	h.eventually("w gives up", time.Second, func() bool { _, done := w.result(); return done })
	if err := w.wait(t); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Acquire = %v, want ErrUnavailable", err)
	}
	if n := opened.Load(); n < 10 {
		t.Fatalf("opened %d times in 20 s, want about one a second", n)
	}
}

// A write refused for an answer no wait changes (the principal lacks WRITE
// on the lock topic: TOPIC_AUTHORIZATION_FAILED) ends Acquire at once with
// ErrRefused naming the topic and the cluster's answer, never
// ErrUnavailable after UnavailableAfter (which would start the worker
// without the lock). Issue 37: it was waited out as an outage.
func TestMemAuthorizationRefusalIsNotAnOutage(t *testing.T) {
	h := newMemHarness(t)
	h.topic.failErr = fmt.Errorf("produce: %w", sarama.ErrTopicAuthorizationFailed)
	h.topic.fail = func(_, _ []byte) bool { return true }
	cfg := h.config("w")
	cfg.UnavailableAfter = 2 * time.Minute
	w := h.start(h.lock(cfg))
	h.eventually("w gives up", 0, func() bool { _, done := w.result(); return done })
	err := w.wait(t)
	if !errors.Is(err, ErrRefused) || errors.Is(err, ErrUnavailable) || !errors.Is(err, sarama.ErrTopicAuthorizationFailed) ||
		!strings.Contains(err.Error(), `"`+testTopic+`"`) {
		t.Fatalf("Acquire = %v, want ErrRefused naming the topic and the authorization failure", err)
	}
	if n := len(h.logs.lines("w", "writing to the startup lock topic failed; will retry")); n != 0 {
		t.Errorf("the refusal was retried %d times", n)
	}
}

// Opening the topic refused for good (no READ or DESCRIBE) is ErrRefused
// too, at the first try.
func TestMemOpenRefusedAtOnce(t *testing.T) {
	h := newMemHarness(t)
	cfg := h.config("w")
	cfg.UnavailableAfter = 20 * time.Second
	l := h.newLock(cfg)
	var opened atomic.Int32
	l.open = func() (recordLog, logBounds, error) {
		opened.Add(1)
		return nil, logBounds{}, fmt.Errorf("lock: reading the end offset: %w", sarama.ErrTopicAuthorizationFailed)
	}
	w := h.start(l)
	h.eventually("w gives up", 0, func() bool { _, done := w.result(); return done })
	if err := w.wait(t); !errors.Is(err, ErrRefused) {
		t.Fatalf("Acquire = %v, want ErrRefused", err)
	}
	if n := opened.Load(); n != 1 {
		t.Errorf("opened %d times, want 1", n)
	}
}

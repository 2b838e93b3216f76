package lock

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"time"
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

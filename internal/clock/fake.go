package clock

import (
	"sync"
	"time"
)

// Stepping is a Clock for tests in which time passes only when code
// waits: After advances Now by d and fires at once, so a polling loop runs
// instantly and deterministically, and a deadline computed from Now is
// reached after the waits it allows.
type Stepping struct {
	mu  sync.Mutex
	now time.Time
	// waited is the sum of all After durations.
	waited time.Duration
}

// NewStepping returns a Stepping clock at start.
func NewStepping(start time.Time) *Stepping { return &Stepping{now: start} }

// Now returns the clock's time.
func (c *Stepping) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After advances the clock by d and returns a channel that has fired.
func (c *Stepping) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.waited += d
	now := c.now
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- now
	return ch
}

// Waited is how long all waits on the clock lasted together.
func (c *Stepping) Waited() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.waited
}

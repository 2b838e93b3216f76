package lock

import "time"

// Clock paces the lock: heartbeats, polls and log throttling. It never
// decides a lease: lease ages come from broker timestamps only. It is an
// interface so that tests can drive the lock with a fake clock instead of
// sleeping.
//
// Now is also used as the CreateTime of records the lock writes; a broker
// discards it on a LogAppendTime topic, and a fake broker that keeps it (such
// as kfake) thereby lets tests control broker time with the same fake clock.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the Clock backed by package time; it is the default.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

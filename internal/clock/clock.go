// Package clock is the one time source of connect-init: the gates, the
// startup lock and the REST checks take a Clock so that tests drive time
// with a fake one instead of sleeping on the wall clock. It imports nothing
// of connect-init, so every package may depend on it.
package clock

import "time"

// Clock tells the time and paces waits.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

// System is the Clock of package time; the default wherever a Clock is nil.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (System) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Or returns c, or System when c is nil, so that a zero-valued field means
// the real clock.
func Or(c Clock) Clock {
	if c == nil {
		return System{}
	}
	return c
}

// Sleep waits d on c or until done is closed; it reports whether the full
// duration passed.
func Sleep(c Clock, done <-chan struct{}, d time.Duration) bool {
	select {
	case <-done:
		return false
	case <-c.After(d):
		return true
	}
}

package startup

import (
	"context"
	"log/slog"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/step"
)

// The start-up profile.
//
// Each step logs what it does, but no line said how long: a start that is
// slower than a bare worker's could not tell where its time went. So the
// start-up logs ONE line, just before the worker starts (the exec, or the
// in-worker lock's child handing the turn to the JVM), with every step's
// duration in milliseconds; `make bench` reads these lines, so every
// bring-up figure comes with its breakdown. The message is constant
// (ProfileMessage); a step that did not run has no key.

// ProfileMessage is the message of the start-up profile line.
const ProfileMessage = "start-up profile"

// Profile keys that are not a step's name: the group gate's window of
// looks after its first Stable snapshot (inside group), and the lock step
// split into its wait in the queue and the handoff (the holder before us
// seen ready, then our claim).
const (
	ProfileGroupWindow = "group_window"
	ProfileLockWait    = "lock_wait"
	ProfileLockHandoff = "lock_handoff"
	// ProfileLockOpen replaces lock_wait and lock_handoff when the worker
	// did not wait for a permit: the time until it saw the group open
	// (CONNECT_INIT_LOCK_JOINS=first; 0 when it was open at once).
	ProfileLockOpen = "lock_open"
	ProfileTotal    = "total"
)

// profileOrder is the order of the line's keys: the pipeline's.
var profileOrder = []string{step.Settings, step.Brokers, step.Topics, step.Coordinator, step.Group, ProfileGroupWindow,
	step.Plugins, step.Lock, ProfileLockWait, ProfileLockHandoff, ProfileLockOpen, step.Peers}

// Profile collects the durations of one start-up's steps, on an
// injectable clock. A nil *Profile records nothing, so code shared with
// callers that do not profile needs no checks.
type Profile struct {
	clk   clock.Clock
	start time.Time
	d     map[string]time.Duration
}

// NewProfile starts a profile now, on clk (nil: the system clock).
func NewProfile(clk clock.Clock) *Profile {
	clk = clock.Or(clk)
	return &Profile{clk: clk, start: clk.Now(), d: map[string]time.Duration{}}
}

// Now is the profile's clock's time (zero for a nil profile).
func (p *Profile) Now() time.Time {
	if p == nil {
		return time.Time{}
	}
	return p.clk.Now()
}

// Since records key as the time from start to now.
func (p *Profile) Since(key string, start time.Time) {
	if p == nil {
		return
	}
	p.d[key] += p.clk.Now().Sub(start)
}

// Set records key as d.
func (p *Profile) Set(key string, d time.Duration) {
	if p == nil {
		return
	}
	p.d[key] = d
}

// Get returns key's duration and whether it was recorded.
func (p *Profile) Get(key string) (time.Duration, bool) {
	if p == nil {
		return 0, false
	}
	d, ok := p.d[key]
	return d, ok
}

// Time runs f and records its duration as key, whatever f returns.
func (p *Profile) Time(key string, f func() error) error {
	start := p.Now()
	err := f()
	p.Since(key, start)
	return err
}

// Attrs are the line's attributes: where the worker starts from, each
// recorded key as key_ms in the pipeline's order, then the total since
// NewProfile.
func (p *Profile) Attrs(where string) []any {
	if p == nil {
		return nil
	}
	attrs := []any{"where", where}
	for _, k := range profileOrder {
		if d, ok := p.d[k]; ok {
			attrs = append(attrs, k+"_ms", ms(d))
		}
	}
	return append(attrs, ProfileTotal+"_ms", ms(p.clk.Now().Sub(p.start)))
}

// Log logs the profile line. where says who hands the start over (the
// Where constants): run just before the exec, the in-worker lock's child
// as it lets the worker join, or prepare as it exits 0.
func (p *Profile) Log(ctx context.Context, log *slog.Logger, where string) {
	if p == nil {
		return
	}
	log.InfoContext(ctx, ProfileMessage, p.Attrs(where)...)
}

// ms is d in milliseconds with one decimal: short steps on a fast
// cluster take a few milliseconds.
func ms(d time.Duration) float64 {
	return float64(d.Round(100*time.Microsecond)) / float64(time.Millisecond)
}

// Where the worker starts from, the profile line's where.
const (
	// WhereExec: run, just before the exec, the lock taken before it (or
	// off).
	WhereExec = "exec"
	// WhereExecInWorkerLock: run, just before the exec, the worker to wait
	// for its turn itself: the lock's figures come in the child's line.
	WhereExecInWorkerLock = "exec, lock in the worker"
	// WhereInWorkerLock: `lock acquire`, the in-worker lock's child, as it
	// lets the worker join.
	WhereInWorkerLock = "in-worker lock"
	// WherePrepare: prepare, as it exits 0.
	WherePrepare = "prepare"
)

// lockSplit records the lock step's wait in the queue and its handoff:
// the handoff starts when the last holder before us was seen ready
// (lastReady; zero when we never waited for one, e.g. alone in the queue:
// then it is all wait) and ends at our claim (end).
func lockSplit(p *Profile, start, lastReady, end time.Time) {
	if lastReady.IsZero() || lastReady.Before(start) || lastReady.After(end) {
		p.Set(ProfileLockWait, end.Sub(start))
		p.Set(ProfileLockHandoff, 0)
		return
	}
	p.Set(ProfileLockWait, lastReady.Sub(start))
	p.Set(ProfileLockHandoff, end.Sub(lastReady))
}

package lock

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// member is what the log says about one member of the scope: the latest
// record under its member key, plus the latest release under its release key.
type member struct {
	identity    string
	url         string
	state       string // stateWaiting or stateHolding
	ticket      int64
	offset      int64     // offset of the latest member record
	ts          time.Time // broker timestamp of the latest member record
	lease       time.Duration
	holdLease   time.Duration
	incarnation string
	seq         uint64
}

// release is the latest record under a member's release key.
type release struct {
	holdOffset int64
	reason     string
	by         string
	ts         time.Time
}

// state is the lock's view of one scope, built by applying records in log
// order. Every decision is a function of (latest record per key, newest
// timestamp seen); compaction keeps exactly that, so a member that starts
// after a compaction reaches the same decisions as one that read every
// record.
type state struct {
	scope    string
	members  map[string]*member
	releases map[string]release
	// now is the broker's time as far as the log tells: the newest record
	// timestamp seen, in any scope.
	now time.Time
	// next is the offset after the last applied record.
	next int64
}

func newState(scope string) *state {
	return &state{scope: scope, members: map[string]*member{}, releases: map[string]release{}}
}

// observe advances the broker clock without applying the record.
func (s *state) observe(r rawRecord) {
	if r.Timestamp.After(s.now) {
		s.now = r.Timestamp
	}
	if r.Offset >= s.next {
		s.next = r.Offset + 1
	}
}

// apply folds one record into the state. Records of other scopes only move
// the clock. Malformed records are reported and otherwise ignored, so junk in
// a shared topic cannot wedge the queue.
func (s *state) apply(r rawRecord) error {
	s.observe(r)
	k, err := decodeKey(r.Key)
	if err != nil {
		return err
	}
	if k.Scope != s.scope {
		return nil
	}
	if k.Release {
		if r.Value == nil {
			delete(s.releases, k.Identity)
			return nil
		}
		var v releaseValue
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return fmt.Errorf("decoding release record at offset %d: %w", r.Offset, err)
		}
		s.releases[k.Identity] = release{holdOffset: v.HoldOffset, reason: v.Reason, by: v.By, ts: r.Timestamp}
		return nil
	}
	if r.Value == nil {
		delete(s.members, k.Identity)
		return nil
	}
	var v memberValue
	if err := json.Unmarshal(r.Value, &v); err != nil {
		return fmt.Errorf("decoding member record at offset %d: %w", r.Offset, err)
	}
	if v.State != stateWaiting && v.State != stateHolding {
		return fmt.Errorf("member record at offset %d has unknown state %q", r.Offset, v.State)
	}
	m := &member{
		identity:    k.Identity,
		url:         v.URL,
		state:       v.State,
		ticket:      v.Ticket,
		offset:      r.Offset,
		ts:          r.Timestamp,
		lease:       time.Duration(v.LeaseMS) * time.Millisecond,
		holdLease:   time.Duration(v.HoldLeaseMS) * time.Millisecond,
		incarnation: v.Incarnation,
		seq:         v.Seq,
	}
	if m.ticket < 0 {
		m.ticket = r.Offset
	}
	s.members[k.Identity] = m
	return nil
}

// status is a member's derived state at some broker time.
type status int

const (
	statusWaiting  status = iota // live waiter
	statusDead                   // waiter silent for more than its lease
	statusHolding                // holds a permit
	statusExpired                // held past its hold lease, no release record yet
	statusReleased               // a release record names this hold
)

var statusNames = [...]State{
	statusWaiting:  StateWaiting,
	statusDead:     StateDead,
	statusHolding:  StateHolding,
	statusExpired:  StateExpired,
	statusReleased: StateReleased,
}

func (s *state) status(m *member, now time.Time) status {
	if m.state == stateHolding {
		if r, ok := s.releases[m.identity]; ok && r.holdOffset == m.offset {
			return statusReleased
		}
		if now.Sub(m.ts) > m.holdLease {
			return statusExpired
		}
		return statusHolding
	}
	if now.Sub(m.ts) > m.lease {
		return statusDead
	}
	return statusWaiting
}

// queue is the scope's queue at one broker time: holders (occupying a permit)
// and live waiters, each in ticket order.
type queue struct {
	holders []*member
	waiters []*member
	dead    []*member
	expired []*member
	done    []*member // released
}

func byTicket(ms []*member) {
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].ticket != ms[j].ticket {
			return ms[i].ticket < ms[j].ticket
		}
		return ms[i].identity < ms[j].identity
	})
}

func (s *state) queue(now time.Time) queue {
	var q queue
	for _, m := range s.members {
		switch s.status(m, now) {
		case statusHolding:
			q.holders = append(q.holders, m)
		case statusWaiting:
			q.waiters = append(q.waiters, m)
		case statusDead:
			q.dead = append(q.dead, m)
		case statusExpired:
			q.expired = append(q.expired, m)
		case statusReleased:
			q.done = append(q.done, m)
		}
	}
	byTicket(q.holders)
	byTicket(q.waiters)
	byTicket(q.dead)
	byTicket(q.expired)
	byTicket(q.done)
	return q
}

// entitled reports whether identity, as a live waiter whose latest record is
// of the given incarnation, may take a permit at broker time now: fewer than
// permits holders, and no more than permits-holders-1 live waiters with an
// earlier ticket. Every holding record counts as a holder until it is
// released or its hold lease runs out, whether or not its writer ever went on
// to run: over-counting costs time, never safety.
func (s *state) entitled(identity, incarnation string, permits int, now time.Time) bool {
	me, ok := s.members[identity]
	if !ok || me.incarnation != incarnation || s.status(me, now) != statusWaiting {
		return false
	}
	q := s.queue(now)
	free := permits - len(q.holders)
	for i, w := range q.waiters {
		if i >= free {
			return false
		}
		if w == me {
			return true
		}
	}
	return false
}

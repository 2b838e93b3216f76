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
	identity string
	url      string
	// record is what its latest record says: StateWaiting or StateHolding.
	// What that means at a given broker time (dead, expired, released) is
	// view.stateOf's to say.
	record      State
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

// view is the lock's view of one scope, built by applying records in log
// order. Every decision is a function of (latest record per key, newest
// timestamp seen); compaction keeps exactly that, so a member that starts
// after a compaction reaches the same decisions as one that read every
// record.
type view struct {
	scope    string
	members  map[string]*member
	releases map[string]release
	// now is the broker's time as far as the log tells: the newest record
	// timestamp seen, in any scope.
	now time.Time
	// next is the offset after the last applied record.
	next int64
}

func newView(scope string) *view {
	return &view{scope: scope, members: map[string]*member{}, releases: map[string]release{}}
}

// observe advances the broker clock without applying the record.
func (s *view) observe(r rawRecord) {
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
func (s *view) apply(r rawRecord) error {
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
	if v.State != StateWaiting && v.State != StateHolding {
		return fmt.Errorf("member record at offset %d has unknown state %q", r.Offset, v.State)
	}
	m := &member{
		identity:    k.Identity,
		url:         v.URL,
		record:      v.State,
		ticket:      v.Ticket,
		offset:      r.Offset,
		ts:          r.Timestamp,
		lease:       time.Duration(v.LeaseMS) * time.Millisecond,
		holdLease:   time.Duration(v.HoldLeaseMS) * time.Millisecond,
		incarnation: v.Incarnation,
		seq:         v.Seq,
	}
	if m.ticket < 0 {
		// "This record's offset" for the first request of an
		// incarnation; a request written again before its writer read
		// the first one back (a failover: the first landed, its
		// acknowledgement did not) keeps the first one's ticket, as its
		// writer does (requestSeen takes the first it reads). Found by the
		// fault harness: with the newer offset, every other reader put
		// such a member behind later arrivals until its next heartbeat
		// named its real ticket, and one of them acquired out of turn.
		m.ticket = r.Offset
		if prev, ok := s.members[k.Identity]; ok && prev.incarnation == v.Incarnation && prev.record == StateWaiting {
			m.ticket = prev.ticket
		}
	}
	s.members[k.Identity] = m
	return nil
}

// stateOf is m's state at broker time now: what its latest record says,
// with the lease rules and release records applied.
func (s *view) stateOf(m *member, now time.Time) State {
	if m.record == StateHolding {
		if r, ok := s.releases[m.identity]; ok && r.holdOffset == m.offset {
			return StateReleased
		}
		if now.Sub(m.ts) > m.holdLease {
			return StateExpired
		}
		return StateHolding
	}
	if now.Sub(m.ts) > m.lease {
		return StateDead
	}
	return StateWaiting
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

func (s *view) queue(now time.Time) queue {
	var q queue
	for _, m := range s.members {
		switch s.stateOf(m, now) {
		case StateHolding:
			q.holders = append(q.holders, m)
		case StateWaiting:
			q.waiters = append(q.waiters, m)
		case StateDead:
			q.dead = append(q.dead, m)
		case StateExpired:
			q.expired = append(q.expired, m)
		case StateReleased:
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
func (s *view) entitled(identity, incarnation string, permits int, now time.Time) bool {
	me, ok := s.members[identity]
	if !ok || me.incarnation != incarnation || s.stateOf(me, now) != StateWaiting {
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

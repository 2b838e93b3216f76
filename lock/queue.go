package lock

import (
	"context"
	"time"
)

// State is a member's state. It is the package's one vocabulary of states:
// records say waiting or holding (and released, under a release key), and
// readers derive dead and expired from them with the lease rules
// (view.stateOf).
type State string

// Member states reported by Queue.
const (
	// StateWaiting is a live waiter: it heartbeat within its lease.
	StateWaiting State = "waiting"
	// StateDead is a waiter silent for longer than its lease; it is skipped
	// but keeps its ticket should it come back.
	StateDead State = "dead"
	// StateHolding is a member holding a permit.
	StateHolding State = "holding"
	// StateExpired is a holder past its hold lease with no release record
	// yet; it no longer counts against the permits.
	StateExpired State = "expired"
	// StateReleased is a holder whose hold has been released.
	StateReleased State = "released"
)

// Entry is one member of the queue, for operators and health checks.
type Entry struct {
	Identity string
	URL      string
	State    State
	// Position is 1-based over holders then live waiters, in ticket order;
	// 0 for dead, expired and released members.
	Position int
	// Ticket is the offset of the member's first request: queue order.
	Ticket int64
	// Offset and LastSeen are the offset and broker time of the member's
	// latest record; Age is Snapshot.Now - LastSeen.
	Offset   int64
	LastSeen time.Time
	Age      time.Duration
	// HeldFor is, for a holding or expired member, the broker time since
	// its hold began.
	HeldFor time.Duration
	// Lease and HoldLease are the member's own leases, from its record.
	Lease     time.Duration
	HoldLease time.Duration
	// ReleaseReason and ReleasedBy explain a released hold.
	ReleaseReason string
	ReleasedBy    string
}

// Snapshot is the queue of one scope as read from the lock topic.
type Snapshot struct {
	Topic   string
	Scope   string
	Permits int
	// Now is the broker time of the newest record in the topic. The lock
	// writes nothing to read it, so when nobody is queued it can lag the
	// real time and ages are understated.
	Now time.Time
	// Entries lists holders, then live waiters (both in ticket order), then
	// expired, dead and released members.
	Entries []Entry
}

// Queue reads the whole lock topic and returns this Lock's scope as it
// stands. It writes nothing and does not join the queue, so a health check
// or a diagnostic tool may call it freely.
func (l *Lock) Queue(ctx context.Context) (Snapshot, error) {
	recs, err := readTopic(ctx, l.cfg.Brokers, l.sarama, l.cfg.Topic, func(err error) {
		l.log.Debug("reading the startup lock topic failed; retrying", "error", err)
	})
	if err != nil {
		return Snapshot{}, err
	}
	v := newView(l.cfg.Scope)
	for _, r := range recs {
		_ = v.apply(r)
	}
	return v.snapshot(l.cfg.Topic, l.cfg.Permits), nil
}

func (s *view) snapshot(topic string, permits int) Snapshot {
	now := s.now
	q := s.queue(now)
	snap := Snapshot{Topic: topic, Scope: s.scope, Permits: permits, Now: now}
	add := func(ms []*member, st State, positioned bool) {
		for _, m := range ms {
			e := Entry{
				Identity:  m.identity,
				URL:       m.url,
				State:     st,
				Ticket:    m.ticket,
				Offset:    m.offset,
				LastSeen:  m.ts,
				Age:       now.Sub(m.ts),
				Lease:     m.lease,
				HoldLease: m.holdLease,
			}
			if positioned {
				e.Position = len(snap.Entries) + 1
			}
			if m.record == StateHolding {
				e.HeldFor = now.Sub(m.ts)
			}
			if st == StateReleased {
				r := s.releases[m.identity]
				e.ReleaseReason, e.ReleasedBy = r.reason, r.by
				e.HeldFor = r.ts.Sub(m.ts)
			}
			snap.Entries = append(snap.Entries, e)
		}
	}
	add(q.holders, StateHolding, true)
	add(q.waiters, StateWaiting, true)
	add(q.expired, StateExpired, false)
	add(q.dead, StateDead, false)
	add(q.done, StateReleased, false)
	return snap
}

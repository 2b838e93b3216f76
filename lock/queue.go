package lock

import (
	"context"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// State is a member's state as derived from the log at one broker time.
// Records only ever say waiting or holding (and released, under a release
// key); dead and expired are what the lease rules make of them.
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
	client, err := sarama.NewClient(l.cfg.Brokers, l.sarama)
	if err != nil {
		return Snapshot{}, fmt.Errorf("lock: connecting to %v: %w", l.cfg.Brokers, err)
	}
	defer func() { _ = client.Close() }()
	if err := checkPartitions(client, l.cfg.Topic); err != nil {
		return Snapshot{}, err
	}
	st := newState(l.cfg.Scope)
	oldest, newest, err := bounds(client, l.cfg.Topic)
	if err != nil {
		return Snapshot{}, err
	}
	if newest > oldest {
		consumer, err := sarama.NewConsumerFromClient(client)
		if err != nil {
			return Snapshot{}, fmt.Errorf("lock: creating consumer for %q: %w", l.cfg.Topic, err)
		}
		defer func() { _ = consumer.Close() }()
		pc, err := consumer.ConsumePartition(l.cfg.Topic, 0, sarama.OffsetOldest)
		if err != nil {
			return Snapshot{}, fmt.Errorf("lock: consuming %q: %w", l.cfg.Topic, err)
		}
		defer pc.AsyncClose() // the client's Close ends its fetch
	read:
		for {
			select {
			case <-ctx.Done():
				return Snapshot{}, fmt.Errorf("lock: reading %q up to offset %d: %w", l.cfg.Topic, newest, ctx.Err())
			case err := <-pc.Errors():
				l.log.Debug("reading the startup lock topic failed; retrying", "err", err)
			case msg, ok := <-pc.Messages():
				if !ok {
					return Snapshot{}, fmt.Errorf("lock: consumer of %q stopped", l.cfg.Topic)
				}
				_ = st.apply(rawRecord{Offset: msg.Offset, Timestamp: msg.Timestamp, Key: msg.Key, Value: msg.Value})
				if msg.Offset+1 >= newest {
					break read
				}
			}
		}
	}
	return st.snapshot(l.cfg.Topic, l.cfg.Permits), nil
}

func (s *state) snapshot(topic string, permits int) Snapshot {
	now := s.now
	q := s.queue(now)
	snap := Snapshot{Topic: topic, Scope: s.scope, Permits: permits, Now: now}
	add := func(ms []*member, st status, positioned bool) {
		for _, m := range ms {
			e := Entry{
				Identity:  m.identity,
				URL:       m.url,
				State:     statusNames[st],
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
			if m.state == stateHolding {
				e.HeldFor = now.Sub(m.ts)
			}
			if st == statusReleased {
				r := s.releases[m.identity]
				e.ReleaseReason, e.ReleasedBy = r.reason, r.by
				e.HeldFor = r.ts.Sub(m.ts)
			}
			snap.Entries = append(snap.Entries, e)
		}
	}
	add(q.holders, statusHolding, true)
	add(q.waiters, statusWaiting, true)
	add(q.expired, statusExpired, false)
	add(q.dead, statusDead, false)
	add(q.done, statusReleased, false)
	return snap
}

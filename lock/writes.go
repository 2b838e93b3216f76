package lock

import (
	"encoding/json"
	"fmt"
)

// request writes our first record. A restarted member keeps its ticket if
// its previous start was still waiting; one that had held (or was released,
// or withdrew) goes to the back of the queue.
func (s *session) request() {
	ticket := int64(-1)
	if prev, ok := s.view.members[s.l.cfg.Identity]; ok {
		s.predecessor = prev.incarnation
		if prev.record == StateWaiting {
			ticket = prev.ticket
			s.l.log.Info("restarted while waiting for the startup lock; keeping the place in the queue", "ticket", ticket)
		} else {
			s.l.log.Info("restarted after holding the startup lock; going to the back of the queue")
		}
	}
	s.requestSeq = s.write(StateWaiting, ticket)
}

func (s *session) heartbeat() {
	switch {
	case !s.caughtUp || s.claimSeq != 0:
		// Never write after a claim in flight: a later "waiting" would
		// undo a claim that succeeds.
	case !s.firstSeen:
		if s.requestSeq == 0 {
			s.request()
		}
	default:
		s.write(StateWaiting, s.ticket)
	}
}

// write appends a record under our member key: a request or heartbeat
// (StateWaiting) or a claim (StateHolding).
func (s *session) write(state State, ticket int64) uint64 {
	s.seq++
	v := memberValue{
		V:           formatVersion,
		Identity:    s.l.cfg.Identity,
		URL:         s.l.cfg.URL,
		State:       state,
		Ticket:      ticket,
		LeaseMS:     s.l.cfg.Lease.Milliseconds(),
		HoldLeaseMS: s.l.cfg.HoldLease.Milliseconds(),
		Incarnation: s.inc,
		Seq:         s.seq,
		Host:        s.host,
	}
	s.lastMember = s.seq
	s.send(recordKey{Scope: s.l.cfg.Scope, Identity: s.l.cfg.Identity}, v, s.seq)
	return s.seq
}

func (s *session) send(k recordKey, v any, seq uint64) {
	b, err := json.Marshal(v)
	if err != nil { // cannot happen: plain structs
		panic(fmt.Sprintf("lock: encoding value: %v", err))
	}
	s.log.Append(k.encode(), b, s.l.cfg.Clock.Now(), seq)
}

// writeFailed handles a write that the log gave up on. Heartbeats are
// simply retried at the next tick; a failed claim or request is forgotten
// so that a new one can be written (if the old one did land after all, the
// write after it supersedes it and it is never treated as ours).
func (s *session) writeFailed(f appendFailure) {
	s.l.log.Warn("writing to the startup lock topic failed; will retry", "error", f.err)
	if s.unavailableSince.IsZero() {
		s.unavailableSince = s.l.cfg.Clock.Now()
	}
	s.lastWriteErr = f.err
	s.rewrite = true
	if f.seq != 0 && f.seq == s.claimSeq {
		s.claimSeq = 0
	}
	if f.seq != 0 && f.seq == s.requestSeq {
		s.requestSeq = 0
	}
	// A release lost to a failover must be written again (the hold would
	// otherwise wait out its whole lease): forget that it was sent.
	if off, ok := s.releaseSeqs[f.seq]; ok {
		delete(s.releaseSeqs, f.seq)
		delete(s.releasesSent, off)
	}
}

// evaluate writes releases for expired holders and claims a permit when
// this member is entitled to one.
func (s *session) evaluate() {
	if !s.firstSeen || s.claimSeq != 0 {
		return
	}
	now := s.view.now
	q := s.view.queue(now)
	for _, m := range q.expired {
		s.release(m, "hold lease expired")
	}
	for _, m := range q.dead {
		if m.ticket < s.ticket && !s.deadLogged[m.offset] {
			s.deadLogged[m.offset] = true
			s.l.log.Info("skipping a silent waiter in the startup lock queue", "identity", m.identity, "silent_for", roundSec(now.Sub(m.ts)), "lease", m.lease)
		}
	}
	// A claim made from a view that records already fetched will change
	// is likely to fail validation; read them first.
	if s.log.Pending() > 0 {
		return
	}
	if s.view.entitled(s.l.cfg.Identity, s.inc, s.l.cfg.Permits, now) {
		s.claimSeq = s.write(StateHolding, s.ticket)
	}
}

// release writes the release of m's current hold, once per hold. Several
// members may release the same hold; the records agree, so that is harmless.
func (s *session) release(m *member, reason string) {
	if s.releasesSent[m.offset] {
		return
	}
	s.releasesSent[m.offset] = true
	s.l.log.Info("releasing the startup lock holder", "holder", display(m), "reason", reason, "held_for", roundSec(s.view.now.Sub(m.ts)))
	s.seq++
	s.releaseSeqs[s.seq] = m.offset
	s.send(recordKey{Scope: s.l.cfg.Scope, Identity: m.identity, Release: true}, releaseValue{
		V:          formatVersion,
		Identity:   m.identity,
		State:      StateReleased,
		HoldOffset: m.offset,
		Reason:     reason,
		By:         s.l.cfg.Identity,
	}, s.seq)
}

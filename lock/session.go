package lock

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/connect-init/connect-init/kafka/notyet"
)

// session is one run of Acquire: it replays the log, writes its request,
// heartbeats, and claims a permit when entitled. It talks to the topic only
// through a recordLog.
type session struct {
	l    *Lock
	view *view
	log  recordLog
	inc  string
	host string

	caughtUp bool  // the log has been read up to target
	target   int64 // end offset when Acquire started
	// predecessor is the incarnation that owned our key before us (a
	// previous start of this member); its late records are tolerated.
	predecessor string

	seq        uint64 // last sequence number written
	lastMember uint64 // sequence of the last write under our member key
	requestSeq uint64 // sequence of the request in flight, until seen
	claimSeq   uint64 // sequence of the claim in flight, 0 if none
	firstSeen  bool   // our request has been read back
	ticket     int64
	firstTS    time.Time // broker time of our request

	releasesSent map[int64]bool   // hold offsets we released
	releaseSeqs  map[uint64]int64 // seq of a release write in flight -> its hold offset
	deadLogged   map[int64]bool   // dead waiters' record offsets logged
	checking     bool             // a readiness round is running
	firstChecked bool             // the readiness round at our request's read-back ran
	readyCh      chan []readyResult

	lastLog    time.Time
	lastLogKey string

	// unavailableSince is the clock time of the first write that failed
	// with none of our records read back since (zero: the topic works);
	// see Config.UnavailableAfter.
	unavailableSince time.Time
	lastWriteErr     error
	// rewrite asks the next poll to write our record again: a write that
	// failed in a failover is retried within a poll of it, not a whole
	// heartbeat period later.
	rewrite bool
}

func newSession(l *Lock, log recordLog, inc string, b logBounds) *session {
	s := &session{
		l:            l,
		view:         newView(l.cfg.Scope),
		log:          log,
		inc:          inc,
		ticket:       -1,
		caughtUp:     b.end <= b.start,
		target:       b.end,
		releasesSent: map[int64]bool{},
		releaseSeqs:  map[uint64]int64{},
		deadLogged:   map[int64]bool{},
		readyCh:      make(chan []readyResult, 1),
	}
	s.host, _ = os.Hostname()
	return s
}

// loop runs the session until this member holds a permit (nil), ctx ends
// (ctx.Err()) or the session cannot go on. It never cleans up: end does.
func (s *session) loop(ctx context.Context) error {
	cfg := s.l.cfg
	clk := cfg.Clock
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()

	if s.caughtUp {
		s.request()
	}
	heartbeat := clk.After(cfg.Lease / 3)
	poll := clk.After(cfg.PollInterval)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case rec, ok := <-s.log.Records():
			if !ok {
				return fmt.Errorf("lock: consumer of %q stopped", cfg.Topic)
			}
			done, err := s.handle(rec)
			if err != nil || done {
				return err
			}
			if s.firstSeen && !s.firstChecked {
				// Our request is read back: ask about the holders now,
				// not a poll interval later. Alone behind a stale hold
				// (a restart into a running group), this one check is
				// all the wait there is.
				s.firstChecked = true
				s.checkReady(rctx)
			}
		case err := <-s.log.ReadErrors():
			if !notyet.Is(err) {
				return s.l.refused("reading it", err)
			}
			s.l.log.Warn("reading the startup lock topic failed; retrying", "error", err)
		case f := <-s.log.Failures():
			if !notyet.Is(f.err) {
				return s.l.refused("writing to it", f.err)
			}
			s.writeFailed(f)
		case <-heartbeat:
			heartbeat = clk.After(cfg.Lease / 3)
			s.heartbeat()
		case <-poll:
			poll = clk.After(cfg.PollInterval)
			if err := s.checkUnavailable(); err != nil {
				return err
			}
			if s.rewrite {
				s.rewrite = false
				s.heartbeat()
			}
			if s.firstSeen {
				s.evaluate()
				s.checkReady(rctx)
				s.progress()
			}
		case res := <-s.readyCh:
			s.checking = false
			s.readyResults(res)
		}
	}
}

// handle applies one record; done means this member now holds a permit.
func (s *session) handle(rec rawRecord) (done bool, err error) {
	if !s.caughtUp {
		s.replay(rec)
		return false, nil
	}
	if !s.isOwnMemberRecord(rec) {
		s.applyLogged(rec)
		s.evaluate()
		return false, nil
	}
	if rec.Value == nil {
		s.ownEntryDeleted(rec)
		return false, nil
	}
	var v memberValue
	if err := json.Unmarshal(rec.Value, &v); err != nil {
		s.applyLogged(rec)
		return false, nil
	}
	if v.Incarnation != s.inc {
		return false, s.otherIncarnation(rec, v)
	}
	s.unavailableSince = time.Time{} // one of our writes landed
	if !s.firstSeen {
		s.requestSeen(rec, v)
	}
	if v.State == StateHolding && v.Seq == s.claimSeq {
		return s.claimSeen(rec, v), nil
	}
	s.applyLogged(rec)
	s.evaluate()
	return false, nil
}

// replay applies a record of the log as it was when Acquire started, and
// writes our request once the last of them is read.
func (s *session) replay(rec rawRecord) {
	s.applyLogged(rec)
	if rec.Offset+1 >= s.target {
		s.caughtUp = true
		s.request()
	}
}

// isOwnMemberRecord reports whether rec is under our own member key (not a
// release key, not another member's, not another scope's).
func (s *session) isOwnMemberRecord(rec rawRecord) bool {
	k, kerr := decodeKey(rec.Key)
	return kerr == nil && k.Scope == s.l.cfg.Scope && k.Identity == s.l.cfg.Identity && !k.Release
}

// ownEntryDeleted handles a tombstone under our key: someone deleted our
// entry (an operator, or a process with our identity withdrawing), so it
// is put back, keeping the ticket.
func (s *session) ownEntryDeleted(rec rawRecord) {
	s.applyLogged(rec)
	if s.firstSeen && s.claimSeq == 0 {
		s.l.log.Warn("startup lock entry was deleted by someone else; re-requesting", "identity", s.l.cfg.Identity)
		s.heartbeat()
	}
}

// otherIncarnation handles a record under our key written by another
// process start: a late write of the start before ours is tolerated (ours
// wins); any other is ErrSuperseded.
func (s *session) otherIncarnation(rec rawRecord, v memberValue) error {
	s.applyLogged(rec)
	if !s.firstSeen || v.Incarnation == s.predecessor {
		// A late write of the start before ours: ours wins.
		s.predecessor = v.Incarnation
		if s.firstSeen && s.claimSeq == 0 {
			s.heartbeat()
		}
		return nil
	}
	return fmt.Errorf("%w (identity %q, scope %q, other incarnation %s)", ErrSuperseded, s.l.cfg.Identity, s.l.cfg.Scope, v.Incarnation)
}

// requestSeen notes that our request has been read back: its ticket (its
// own offset in a first request) and its broker time.
func (s *session) requestSeen(rec rawRecord, v memberValue) {
	s.firstSeen = true
	s.requestSeq = 0
	s.ticket = v.Ticket
	if s.ticket < 0 {
		s.ticket = rec.Offset
	}
	s.firstTS = rec.Timestamp
}

// claimSeen judges our claim read back; true means it holds. The claim is
// good only if, just before it and at its own timestamp, we were entitled
// and our entry was ours; every member that reads the log reaches the same
// verdict. The verdict is reached before the claim is applied.
func (s *session) claimSeen(rec rawRecord, v memberValue) bool {
	now := s.view.now
	if rec.Timestamp.After(now) {
		now = rec.Timestamp
	}
	valid := skipClaimValidation || v.Seq == s.lastMember && s.view.entitled(s.l.cfg.Identity, s.inc, s.l.cfg.Permits, now)
	s.applyLogged(rec)
	s.claimSeq = 0
	if valid {
		s.acquired(rec.Timestamp)
		return true
	}
	s.l.log.Info("startup lock claim lost a race; still waiting", "ticket", s.ticket)
	s.heartbeat()
	return false
}

func (s *session) applyLogged(rec rawRecord) {
	if err := s.view.apply(rec); err != nil {
		s.l.log.Debug("ignoring a record on the startup lock topic", "offset", rec.Offset, "error", err)
	}
}

// checkUnavailable returns ErrUnavailable once the topic has refused our
// writes for Config.UnavailableAfter. The time counts from a failure, not
// from our last record read back, so a process that was merely stopped
// (SIGSTOP, a frozen VM) and resumes does not mistake its own pause for an
// outage.
func (s *session) checkUnavailable() error {
	ua := s.l.cfg.UnavailableAfter
	if ua <= 0 || s.unavailableSince.IsZero() || s.l.cfg.Clock.Now().Sub(s.unavailableSince) < ua {
		return nil
	}
	return s.l.unavailable(ua, s.lastWriteErr)
}

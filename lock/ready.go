package lock

import "context"

type readyResult struct {
	identity   string
	holdOffset int64
	ready      bool
}

// checkReady asks Ready about every current holder, in the background so
// that a slow check never delays heartbeats. Only the waiters next in line
// (the first Permits live ones) ask, so a long queue does not flood the
// holder; the others learn of the release from the log.
func (s *session) checkReady(ctx context.Context) {
	if s.l.cfg.Ready == nil || s.checking {
		return
	}
	now := s.view.now
	q := s.view.queue(now)
	next := false
	for i, w := range q.waiters {
		if i < s.l.cfg.Permits && w.identity == s.l.cfg.Identity {
			next = true
		}
	}
	if !next {
		return
	}
	var hs []Holder
	var offs []int64
	for _, m := range q.holders {
		if s.releasesSent[m.offset] {
			continue
		}
		hs = append(hs, Holder{Identity: m.identity, URL: m.url, Ticket: m.ticket, Since: m.ts, HeldFor: now.Sub(m.ts), Offset: m.offset})
		offs = append(offs, m.offset)
	}
	if len(hs) == 0 {
		return
	}
	s.checking = true
	ready, timeout, log := s.l.cfg.Ready, s.l.cfg.ReadyTimeout, s.l.log
	go func() {
		res := make([]readyResult, len(hs))
		for i, h := range hs {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			ok, err := ready(cctx, h)
			cancel()
			if err != nil {
				log.Debug("startup lock holder is not ready", "holder", h.Identity, "error", err)
			}
			res[i] = readyResult{identity: h.Identity, holdOffset: offs[i], ready: ok && err == nil}
		}
		s.readyCh <- res // buffered (1), and only one round runs at a time
	}()
}

// readyResults releases the holders found ready whose hold is still the
// one asked about.
func (s *session) readyResults(res []readyResult) {
	for _, r := range res {
		if !r.ready {
			continue
		}
		m, ok := s.view.members[r.identity]
		if !ok || m.offset != r.holdOffset || s.view.stateOf(m, s.view.now) != StateHolding {
			continue // its hold changed meanwhile
		}
		s.release(m, "ready")
	}
	s.evaluate()
}

package lock

import (
	"fmt"
	"time"
)

// progress logs where we stand, on change or every LogInterval.
func (s *session) progress() {
	now := s.view.now
	q := s.view.queue(now)
	pos, of := 0, len(q.holders)+len(q.waiters)
	for i, w := range q.waiters {
		if w.identity == s.l.cfg.Identity {
			pos = len(q.holders) + i + 1
		}
	}
	attrs := []any{"position", pos, "of", of}
	key := fmt.Sprint(pos, of)
	if len(q.holders) > 0 {
		h := q.holders[0]
		attrs = append(attrs, "holder", display(h), "held_for", roundSec(now.Sub(h.ts)), "lease", h.holdLease)
		if len(q.holders) > 1 {
			attrs = append(attrs, "holders", len(q.holders))
		}
		key += h.identity
	} else if pos > 1 {
		attrs = append(attrs, "next", display(q.waiters[0]))
		key += q.waiters[0].identity
	}
	clk := s.l.cfg.Clock.Now()
	if key == s.lastLogKey && clk.Sub(s.lastLog) < s.l.cfg.LogInterval {
		return
	}
	s.lastLogKey, s.lastLog = key, clk
	s.l.log.Info("waiting for startup lock", attrs...)
}

func (s *session) acquired(at time.Time) {
	s.l.log.Info("acquired startup lock", "waited", roundSec(at.Sub(s.firstTS)), "ticket", s.ticket, "permits", s.l.cfg.Permits)
}

func display(m *member) string {
	if m.url != "" {
		return m.url
	}
	return m.identity
}

func roundSec(d time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	return d.Round(time.Second)
}

package lock

import (
	"context"
	"errors"
)

// end is the one path by which a session stops, whatever stopped it:
//
//   - cause nil (a permit is ours): flush what is in flight and return nil;
//   - ctx ended (cause is ctx's error): withdraw the request with a
//     tombstone, so that nobody waits for us to go silent, then flush,
//     bounded by WithdrawTimeout; a failed withdrawal is only logged, since
//     the entry is skipped once its lease runs out;
//   - any other cause: flush and return it.
//
// A Lock with crashOnCancel abandons the log instead of withdrawing, as a
// killed process would.
func (s *session) end(ctx context.Context, cause error) error {
	cancelled := cause != nil && ctx.Err() != nil && errors.Is(cause, ctx.Err())
	if cancelled && s.l.crashOnCancel {
		s.log.Abandon()
		return cause
	}
	withdrawn := false
	if cancelled && s.caughtUp {
		s.seq++
		s.log.Append(recordKey{Scope: s.l.cfg.Scope, Identity: s.l.cfg.Identity}.encode(), nil, s.l.cfg.Clock.Now(), s.seq)
		withdrawn = true
	}
	err := s.log.Close(s.l.cfg.WithdrawTimeout)
	switch {
	case cancelled && err != nil:
		s.l.log.Warn("could not withdraw from the startup lock queue; the entry will be skipped once its lease runs out",
			"error", err, "lease", s.l.cfg.Lease)
	case withdrawn:
		s.l.log.Info("withdrew from the startup lock queue")
	}
	return cause
}

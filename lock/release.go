package lock

import (
	"context"
	"encoding/json"
	"fmt"
)

// Release gives the permit back at once, for a holder that does not exec
// and so can say itself when it is done (connect-init apply holds a lease
// of its own scope only while it writes and waits). It withdraws the
// member's entry, as a cancelled Acquire does: a tombstone on its member
// key, after which the view no longer counts it as a holder and the next
// waiter is entitled. Without Release such a holder would keep its permit
// until a waiter saw it ready or its hold lease ran out. Call it only
// after Acquire returned nil; it is bounded by WithdrawTimeout, and when
// it fails the hold lease still ends the hold.
func (l *Lock) Release(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	log, _, err := l.open()
	if err != nil {
		return fmt.Errorf("lock: releasing %s: %w", l.cfg.Identity, err)
	}
	log.Append(recordKey{Scope: l.cfg.Scope, Identity: l.cfg.Identity}.encode(), nil, l.cfg.Clock.Now(), 1)
	if err := log.Close(l.cfg.WithdrawTimeout); err != nil {
		return fmt.Errorf("lock: releasing %s: %w", l.cfg.Identity, err)
	}
	select {
	case f := <-log.Failures():
		return fmt.Errorf("lock: releasing %s: %w", l.cfg.Identity, f.err)
	default:
	}
	l.log.Info("released the lock", "identity", l.cfg.Identity)
	return nil
}

// ReleaseHolder writes a release ("ready") for h's hold, for a waiter that
// saw h ready but leaves the queue without claiming a permit (connect-init's
// CONNECT_INIT_LOCK_JOINS=first: the group opened). Without it that hold
// would last its hold lease, and a member queueing within it (a redeploy
// whose workers come back under new identities, new task addresses in
// Swarm) would wait for a holder that is gone. The release names the
// hold's offset, so it can never end a later hold, and a release already
// written by another waiter makes this one a no-op for every reader.
// Bounded by WithdrawTimeout; on failure the hold lease still ends the hold.
func (l *Lock) ReleaseHolder(ctx context.Context, h Holder) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	log, _, err := l.open()
	if err != nil {
		return fmt.Errorf("lock: releasing holder %s: %w", h.Identity, err)
	}
	val, err := json.Marshal(releaseValue{V: formatVersion, Identity: h.Identity, State: StateReleased, HoldOffset: h.Offset,
		Reason: "ready", By: l.cfg.Identity})
	if err != nil {
		return fmt.Errorf("lock: releasing holder %s: %w", h.Identity, err)
	}
	log.Append(recordKey{Scope: l.cfg.Scope, Identity: h.Identity, Release: true}.encode(), val, l.cfg.Clock.Now(), 1)
	if err := log.Close(l.cfg.WithdrawTimeout); err != nil {
		return fmt.Errorf("lock: releasing holder %s: %w", h.Identity, err)
	}
	select {
	case f := <-log.Failures():
		return fmt.Errorf("lock: releasing holder %s: %w", h.Identity, f.err)
	default:
	}
	l.log.Info("releasing the startup lock holder", "holder", h.Identity, "reason", "ready", "held_for", roundSec(h.HeldFor))
	return nil
}

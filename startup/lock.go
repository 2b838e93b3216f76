package startup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/lock"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
)

// TakeLock is the lock gate: it waits for this worker's turn to join
// the group.
//
// The scope is the worker group.id and the identity the worker's advertised
// REST URL, computed as Connect computes it, so a restarted worker replaces
// its own entry. Holders are released by the waiters when
// gate.WorkerReadiness says they joined, or when CONNECT_INIT_LOCK_LEASE
// runs out.
//
// The wait is bounded by ctx, which the caller does not give the gates'
// timeout: the queue's progress is guaranteed by the hold lease (a worker
// at position n waits at most about n x lease), and a healthy but slow
// cluster of many workers must not time its last workers out.
//
// With CONNECT_INIT_LOCK_JOINS=first (the default) only the first join
// of a group waits: a worker does not queue, or stops waiting (its request
// withdrawn), as soon as the group is open (lockopen.go). With each, every
// worker waits for the one before it to be ready.
//
// It returns the REST URLs of the queue's members that were released as
// ready, for the peer check (none when the group was open: the peers step
// reads the group's members itself). clk paces the lock (heartbeats,
// polls, logs).
func TakeLock(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, log *slog.Logger, clk clock.Clock) ([]string, error) {
	queued, _, err := TakeLockProfiled(ctx, cfg, clients, log, clk, nil, LockSeen{})
	return queued, err
}

// LockSeen is what the process taking the lock already read of the group:
// run's group step's judged report and the coordinator its brokers step
// found. The lock's first look at whether the group is open starts from
// them instead of reading the group again (issue 49). Zero in `lock
// acquire`, the in-worker child, which reads them itself.
type LockSeen struct {
	Group       *gate.GroupReport
	Coordinator *gate.FoundCoordinator
}

// TakeLockProfiled is TakeLock that also records, in p (nil: nowhere), the
// step split into the wait in the queue (the topic check included) and
// the handoff: from the moment the last holder before us was seen ready
// to our claim (lockSplit); or, when the group was open, lock_open: the
// time until it was seen open. waited is false when the first look found
// the group open, before any wait: what was judged of the group before the
// lock step then still stands (run's peers step does not read it again).
func TakeLockProfiled(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, log *slog.Logger, clk clock.Clock, p *Profile, seen LockSeen) (queued []string, waited bool, err error) {
	start := clock.Or(clk).Now()
	var mu sync.Mutex // Ready may be called beside Acquire's own goroutine
	var lastReady time.Time
	opened := false
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		if opened {
			p.Set(ProfileLockOpen, clock.Or(clk).Now().Sub(start))
			return
		}
		lockSplit(p, start, lastReady, clock.Or(clk).Now())
	}()
	s := cfg.Settings
	url := cfg.AdvertisedURL // derived and checked by the settings gate
	var opener *groupOpenWatch
	if s.LockJoinsPolicy() == settings.LockJoinsFirst {
		gg := gate.NewGroupGate(cfg, clients, log, clk)
		gg.UseCoordinator(seen.Coordinator)
		o := gate.NewGroupOpener(gg)
		o.Seed(seen.Group)
		opener = newGroupOpenWatch(o, log, clk)
		// A restart into a running group, or a worker that comes after
		// the first: no queue, no lease, no readiness wait.
		if opener.look(ctx) {
			opened = true
			return nil, false, nil
		}
	}
	// Creating or checking the topic looks again on answers that waiting
	// can change (a broker just killed), within CONNECT_INIT_TIMEOUT: the
	// queue's wait is unbounded, this is not.
	ectx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	if err := lock.EnsureTopic(ectx, clients.Admin, cfg.LockTopic, cfg.LockReplicationFactor); err != nil {
		fix := "point CONNECT_INIT_LOCK_TOPIC at a topic that is free for connect-init, or set CONNECT_INIT_LOCK=false"
		if isAuthorization(err) {
			fix = lockRefusalFix(clients.AdminConfig, cfg.BootstrapServers, cfg.LockTopic, err)
		}
		return nil, true, &gate.GateError{Gate: step.Lock, Err: err, Fix: fix}
	}
	readiness := gate.NewWorkerReadiness(clients.Admin, cfg.GroupID, cfg.RESTClientTLS, cfg.Settings.RESTAuth())
	l, err := lock.New(lockConfig(cfg, clients, log, clk, func(ctx context.Context, h lock.Holder) (bool, error) {
		ok, why, err := readiness.Ready(ctx, h.URL)
		if ok && opener != nil && opener.holderReady(ctx) {
			return false, nil // the group is open: Acquire is cancelled
		}
		if ok {
			mu.Lock()
			lastReady = clock.Or(clk).Now()
			mu.Unlock()
			log.Info("startup lock holder is ready", "holder", h.URL, "why", why, "held_for", h.HeldFor.Round(1e9).String())
		}
		return ok, err
	}))
	if err != nil {
		return nil, true, &settings.ConfigError{Setting: "CONNECT_INIT_LOCK_*", Problem: err.Error()}
	}
	open, err := acquireUntilOpen(ctx, l, opener)
	if open {
		opened = true
		// The holder seen ready is released as a claim would have
		// released it; left held, it would keep its permit for its hold
		// lease, and a worker queueing within it (a redeploy whose
		// workers come back under new addresses) would wait for it.
		// Best effort: the hold lease ends it anyway.
		releaseReadyHolders(ctx, l, url, readiness, log)
		return nil, true, nil
	}
	if err != nil {
		return nil, true, acquireError(cfg, clients, log, err)
	}
	// Only members the lock let through and that got ready are expected to
	// answer: waiters and holders still starting have no REST server yet.
	var ready []string
	if snap, err := l.Queue(ctx); err == nil {
		ready = releasedAsReady(snap.Entries, url)
	}
	return ready, true, nil
}

// lockConfig is the startup lock of cfg's group, with ready as the
// readiness of a holder.
func lockConfig(cfg *settings.Config, clients *kafka.Clients, log *slog.Logger, clk clock.Clock, ready func(context.Context, lock.Holder) (bool, error)) lock.Config {
	s := cfg.Settings
	waiterLease := lock.DefaultLease
	if s.LockLease < waiterLease {
		waiterLease = max(s.LockLease, lock.MinLease)
	}
	return lock.Config{
		Brokers:  cfg.BootstrapServers,
		Sarama:   clients.MemberConfig,
		Topic:    cfg.LockTopic,
		Scope:    cfg.GroupID,
		Identity: cfg.AdvertisedURL,
		URL:      cfg.AdvertisedURL,
		Permits:  s.LockPermits,
		Lease:    waiterLease,
		// Waiters look at the holder's readiness four times a second: a
		// handoff then costs about 250 ms (1 s with the package default,
		// which made 32 ready workers take 24 s to pass the lock).
		PollInterval:     250 * time.Millisecond,
		HoldLease:        max(s.LockLease, waiterLease),
		UnavailableAfter: s.LockUnavailableAfter,
		Logger:           log,
		Clock:            clock.Or(clk),
		Ready:            ready,
	}
}

// acquireError is what a failed Acquire means for the start: nil when the
// lock topic stayed unwritable (the start goes on without the lock, with
// a warning), a refusal with its fix, or the failure.
func acquireError(cfg *settings.Config, clients *kafka.Clients, log *slog.Logger, err error) error {
	s := cfg.Settings
	switch {
	case errors.Is(err, lock.ErrUnavailable):
		// The policy of docs/startup-lock.md: a partial Kafka outage
		// (one internal topic unwritable) must not become a Connect
		// outage; a start without the lock costs at worst one more
		// rebalance, which the lock only avoids.
		log.Warn("STARTING WITHOUT THE STARTUP LOCK: the lock topic could not be written for CONNECT_INIT_LOCK_UNAVAILABLE_AFTER; check its partition's leader and in-sync replicas",
			"lock_topic", cfg.LockTopic, "partition", 0, "after", s.LockUnavailableAfter.String(), "error", err)
		return nil
	case errors.Is(err, lock.ErrRefused):
		// Not an outage: no wait changes it, and it is no reason to start
		// without the lock (lockrefusal.go).
		return &gate.GateError{Gate: step.Lock, Err: fmt.Errorf("startup lock on topic %q: %w", s.LockTopic, err),
			Fix: lockRefusalFix(clients.MemberConfig, cfg.BootstrapServers, cfg.LockTopic, err)}
	}
	return &gate.GateError{Gate: step.Lock, Err: fmt.Errorf("startup lock on topic %q: %w", s.LockTopic, err)}
}

// releaseReadyHolders releases, as a claim would have, every holder of the
// scope that answers ready, for the last waiter that leaves the queue
// through the open group. Left held, the first worker of a bring-up would keep its
// permit for its hold lease, and a worker queueing within it (a redeploy
// whose workers come back under new task addresses, so new identities)
// would wait for a holder that is gone. Best effort, bounded: the hold
// lease ends the hold anyway, and several waiters releasing the same hold
// write the same no-op for every reader.
//
// Only when no other live waiter is left: a release makes the next waiter
// entitled, and one that has not yet seen the group open would then claim
// the permit and be the hold left behind. The last to leave releases; when
// two leave at the same instant and each still sees the other, neither
// does, and the hold lease ends the hold as it did before.
func releaseReadyHolders(ctx context.Context, l *lock.Lock, own string, readiness *gate.WorkerReadiness, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, groupOpenLookTimeout)
	defer cancel()
	snap, err := l.Queue(ctx)
	if err != nil {
		log.Debug("reading the startup lock queue to release its ready holders failed; their hold leases end them", "error", err)
		return
	}
	for _, e := range snap.Entries {
		if e.State == lock.StateWaiting && e.Identity != own {
			return
		}
	}
	for _, e := range snap.Entries {
		if e.State != lock.StateHolding {
			continue
		}
		if ok, _, err := readiness.Ready(ctx, e.URL); err != nil || !ok {
			continue
		}
		if err := l.ReleaseHolder(ctx, lock.Holder{Identity: e.Identity, URL: e.URL, Offset: e.Offset, HeldFor: e.HeldFor}); err != nil {
			log.Debug("releasing a ready startup lock holder failed; its hold lease ends it", "holder", e.Identity, "error", err)
		}
	}
}

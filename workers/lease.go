package workers

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/lock"
	"github.com/connect-init/connect-init/settings"
)

// The apply lease: applies of one Connect cluster (a rolling deploy whose
// every worker carries CONNECT_INIT_CONNECTORS_DIR, or an apply by hand
// while a worker starts) take turns, so that each change is written once.
// It is the startup lock's protocol (package lock) on connect-init's lock
// topic, in a scope of its own per worker group, one permit: a waiter
// heartbeats, a holder releases when its apply is over (lock.Release),
// and a holder that dies passes the lease on when its hold lease, which
// it sets to its writes' and its wait's length, runs out.

// leaseWaiter is the waiter lease: a waiter silent this long is skipped.
const leaseWaiter = 10 * time.Second

// Scope is the apply lease's scope for a worker group: apart from the
// startup lock's queue (scope group.id), so that an apply never waits for
// a starting worker nor a worker for an apply.
func Scope(groupID string) string { return "apply:" + groupID }

// Identity names this apply in the lease's queue. The child of run
// (local) is named by its worker's advertised URL, so that the apply of a
// restarted worker replaces its dead predecessor's entry at once (the
// lock's restart rule) instead of waiting out its hold lease; an apply by
// hand by its host and process id, unique among the applies running.
func Identity(local bool, advertised string) string {
	if local {
		return "apply " + advertised
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("apply %s pid %d", host, os.Getpid())
}

// Lease takes the apply lease of one group.
type Lease struct {
	Config  *settings.Config
	Clients *kafka.Clients
	Log     *slog.Logger
	Clock   clock.Clock
	// Identity names this apply (Identity); URL is shown to operators:
	// the worker it talks to.
	Identity, URL string
}

// Take waits for the lease and returns its release; hold is how long this
// apply may keep it. The wait is bounded by ctx only: the holders' hold
// leases guarantee progress. When the lease cannot be used at all (the
// lock topic cannot be created or read, no permission), it logs why and
// returns without it: concurrent applies may then write a change twice,
// which costs a restart, not the desired state.
func (l *Lease) Take(ctx context.Context, hold time.Duration) (release func(), err error) {
	log := slog.New(renamed{l.Log.Handler()}).With("lease", Scope(l.Config.GroupID))
	without := func(err error) (func(), error) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		log.Warn("applying without the apply lease: concurrent applies may write a change twice", "topic", l.Config.LockTopic, "error", err.Error(),
			"fix", "let connect-init create and read CONNECT_INIT_LOCK_TOPIC, or create it as the startup lock needs it")
		return func() {}, nil
	}
	if err := lock.EnsureTopic(ctx, l.Clients.Admin, l.Config.LockTopic, l.Config.LockReplicationFactor); err != nil {
		return without(err)
	}
	lk, err := lock.New(lock.Config{
		Brokers: l.Config.BootstrapServers, Sarama: l.Clients.MemberConfig, Topic: l.Config.LockTopic,
		Scope: Scope(l.Config.GroupID), Identity: l.Identity, URL: l.URL,
		Lease: leaseWaiter, HoldLease: max(hold, leaseWaiter), PollInterval: 250 * time.Millisecond,
		Logger: log, Clock: l.Clock,
	})
	if err != nil {
		return without(err)
	}
	if err := lk.Acquire(ctx); err != nil {
		return without(err)
	}
	return func() {
		// The apply's own context may have ended (a signal): the release
		// is still owed, bounded by the lock's withdraw timeout.
		if err := lk.Release(context.WithoutCancel(ctx)); err != nil {
			log.Warn("could not release the apply lease; it passes on when its hold lease runs out", "hold_lease", hold.String(), "error", err.Error())
		}
	}, nil
}

// renamed is the lock's log with its words for the startup lock replaced:
// the package names its lock so in every line, and here it is the apply
// lease.
type renamed struct{ slog.Handler }

func (h renamed) Handle(ctx context.Context, r slog.Record) error {
	r2 := slog.NewRecord(r.Time, r.Level, strings.ReplaceAll(r.Message, "startup lock", "apply lease"), r.PC)
	r.Attrs(func(a slog.Attr) bool { r2.AddAttrs(a); return true })
	return h.Handler.Handle(ctx, r2)
}

func (h renamed) WithAttrs(as []slog.Attr) slog.Handler { return renamed{h.Handler.WithAttrs(as)} }
func (h renamed) WithGroup(n string) slog.Handler       { return renamed{h.Handler.WithGroup(n)} }

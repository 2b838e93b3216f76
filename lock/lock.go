package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka/notyet"
)

// Defaults for Config fields left zero.
const (
	DefaultPermits         = 1
	DefaultLease           = 30 * time.Second
	DefaultHoldLease       = 3 * time.Minute
	DefaultPollInterval    = 1 * time.Second
	DefaultLogInterval     = 5 * time.Second
	DefaultReadyTimeout    = 10 * time.Second
	DefaultWithdrawTimeout = 5 * time.Second

	// MinLease is the shortest waiter lease New accepts. A heartbeat is a
	// replicated write (acks=all); below a second a routine leader
	// election would make every waiter look dead.
	MinLease = time.Second
)

// ErrSuperseded is returned by Acquire when another process with the same
// scope and identity joined the queue after this one: the newer process
// owns the entry, and two processes must never share an identity.
const ErrSuperseded = constError("lock: another process with the same identity joined the queue after this one")

// ErrUnavailable is returned by Acquire, with Config.UnavailableAfter set,
// when the lock topic could not be written (or opened) for that long: its
// partition has no leader, or fewer in-sync replicas than
// min.insync.replicas. The caller decides what a start without the lock
// means (connect-init starts the worker with a warning).
const ErrUnavailable = constError("lock: the startup lock topic cannot be written")

// ErrRefused is returned (wrapped, naming the topic, what was refused and
// the cluster's answer) when the cluster answers the lock's reads or writes
// with an answer that no wait changes: an authorization failure above all
// (the principal lacks WRITE or READ on the lock topic), but also any other
// final code (notyet: an invalid request, a policy). Unlike ErrUnavailable
// it is not waited out, and it is no reason to start without the lock: the
// operator must grant the ACL or turn the lock off.
const ErrRefused = constError("lock: the cluster refused the startup lock topic")

// ErrAcquired is returned by a second call to Acquire on the same Lock: a
// Lock stands for one start of one member.
const ErrAcquired = constError("lock: Acquire was already called on this Lock")

// ReadyFunc reports whether a holder has finished starting, so that its
// permit can pass to the next waiter. Waiters call it, never the holder
// itself (the holder has exec'd by then). An error counts as "not ready" and
// is logged at debug level; the hold lease bounds how long an unready or
// unreachable holder can keep its permit.
type ReadyFunc func(ctx context.Context, h Holder) (bool, error)

// Holder describes a member that holds a permit, as passed to a ReadyFunc.
type Holder struct {
	// Identity is the member's identity (connect-init: advertised REST URL).
	Identity string
	// URL is the URL the member published, possibly empty.
	URL string
	// Ticket is the offset of the member's first request.
	Ticket int64
	// Since is the broker time at which the hold began.
	Since time.Time
	// HeldFor is how long it has held, in broker time.
	HeldFor time.Duration
	// Offset is the offset of the holding record: the hold a release
	// names (ReleaseHolder).
	Offset int64
}

// Config configures a Lock. Zero durations and Permits take the defaults
// above; New rejects combinations that would make the lock unsafe.
type Config struct {
	// Brokers are the bootstrap servers.
	Brokers []string
	// Sarama is the base client configuration (TLS, SASL, client id,
	// timeouts). It is copied; the lock overrides what its protocol needs:
	// Version=MaxVersion, idempotent producer, acks=all,
	// Net.MaxOpenRequests=1, no topic auto-creation.
	Sarama *sarama.Config
	// Topic is the single-partition, compacted, LogAppendTime lock topic
	// (see EnsureTopic).
	Topic string
	// Scope names the lock; members of different scopes share the topic
	// but not the queue (connect-init: the worker group.id).
	Scope string
	// Identity names this member within the scope and must be unique among
	// running members; a restarted member reuses it to replace its own
	// entry (connect-init: the advertised REST URL).
	Identity string
	// URL is shown to operators and passed to ReadyFunc; optional.
	URL string
	// Permits is how many members may hold the lock at once.
	Permits int
	// Lease is the waiter lease: a waiter heartbeats every Lease/3 and is
	// skipped once it has been silent for Lease (broker time).
	Lease time.Duration
	// HoldLease bounds a hold: once a holder has held for HoldLease (broker
	// time) without being seen ready, its permit passes on.
	HoldLease time.Duration
	// PollInterval is how often a waiter re-evaluates the queue and asks
	// Ready about the holders.
	PollInterval time.Duration
	// LogInterval is the longest gap between two "waiting" log lines.
	LogInterval time.Duration
	// ReadyTimeout bounds one call of Ready.
	ReadyTimeout time.Duration
	// WithdrawTimeout bounds the best-effort withdrawal when Acquire's
	// context ends.
	WithdrawTimeout time.Duration
	// UnavailableAfter, when positive, bounds how long Acquire keeps
	// waiting while the lock topic cannot be written: from the first failed
	// write (or open) with none of our records read back since, Acquire
	// returns ErrUnavailable after this long. Zero waits without bound.
	UnavailableAfter time.Duration
	// Ready is the readiness check; nil means holders are released only by
	// their hold lease.
	Ready ReadyFunc
	// Logger receives the progress lines; nil discards them.
	Logger *slog.Logger
	// Clock paces heartbeats, polls and logs; nil means clock.System.
	Clock clock.Clock
}

// Lock is one member's handle on the startup lock. Create it with New; it
// holds no connections until Acquire or Queue is called.
type Lock struct {
	cfg    Config
	sarama *sarama.Config
	log    *slog.Logger
	used   atomic.Bool

	// open opens the lock topic for a session; openSaramaLog unless a
	// protocol test gives an in-memory log.
	open func() (recordLog, logBounds, error)
	// crashOnCancel makes Acquire return on cancellation without
	// withdrawing, as a killed process would (tests only).
	crashOnCancel bool
}

// New validates cfg, fills in defaults and returns a Lock. It rejects
// missing names and timings under which a live member could be judged dead
// or a holder's permit could pass on before waiters can notice.
func New(cfg Config) (*Lock, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("lock: no brokers configured")
	}
	if cfg.Topic == "" || cfg.Scope == "" || cfg.Identity == "" {
		return nil, fmt.Errorf("lock: topic (%q), scope (%q) and identity (%q) must all be set", cfg.Topic, cfg.Scope, cfg.Identity)
	}
	if cfg.Permits == 0 {
		cfg.Permits = DefaultPermits
	}
	if cfg.Permits < 1 {
		return nil, fmt.Errorf("lock: permits must be at least 1, got %d", cfg.Permits)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&cfg.Lease, DefaultLease)
	def(&cfg.HoldLease, DefaultHoldLease)
	def(&cfg.PollInterval, DefaultPollInterval)
	def(&cfg.LogInterval, DefaultLogInterval)
	def(&cfg.ReadyTimeout, DefaultReadyTimeout)
	def(&cfg.WithdrawTimeout, DefaultWithdrawTimeout)
	switch {
	case cfg.Lease < MinLease:
		return nil, fmt.Errorf("lock: lease %v is shorter than the minimum %v", cfg.Lease, MinLease)
	case cfg.PollInterval < 0 || cfg.LogInterval < 0 || cfg.ReadyTimeout < 0 || cfg.WithdrawTimeout < 0:
		return nil, errors.New("lock: durations must not be negative")
	case cfg.PollInterval > cfg.Lease/3:
		return nil, fmt.Errorf("lock: poll interval %v must be at most a third of the lease %v, or dead waiters and expired holders are noticed too late", cfg.PollInterval, cfg.Lease)
	case cfg.UnavailableAfter < 0:
		return nil, fmt.Errorf("lock: unavailable-after %v must not be negative", cfg.UnavailableAfter)
	case cfg.HoldLease < cfg.Lease:
		return nil, fmt.Errorf("lock: hold lease %v must not be shorter than the waiter lease %v", cfg.HoldLease, cfg.Lease)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sc := producerConfig(cfg.Sarama)
	// A heartbeat's delivery must fit in its slot: a broker that takes a
	// whole lease to acknowledge would let the waiter look dead.
	if sc.Producer.Timeout > cfg.Lease/3 {
		sc.Producer.Timeout = cfg.Lease / 3
	}
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("lock: client configuration: %w", err)
	}
	l := &Lock{cfg: cfg, sarama: sc, log: log.With("topic", cfg.Topic, "scope", cfg.Scope)}
	l.open = func() (recordLog, logBounds, error) { return openSaramaLog(cfg.Brokers, sc, cfg.Topic) }
	return l, nil
}

// Acquire joins the queue and blocks until this member holds a permit.
//
// There is no Release: the caller is expected to exec the guarded process
// right after Acquire returns, so the permit is released by the other
// members, when Ready says this member is ready or when its hold lease runs
// out. If ctx ends first, Acquire withdraws the request (a tombstone, best
// effort within WithdrawTimeout) and returns ctx.Err().
func (l *Lock) Acquire(ctx context.Context) error {
	if l.used.Swap(true) {
		return ErrAcquired
	}
	inc, err := incarnation()
	if err != nil {
		return err
	}
	log, b, since, err := l.openRetrying(ctx)
	if err != nil {
		return err
	}
	s := newSession(l, log, inc, b)
	s.unavailableSince = since
	return s.end(ctx, s.loop(ctx))
}

func incarnation() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("lock: generating an incarnation id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// openRetrying opens the lock topic, and opens it again while the failure
// is one that waiting can change (no leader for the partition yet, a
// broker that does not know the just-created topic, brokers unreachable
// for a moment): every second, with a warning every LogInterval, until ctx ends or, with
// UnavailableAfter set, until the topic has been unavailable that long. A
// topic of the wrong layout fails at once. It returns when the first
// failure happened (zero if none), which the session keeps counting from.
func (l *Lock) openRetrying(ctx context.Context) (recordLog, logBounds, time.Time, error) {
	clk := l.cfg.Clock
	var since, warned time.Time
	for {
		log, b, err := l.open()
		if err == nil {
			return log, b, since, nil
		}
		if errors.Is(err, errLayout) {
			return nil, b, since, err
		}
		if !notyet.Is(err) {
			return nil, b, since, l.refused("opening it", err)
		}
		if since.IsZero() {
			since = clk.Now()
		}
		if ua := l.cfg.UnavailableAfter; ua > 0 && clk.Now().Sub(since) >= ua {
			return nil, b, since, l.unavailable(ua, err)
		}
		// One warning at the first failure and then every LogInterval:
		// a line a second was 720 lines in the 12 minutes of a broker
		// that starts slowly (issue 48).
		if now := clk.Now(); warned.IsZero() || now.Sub(warned) >= l.cfg.LogInterval {
			l.log.Warn("the startup lock topic cannot be opened yet; retrying", "partition", 0, "error", err)
			warned = now
		}
		select {
		case <-ctx.Done():
			return nil, b, since, ctx.Err()
		case <-clk.After(time.Second):
		}
	}
}

// unavailable is ErrUnavailable naming the topic, the partition and the
// last cause.
func (l *Lock) unavailable(after time.Duration, cause error) error {
	return fmt.Errorf("%w: topic %q partition 0: nothing written for %v (last error: %v)", ErrUnavailable, l.cfg.Topic, after, cause)
}

// refused is ErrRefused for what (a write, a read, opening the topic)
// refused with cause.
func (l *Lock) refused(what string, cause error) error {
	return fmt.Errorf("%w: topic %q partition 0, %s: %w", ErrRefused, l.cfg.Topic, what, cause)
}

// constError is an error that is a constant, so that no importer can
// replace a sentinel that errors.Is compares against.
type constError string

func (e constError) Error() string { return string(e) }

package doctor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/IBM/sarama"
	gometrics "github.com/rcrowley/go-metrics"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/lock"
	"github.com/connect-init/connect-init/settings"
)

// Look is one look of the watcher (doctor --watch --metrics-addr): doctor's
// snapshot and document, the startup lock's queue, and what the look cost.
type Look struct {
	Snapshot *Snapshot
	Document *Document
	// Lock is the startup lock as read from its topic; nil when
	// CONNECT_INIT_LOCK=false.
	Lock *LockLook
	// Started is when the look began, Duration how long it took.
	Started  time.Time
	Duration time.Duration
	// KafkaRequests counts the Kafka requests the look sent (every
	// request, ApiVersions and metadata included, over every connection).
	KafkaRequests int64
	// Failed says why the look did not see the whole cluster (no broker
	// answered, a describe failed, the look ran out of time); empty when
	// it did.
	Failed string
	// Rejoin is the longest recent rejoin the watcher measured (nil: none
	// yet), Rejoins how many it measured since it started.
	Rejoin  *Rejoin
	Rejoins int
}

// LockLook is the startup lock's queue as the watcher reads it: without
// joining it and without writing anything.
type LockLook struct {
	Topic  string
	Exists bool
	// Writable is true when the lock topic's partition has a leader and at
	// least min.insync.replicas in-sync replicas: the lock writes with
	// acks=all, so a worker could take its turn.
	Writable bool
	// Holders and Waiters are the live holders and waiters of this group's
	// queue.
	Holders, Waiters int
	// HolderAge is how long the oldest unreleased hold (holding or
	// expired) has lasted, by the
	// watcher's clock against the broker time of the holder's record:
	// the queue's own "now" is the newest record, which stands still
	// while a stuck holder writes nothing.
	HolderAge time.Duration
	// HoldLease is CONNECT_INIT_LOCK_LEASE as the workers use it.
	HoldLease time.Duration
	// Err says why the queue could not be read.
	Err string
}

// TakeLook is one look of the watcher: doctor's looks (Collect) with
// clients of its own, closed when it returns, so that a watcher running
// for weeks holds no connection between looks and cannot accumulate them;
// then the startup lock's queue. ctx bounds the look. The Kafka requests
// are counted on the clients' metric registry.
func TakeLook(ctx context.Context, cfg *settings.Config, log *slog.Logger, opts Options, version string) *Look {
	opts = opts.withDefaults()
	l := &Look{Started: opts.Clock.Now()}
	counter := newRequestCounter()
	defer counter.stop()
	clients, err := kafka.NewClients(cfg)
	if err != nil {
		// The settings were validated before the first look: only a
		// broken keystore read again can fail here.
		l.Failed = err.Error()
		l.Snapshot = &Snapshot{GroupID: cfg.GroupID, BootstrapServers: cfg.BootstrapServers, ConnectErr: err.Error()}
		l.Document = NewDocument(l.Snapshot, Diagnose(l.Snapshot), version, opts.Clock.Now())
		l.Duration = opts.Clock.Now().Sub(l.Started)
		return l
	}
	clients.MemberConfig.MetricRegistry = counter
	clients.AdminConfig.MetricRegistry = counter
	defer clients.Close()
	l.Snapshot = Collect(ctx, cfg, clients, log, opts)
	l.Document = NewDocument(l.Snapshot, Diagnose(l.Snapshot), version, opts.Clock.Now())
	if cfg.Settings.Lock && clients.Admin != nil {
		l.Lock = lookLock(ctx, cfg, clients, opts.Clock)
	}
	if r, ok := opts.Rejoins.Longest(); ok {
		l.Rejoin = &r
	}
	l.Rejoins = opts.Rejoins.Total()
	l.Duration = opts.Clock.Now().Sub(l.Started)
	l.KafkaRequests = counter.requests()
	l.Failed = lookFailure(ctx, l.Snapshot)
	return l
}

// lookFailure says why a look did not see the whole cluster, or "".
func lookFailure(ctx context.Context, s *Snapshot) string {
	switch {
	case ctx.Err() != nil:
		return "the look ran out of time: " + ctx.Err().Error()
	case s.Brokers == nil || s.Brokers.Brokers == nil:
		return "no bootstrap server answered"
	case s.ConnectErr != "":
		return s.ConnectErr
	case s.TopicsErr != "":
		return s.TopicsErr
	case s.GroupErr != "":
		return s.GroupErr
	}
	return ""
}

// lookLock reads the startup lock's topic: its partition's leader and
// in-sync replicas (writable), then the group's queue (lock.Queue, which
// joins nothing and writes nothing). A missing topic is not read: the lock
// creates it with the first worker that takes it.
func lookLock(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, clk clock.Clock) *LockLook {
	s := cfg.Settings
	ll := &LockLook{Topic: cfg.LockTopic, HoldLease: s.LockLease}
	mds, err := clients.Admin.DescribeTopics([]string{cfg.LockTopic})
	if err != nil {
		ll.Err = fmt.Sprintf("describe the lock topic: %s", kafka.ExplainConnError(err))
		return ll
	}
	if len(mds) != 1 || errors.Is(mds[0].Err, sarama.ErrUnknownTopicOrPartition) {
		return ll
	}
	md := mds[0]
	if !errors.Is(md.Err, sarama.ErrNoError) {
		ll.Err = fmt.Sprintf("describe the lock topic: %s", md.Err)
		return ll
	}
	ll.Exists = true
	minISR := 1
	res, err := clients.Admin.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.TopicResource, Name: cfg.LockTopic, ConfigNames: []string{"min.insync.replicas"}}}, sarama.DescribeConfigsOptions{})
	if err == nil && len(res) == 1 && res[0].ErrorCode == sarama.ErrNoError {
		for _, e := range res[0].Configs {
			if n, err := strconv.Atoi(e.Value); e.Name == "min.insync.replicas" && err == nil {
				minISR = n
			}
		}
	}
	for _, p := range md.Partitions {
		ll.Writable = p.ID == 0 && p.Leader >= 0 && len(p.Isr) >= minISR
	}
	waiterLease := lock.DefaultLease
	if s.LockLease < waiterLease {
		waiterLease = max(s.LockLease, lock.MinLease)
	}
	lk, err := lock.New(lock.Config{Brokers: cfg.BootstrapServers, Sarama: clients.MemberConfig, Topic: cfg.LockTopic, Scope: cfg.GroupID,
		Identity: "connect-init doctor --watch", Permits: s.LockPermits, Lease: waiterLease, HoldLease: max(s.LockLease, waiterLease),
		PollInterval: 250 * time.Millisecond, Clock: clk})
	if err != nil {
		ll.Err = err.Error()
		return ll
	}
	snap, err := lk.Queue(ctx)
	if err != nil {
		ll.Err = fmt.Sprintf("read the lock topic: %s", err)
		return ll
	}
	ll.fromQueue(snap, clk.Now())
	return ll
}

// fromQueue counts the queue's live holders and waiters, and the age of
// the oldest hold not released: a holding member's, or an expired one's
// (past its hold lease with no release written, which is what a queue
// whose waiters cannot write looks like).
func (ll *LockLook) fromQueue(snap lock.Snapshot, now time.Time) {
	for _, e := range snap.Entries {
		switch e.State {
		case lock.StateHolding:
			ll.Holders++
		case lock.StateWaiting:
			ll.Waiters++
			continue
		case lock.StateExpired:
		default:
			continue
		}
		if age := now.Sub(e.LastSeen); age > ll.HolderAge {
			ll.HolderAge = age
		}
	}
}

// requestCounter is the go-metrics registry the look's sarama clients
// report to, kept only to count requests. sarama registers its
// "request-rate" meter per connection and unregisters it when the
// connection closes (a metadata read on a connection of its own closes at
// once): this registry keeps that meter across, so the count covers every
// request of the look. stop ends the meters' ticking.
type requestCounter struct {
	gometrics.Registry
	rate gometrics.Meter
}

func newRequestCounter() *requestCounter {
	r := gometrics.NewRegistry()
	rate := gometrics.NewMeter()
	_ = r.Register("request-rate", rate)
	return &requestCounter{Registry: r, rate: rate}
}

func (c *requestCounter) Unregister(name string) {
	if name != "request-rate" {
		c.Registry.Unregister(name)
	}
}

func (c *requestCounter) UnregisterAll() {
	c.Registry.Each(func(name string, _ any) { c.Unregister(name) })
}

func (c *requestCounter) requests() int64 { return c.rate.Count() }

func (c *requestCounter) stop() {
	c.Registry.UnregisterAll()
	c.rate.Stop()
}

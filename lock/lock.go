package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
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
var ErrSuperseded = errors.New("lock: another process with the same identity joined the queue after this one")

// ErrAcquired is returned by a second call to Acquire on the same Lock: a
// Lock stands for one start of one member.
var ErrAcquired = errors.New("lock: Acquire was already called on this Lock")

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
	// Ready is the readiness check; nil means holders are released only by
	// their hold lease.
	Ready ReadyFunc
	// Logger receives the progress lines; nil discards them.
	Logger *slog.Logger
	// Clock paces heartbeats, polls and logs; nil means SystemClock.
	Clock Clock
}

// Lock is one member's handle on the startup lock. Create it with New; it
// holds no connections until Acquire or Queue is called.
type Lock struct {
	cfg    Config
	sarama *sarama.Config
	log    *slog.Logger
	used   atomic.Bool

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
	case cfg.HoldLease < cfg.Lease:
		return nil, fmt.Errorf("lock: hold lease %v must not be shorter than the waiter lease %v", cfg.HoldLease, cfg.Lease)
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
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
	return &Lock{cfg: cfg, sarama: sc, log: log.With("topic", cfg.Topic, "scope", cfg.Scope)}, nil
}

// producerConfig copies base and sets what the protocol relies on.
func producerConfig(base *sarama.Config) *sarama.Config {
	if base == nil {
		base = sarama.NewConfig()
	}
	c := *base
	c.Version = sarama.MaxVersion
	c.ApiVersionsRequest = true
	c.Metadata.AllowAutoTopicCreation = false
	c.Metadata.Retry.Max = max(c.Metadata.Retry.Max, 10) // a broker may not know a just-created topic yet
	// Ordered, exactly-once appends: a retried heartbeat or claim can
	// neither be duplicated nor overtake the write after it.
	c.Producer.Idempotent = true
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Net.MaxOpenRequests = 1
	if c.Producer.Retry.Max < 10 {
		c.Producer.Retry.Max = 10
	}
	c.Producer.Return.Successes = true
	c.Producer.Return.Errors = true
	c.Producer.Partitioner = sarama.NewManualPartitioner
	c.Consumer.Return.Errors = true
	c.Consumer.IsolationLevel = sarama.ReadUncommitted
	return &c
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
	client, err := sarama.NewClient(l.cfg.Brokers, l.sarama)
	if err != nil {
		return fmt.Errorf("lock: connecting to %v: %w", l.cfg.Brokers, err)
	}
	defer func() { _ = client.Close() }()
	if err := checkPartitions(client, l.cfg.Topic); err != nil {
		return err
	}
	oldest, newest, err := bounds(client, l.cfg.Topic)
	if err != nil {
		return err
	}
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return fmt.Errorf("lock: creating consumer for %q: %w", l.cfg.Topic, err)
	}
	defer func() { _ = consumer.Close() }()
	pc, err := consumer.ConsumePartition(l.cfg.Topic, 0, sarama.OffsetOldest)
	if err != nil {
		return fmt.Errorf("lock: consuming %q: %w", l.cfg.Topic, err)
	}
	// Runs before the client's Close: stop the partition consumer without
	// waiting out its long-polling fetch (closing the client ends it).
	defer pc.AsyncClose()
	// The producer gets a client of its own: with Net.MaxOpenRequests=1 a
	// shared connection would queue every heartbeat behind the consumer's
	// long-polling fetch.
	pclient, err := sarama.NewClient(l.cfg.Brokers, l.sarama)
	if err != nil {
		return fmt.Errorf("lock: connecting to %v: %w", l.cfg.Brokers, err)
	}
	defer func() { _ = pclient.Close() }()
	producer, err := sarama.NewAsyncProducerFromClient(pclient)
	if err != nil {
		return fmt.Errorf("lock: creating producer for %q: %w", l.cfg.Topic, err)
	}

	inc, err := incarnation()
	if err != nil {
		_ = producer.Close()
		return err
	}
	s := &session{
		l:            l,
		st:           newState(l.cfg.Scope),
		producer:     producer,
		inc:          inc,
		ticket:       -1,
		caughtUp:     newest <= oldest,
		target:       newest,
		releasesSent: map[int64]bool{},
		releaseSeqs:  map[uint64]int64{},
		deadLogged:   map[int64]bool{},
		prodErrs:     make(chan *sarama.ProducerError, 64),
		readyCh:      make(chan []readyResult, 1),
	}
	s.host, _ = os.Hostname()
	s.pending = func() int { return len(pc.Messages()) }
	go s.drain()
	return s.run(ctx, pc)
}

// checkPartitions fails fast, with the fix in the message, when the lock
// topic is missing or has the wrong layout.
func checkPartitions(client sarama.Client, topic string) error {
	parts, err := client.Partitions(topic)
	if errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
		return fmt.Errorf("lock: topic %q does not exist; create it first (EnsureTopic): %w", topic, err)
	}
	if err != nil {
		return fmt.Errorf("lock: reading metadata of %q: %w", topic, err)
	}
	if len(parts) != 1 {
		return fmt.Errorf("lock: topic %q has %d partitions, the lock needs exactly 1", topic, len(parts))
	}
	return nil
}

func bounds(client sarama.Client, topic string) (oldest, newest int64, err error) {
	if oldest, err = client.GetOffset(topic, 0, sarama.OffsetOldest); err != nil {
		return 0, 0, fmt.Errorf("lock: reading the start offset of %q: %w", topic, err)
	}
	if newest, err = client.GetOffset(topic, 0, sarama.OffsetNewest); err != nil {
		return 0, 0, fmt.Errorf("lock: reading the end offset of %q: %w", topic, err)
	}
	return oldest, newest, nil
}

func incarnation() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("lock: generating an incarnation id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// session is one run of Acquire.
type session struct {
	l        *Lock
	st       *state
	producer sarama.AsyncProducer
	inc      string
	host     string

	pending  func() int // records fetched but not yet handled
	caughtUp bool       // the log has been read up to target
	target   int64      // end offset when Acquire started
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
	readyCh      chan []readyResult
	prodErrs     chan *sarama.ProducerError

	lastLog    time.Time
	lastLogKey string
}

// drain consumes the producer's result channels so that it never blocks,
// and forwards errors to the session loop.
func (s *session) drain() {
	successes, errs := s.producer.Successes(), s.producer.Errors()
	for successes != nil || errs != nil {
		select {
		case _, ok := <-successes:
			if !ok {
				successes = nil
			}
		case e, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			select {
			case s.prodErrs <- e:
			default:
			}
		}
	}
}

func (s *session) run(ctx context.Context, pc sarama.PartitionConsumer) error {
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
			s.withdraw()
			return ctx.Err()
		case msg, ok := <-pc.Messages():
			if !ok {
				s.closeProducer()
				return fmt.Errorf("lock: consumer of %q stopped", cfg.Topic)
			}
			done, err := s.handle(msg)
			if err != nil {
				s.closeProducer()
				return err
			}
			if done {
				s.closeProducer()
				return nil
			}
		case err := <-pc.Errors():
			s.l.log.Warn("reading the startup lock topic failed; retrying", "err", err)
		case e := <-s.prodErrs:
			s.writeFailed(e)
		case <-heartbeat:
			heartbeat = clk.After(cfg.Lease / 3)
			s.heartbeat()
		case <-poll:
			poll = clk.After(cfg.PollInterval)
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
func (s *session) handle(msg *sarama.ConsumerMessage) (done bool, err error) {
	rec := rawRecord{Offset: msg.Offset, Timestamp: msg.Timestamp, Key: msg.Key, Value: msg.Value}
	if !s.caughtUp {
		s.applyLogged(rec)
		if msg.Offset+1 >= s.target {
			s.caughtUp = true
			s.request()
		}
		return false, nil
	}
	k, kerr := decodeKey(rec.Key)
	own := kerr == nil && k.Scope == s.l.cfg.Scope && k.Identity == s.l.cfg.Identity && !k.Release
	if !own {
		s.applyLogged(rec)
		s.evaluate()
		return false, nil
	}
	if rec.Value == nil {
		// Someone deleted our entry (an operator, or a process with our
		// identity withdrawing): put it back, keeping the ticket.
		s.applyLogged(rec)
		if s.firstSeen && s.claimSeq == 0 {
			s.l.log.Warn("startup lock entry was deleted by someone else; re-requesting", "identity", s.l.cfg.Identity)
			s.heartbeat()
		}
		return false, nil
	}
	var v memberValue
	if err := json.Unmarshal(rec.Value, &v); err != nil {
		s.applyLogged(rec)
		return false, nil
	}
	if v.Incarnation != s.inc {
		s.applyLogged(rec)
		if !s.firstSeen || v.Incarnation == s.predecessor {
			// A late write of the start before ours: ours wins.
			s.predecessor = v.Incarnation
			if s.firstSeen && s.claimSeq == 0 {
				s.heartbeat()
			}
			return false, nil
		}
		return false, fmt.Errorf("%w (identity %q, scope %q, other incarnation %s)", ErrSuperseded, s.l.cfg.Identity, s.l.cfg.Scope, v.Incarnation)
	}
	if !s.firstSeen {
		s.firstSeen = true
		s.requestSeq = 0
		s.ticket = v.Ticket
		if s.ticket < 0 {
			s.ticket = rec.Offset
		}
		s.firstTS = rec.Timestamp
	}
	if v.State == stateHolding && v.Seq == s.claimSeq {
		// The claim is good only if, just before it and at its own
		// timestamp, we were entitled and our entry was ours; every
		// member that reads the log reaches the same verdict.
		now := s.st.now
		if rec.Timestamp.After(now) {
			now = rec.Timestamp
		}
		valid := v.Seq == s.lastMember && s.st.entitled(s.l.cfg.Identity, s.inc, s.l.cfg.Permits, now)
		s.applyLogged(rec)
		s.claimSeq = 0
		if valid {
			s.acquired(rec.Timestamp)
			return true, nil
		}
		s.l.log.Info("startup lock claim lost a race; still waiting", "ticket", s.ticket)
		s.heartbeat()
		return false, nil
	}
	s.applyLogged(rec)
	s.evaluate()
	return false, nil
}

func (s *session) applyLogged(rec rawRecord) {
	if err := s.st.apply(rec); err != nil {
		s.l.log.Debug("ignoring a record on the startup lock topic", "offset", rec.Offset, "err", err)
	}
}

// request writes our first record. A restarted member keeps its ticket if
// its previous start was still waiting; one that had held (or was released,
// or withdrew) goes to the back of the queue.
func (s *session) request() {
	ticket := int64(-1)
	if prev, ok := s.st.members[s.l.cfg.Identity]; ok {
		s.predecessor = prev.incarnation
		if prev.state == stateWaiting {
			ticket = prev.ticket
			s.l.log.Info("restarted while waiting for the startup lock; keeping the place in the queue", "ticket", ticket)
		} else {
			s.l.log.Info("restarted after holding the startup lock; going to the back of the queue")
		}
	}
	s.requestSeq = s.write(stateWaiting, ticket)
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
		s.write(stateWaiting, s.ticket)
	}
}

func (s *session) write(state string, ticket int64) uint64 {
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
	msg := &sarama.ProducerMessage{
		Topic:     s.l.cfg.Topic,
		Partition: 0,
		Key:       sarama.ByteEncoder(k.encode()),
		Timestamp: s.l.cfg.Clock.Now(),
		Metadata:  seq,
	}
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil { // cannot happen: plain structs
			panic(fmt.Sprintf("lock: encoding value: %v", err))
		}
		msg.Value = sarama.ByteEncoder(b)
	}
	s.producer.Input() <- msg
}

// writeFailed handles a write that the producer gave up on. Heartbeats are
// simply retried at the next tick; a failed claim or request is forgotten
// so that a new one can be written (if the old one did land after all, the
// write after it supersedes it and it is never treated as ours).
func (s *session) writeFailed(e *sarama.ProducerError) {
	seq, _ := e.Msg.Metadata.(uint64)
	s.l.log.Warn("writing to the startup lock topic failed; will retry", "err", e.Err)
	if seq != 0 && seq == s.claimSeq {
		s.claimSeq = 0
	}
	if seq != 0 && seq == s.requestSeq {
		s.requestSeq = 0
	}
	// A release lost to a failover must be written again (the hold would
	// otherwise wait out its whole lease): forget that it was sent.
	if off, ok := s.releaseSeqs[seq]; ok {
		delete(s.releaseSeqs, seq)
		delete(s.releasesSent, off)
	}
}

// evaluate writes releases for expired holders and claims a permit when
// this member is entitled to one.
func (s *session) evaluate() {
	if !s.firstSeen || s.claimSeq != 0 {
		return
	}
	now := s.st.now
	q := s.st.queue(now)
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
	if s.pending != nil && s.pending() > 0 {
		return
	}
	if s.st.entitled(s.l.cfg.Identity, s.inc, s.l.cfg.Permits, now) {
		s.claimSeq = s.write(stateHolding, s.ticket)
	}
}

// release writes the release of m's current hold, once per hold. Several
// members may release the same hold; the records agree, so that is harmless.
func (s *session) release(m *member, reason string) {
	if s.releasesSent[m.offset] {
		return
	}
	s.releasesSent[m.offset] = true
	s.l.log.Info("releasing the startup lock holder", "holder", display(m), "reason", reason, "held_for", roundSec(s.st.now.Sub(m.ts)))
	s.seq++
	s.releaseSeqs[s.seq] = m.offset
	s.send(recordKey{Scope: s.l.cfg.Scope, Identity: m.identity, Release: true}, releaseValue{
		V:          formatVersion,
		Identity:   m.identity,
		State:      stateReleased,
		HoldOffset: m.offset,
		Reason:     reason,
		By:         s.l.cfg.Identity,
	}, s.seq)
}

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
	now := s.st.now
	q := s.st.queue(now)
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
		hs = append(hs, Holder{Identity: m.identity, URL: m.url, Ticket: m.ticket, Since: m.ts, HeldFor: now.Sub(m.ts)})
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
				log.Debug("startup lock holder is not ready", "holder", h.Identity, "err", err)
			}
			res[i] = readyResult{identity: h.Identity, holdOffset: offs[i], ready: ok && err == nil}
		}
		s.readyCh <- res // buffered (1), and only one round runs at a time
	}()
}

func (s *session) readyResults(res []readyResult) {
	for _, r := range res {
		if !r.ready {
			continue
		}
		m, ok := s.st.members[r.identity]
		if !ok || m.offset != r.holdOffset || s.st.status(m, s.st.now) != statusHolding {
			continue // its hold changed meanwhile
		}
		s.release(m, "ready")
	}
	s.evaluate()
}

// progress logs where we stand, on change or every LogInterval.
func (s *session) progress() {
	now := s.st.now
	q := s.st.queue(now)
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

// withdraw deletes our entry (a tombstone) so that nobody waits for us to
// go silent; it is best effort, bounded by WithdrawTimeout.
func (s *session) withdraw() {
	if s.l.crashOnCancel {
		s.producer.AsyncClose()
		return
	}
	if s.caughtUp {
		s.seq++
		s.send(recordKey{Scope: s.l.cfg.Scope, Identity: s.l.cfg.Identity}, nil, s.seq)
	}
	if err := s.closeProducer(); err != nil {
		s.l.log.Warn("could not withdraw from the startup lock queue; the entry will be skipped once its lease runs out", "err", err, "lease", s.l.cfg.Lease)
		return
	}
	if s.caughtUp {
		s.l.log.Info("withdrew from the startup lock queue")
	}
}

// closeProducer flushes pending writes, waiting at most WithdrawTimeout.
func (s *session) closeProducer() error {
	done := make(chan error, 1)
	go func() { done <- s.producer.Close() }()
	t := time.NewTimer(s.l.cfg.WithdrawTimeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("flushing writes to %q took longer than %v", s.l.cfg.Topic, s.l.cfg.WithdrawTimeout)
	}
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

package startup

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/future"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
)

// configFailure marks an error as bad configuration (exit 2) whatever its
// type: everything the settings step rejects, and a failed exec.
type configFailure struct{ err error }

func (e *configFailure) Error() string { return e.err.Error() }
func (e *configFailure) Unwrap() error { return e.err }

// realGates are the real steps: package gate's cluster gates, the startup
// lock, the peer check and the exec.
type realGates struct {
	log        *slog.Logger
	clock      clock.Clock
	options    settings.Options
	execWorker func(*entrypoint.Command) error
	executable func() (string, error)
	version    string
}

// settings resolves the worker command (run only: a missing command must
// fail before anything is touched), reads the worker settings and builds
// the Kafka clients' configurations without connecting.
func (g realGates) settings(_ context.Context, st *state) error {
	if st.withExec {
		c, err := entrypoint.Resolve(st.argv, st.env)
		if err != nil {
			return &configFailure{err}
		}
		st.command = c
	}
	cfg, clients, err := LoadConfig(g.options, st.env, st.settings, g.log)
	if err != nil {
		return &configFailure{err}
	}
	st.cfg, st.clients = cfg, clients
	if st.withExec && st.settings.Lock {
		// The worker may wait for its turn itself, after its plugin scan
		// (the in-worker lock); decided here so a bad mode fails early.
		if st.inWorker, err = planStartupLock(cfg, st.command, g.executable, g.log); err != nil {
			return &configFailure{err}
		}
	}
	g.log.Info("connect-init starting", "version", g.version, "group", cfg.GroupID, "bootstrap", strings.Join(cfg.BootstrapServers, ","),
		"expected_brokers", cfg.ExpectedBrokers, "timeout", st.settings.Timeout.String())
	return nil
}

// brokers is the brokers step (ConnectBrokers).
func (g realGates) brokers(ctx context.Context, st *state) error {
	st.started = g.clock.Now()
	rep, err := connectBrokers(ctx, st.cfg, st.clients, g.log, g.clock, true)
	if err != nil {
		return err
	}
	st.handoff = rep.Handoff
	return nil
}

// ConnectBrokers is the brokers step: every broker up (the brokers gate,
// paced by clk), then the clients connect for what follows, every dial
// bounded by ctx. The one brokers step of run, prepare, lock acquire and
// apply.
//
// The clients dial while the gate's first look runs: on a healthy cluster
// that look passes and the clients' handshakes and metadata read are no
// longer a round of their own (issue 39). They are kept only when the gate
// passed at its first look; otherwise (a cluster that was not ready then)
// they are closed and dialed again once the gate passes, as before.
func ConnectBrokers(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, log *slog.Logger, clk clock.Clock) error {
	_, err := connectBrokers(ctx, cfg, clients, log, clk, false)
	return err
}

// connectBrokers is ConnectBrokers, with the brokers gate's last report.
// readAhead reads, beside the gate's look, the internal topics' settings
// and the group's coordinator, for the topics and coordinator steps that
// follow (run, prepare); lock acquire and apply have none, and do not ask.
func connectBrokers(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, log *slog.Logger, clk clock.Clock, readAhead bool) (*gate.BrokerReport, error) {
	bg := &gate.BrokerGate{Config: clients.MemberConfig, Bootstrap: cfg.BootstrapServers, Expected: cfg.ExpectedBrokers,
		Topics: cfg.TopicNames(), Log: log, Clock: clk, ReadyOnMetadata: true, ReadTopicSettings: readAhead}
	if readAhead {
		bg.FindCoordinator = cfg.GroupID
	}
	early := clients.Unconnected()
	dialed := future.Go(ctx, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, early.ConnectContext(ctx, cfg.BootstrapServers, seedTopics(cfg))
	})
	rep, err := bg.Wait(ctx)
	if err == nil && rep.Handoff != nil && rep.Handoff.Metadata != nil && rep.Handoff.Metadata.ClusterID != nil {
		clients.ClusterID = *rep.Handoff.Metadata.ClusterID
	}
	if err == nil && rep.Attempts == 1 {
		if _, derr := dialed.Wait(); derr == nil {
			clients.Adopt(early)
			return rep, nil
		}
	} else {
		dialed.Stop()
		if _, derr := dialed.Wait(); derr == nil {
			early.Close()
		}
	}
	if err != nil {
		return rep, err
	}
	if err := clients.ConnectContext(ctx, cfg.BootstrapServers, seedTopics(cfg)); err != nil {
		return rep, &gate.GateError{Gate: step.Brokers, Err: err}
	}
	return rep, nil
}

// seedTopics are the topics the clients' first metadata read asks for:
// the internal topics, the cluster registry's, which the group step reads,
// and __consumer_offsets, whose partition for the group the coordinator
// step checks (their own metadata reads were round trips of every start,
// issue 39). On a new cluster the last two do not exist yet: a "not yet"
// answer for them leaves their steps to read again.
func seedTopics(cfg *settings.Config) []string {
	return append(cfg.TopicNames(), gate.RegistryTopic(cfg), gate.ConsumerOffsetsTopic)
}

// topics is the topics gate: the internal topics exist and are right.
// The coordinator step's check runs beside it (coordinatorAhead): it
// needs nothing the topics step makes, and one after the other they were
// a round of requests more on every start (issue 39).
func (g realGates) topics(ctx context.Context, st *state) error {
	ahead := future.Go(ctx, func(ctx context.Context) (*gate.CoordinatorReport, error) { return g.checkCoordinator(ctx, st) })
	tg := &gate.TopicGate{Admin: st.clients.Admin, Client: st.clients.AdminClient, Config: st.clients.AdminConfig, Specs: st.cfg.Topics, Log: g.log, Clock: g.clock, Create: true,
		Handoff: st.handoff}
	if _, err := tg.Ensure(ctx); err != nil {
		ahead.Stop()
		return err
	}
	st.coordinator = ahead
	return nil
}

// coordinator is the coordinator gate: the group's coordinator is found
// and its partition survives a broker loss. Its check started with the
// topics step; this step waits for its verdict.
func (g realGates) coordinator(ctx context.Context, st *state) error {
	if a := st.coordinator; a != nil {
		st.coordinator = nil
		_, err := a.Wait()
		return err
	}
	_, err := g.checkCoordinator(ctx, st)
	return err
}

// checkCoordinator is the coordinator gate's check, on the coordinator
// the brokers step found when it found one.
func (g realGates) checkCoordinator(ctx context.Context, st *state) (*gate.CoordinatorReport, error) {
	cg := &gate.CoordinatorGate{Client: st.clients.Member, Admin: st.clients.Admin, GroupID: st.cfg.GroupID, Log: g.log, Clock: g.clock,
		Strict: st.cfg.Settings.Strict, Wait: true, Known: st.handoff.KnownCoordinator()}
	return cg.Check(ctx)
}

// group is the group gate: every member of the worker group is judged
// before anything is written, then this worker is registered in the
// cluster registry (Identity.Register).
func (g realGates) group(ctx context.Context, st *state) error {
	gg := gate.NewGroupGate(st.cfg, st.clients, g.log, g.clock)
	gg.UseCoordinator(st.handoff.KnownCoordinator())
	gg.Identity.Register = true
	gg.UntilCalm = true // a rolling start settles: wait for it, within the timeout
	// Settings parity (startup/parity.go) judges the report before this
	// worker is registered: a worker whose settings drifted from the
	// group's is refused before the join and leaves no record.
	parityDone := false
	gg.BeforeRegister = func(ctx context.Context, rep *gate.GroupReport) error {
		st.group, parityDone = rep, true
		return checkParity(ctx, st, g.log, g.clock)
	}
	rep, err := gg.Check(ctx)
	if err != nil {
		return err
	}
	st.group = rep
	if !parityDone {
		if err := checkParity(ctx, st, g.log, g.clock); err != nil {
			return err
		}
	}
	if rep.Window != nil {
		st.profile.Set(ProfileGroupWindow, rep.Window.Span)
	}
	g.log.Info("cluster ready", "took", g.clock.Now().Sub(st.started).Round(time.Millisecond).String())
	return nil
}

// plugins is the plugins step (plugins.go): this worker can load what the
// cluster's connectors use wherever the other members can.
func (g realGates) plugins(ctx context.Context, st *state) error {
	return checkPlugins(ctx, st, g.options.Root, g.log)
}

// lock is the startup lock step (TakeLockProfiled), starting from what the
// group step judged and the coordinator the brokers step found.
func (g realGates) lock(ctx context.Context, st *state) error {
	seen := LockSeen{Group: st.group, Coordinator: st.handoff.KnownCoordinator()}
	queued, waited, err := TakeLockProfiled(ctx, st.cfg, st.clients, g.log, g.clock, st.profile, seen)
	st.queued, st.waited = queued, waited
	return err
}

// peers checks the group again when the lock step waited (the group may
// have changed meanwhile), then the REST peers.
func (g realGates) peers(ctx context.Context, st *state) error {
	group := st.group
	if st.waited {
		group = nil
	}
	return CheckPeers(ctx, st.cfg, st.clients, group, st.queued, g.log, g.clock)
}

func (g realGates) exec(ctx context.Context, st *state) error {
	if st.inWorker != nil {
		if err := st.inWorker.apply(st.command); err != nil {
			// A worker properties file that cannot be read is bad
			// configuration (exit 2); a write that failed (a full disk)
			// is not: exit 1 (issue 48).
			var ce *settings.ConfigError
			if errors.As(err, &ce) {
				return &configFailure{err}
			}
			return err
		}
	}
	st.clients.Close()
	startApplyChild(st, g.executable, g.log) // CONNECT_INIT_CONNECTORS_DIR: applychild.go
	where := WhereExec
	if st.inWorker != nil {
		where = WhereExecInWorkerLock
	}
	st.profile.Log(ctx, g.log, where)
	g.log.Info("starting the worker", "command", strings.Join(st.command.Argv, " "))
	if err := g.execWorker(st.command); err != nil {
		return &configFailure{err}
	}
	return nil
}

// isConfigFailure reports whether err is marked as bad configuration.
func isConfigFailure(err error) bool {
	var cf *configFailure
	return errors.As(err, &cf)
}

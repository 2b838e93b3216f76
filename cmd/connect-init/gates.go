package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
)

// configFailure marks an error as bad configuration (exit 2) whatever its
// type: everything the settings step rejects, and a failed exec.
type configFailure struct{ err error }

func (e *configFailure) Error() string { return e.err.Error() }
func (e *configFailure) Unwrap() error { return e.err }

// realGates are the real steps: bootstrap's gates, the startup lock, the
// peer check and the exec.
type realGates struct {
	log   *slog.Logger
	clock clock.Clock
}

// settings resolves the worker command (run only: a missing command must
// fail before anything is touched), reads the worker settings and builds
// the Kafka clients' configurations without connecting.
func (g realGates) settings(_ context.Context, st *startup) error {
	if st.withExec {
		c, err := entrypoint.Resolve(st.argv, st.env)
		if err != nil {
			return &configFailure{err}
		}
		st.command = c
	}
	cfg, clients, err := loadConfig(st.env, st.settings, g.log)
	if err != nil {
		return &configFailure{err}
	}
	st.cfg, st.clients = cfg, clients
	if st.withExec && st.settings.Lock {
		// The worker may wait for its turn itself, after its plugin scan
		// (the in-worker lock); decided here so a bad mode fails early.
		if st.inWorker, err = planStartupLock(cfg, st.command, g.log); err != nil {
			return &configFailure{err}
		}
	}
	st.cluster = &gate.Cluster{Config: cfg, Clients: clients, Log: g.log, Clock: g.clock}
	g.log.Info("connect-init starting", "version", version, "group", cfg.GroupID, "bootstrap", strings.Join(cfg.BootstrapServers, ","),
		"expected_brokers", cfg.ExpectedBrokers, "timeout", st.settings.Timeout.String())
	return nil
}

func (g realGates) brokers(ctx context.Context, st *startup) error {
	st.started = time.Now()
	return st.cluster.Brokers(ctx)
}

func (g realGates) topics(ctx context.Context, st *startup) error { return st.cluster.Topics(ctx) }

func (g realGates) coordinator(ctx context.Context, st *startup) error {
	return st.cluster.Coordinator(ctx)
}

func (g realGates) group(ctx context.Context, st *startup) error {
	if err := st.cluster.Group(ctx); err != nil {
		return err
	}
	g.log.Info("cluster ready", "took", time.Since(st.started).Round(time.Millisecond).String())
	return nil
}

func (g realGates) lock(ctx context.Context, st *startup) error {
	queued, err := takeStartupLock(ctx, st.cfg, st.clients, g.log)
	st.queued, st.waited = queued, true
	return err
}

// peers checks the group again when the lock step waited (the group may
// have changed meanwhile), then the REST peers.
func (g realGates) peers(ctx context.Context, st *startup) error {
	group := st.cluster.Report.Group
	if st.waited {
		group = nil
	}
	return checkPeers(ctx, st.cfg, st.clients, group, st.queued, g.log)
}

func (g realGates) exec(_ context.Context, st *startup) error {
	if st.inWorker != nil {
		if err := st.inWorker.apply(st.command); err != nil {
			return &configFailure{err}
		}
	}
	st.clients.Close()
	startApplyChild(st, g.log) // CONNECT_INIT_CONNECTORS_DIR: applycmd.go
	g.log.Info("starting the worker", "command", strings.Join(st.command.Argv, " "))
	if err := execFunc(st.command); err != nil {
		return &configFailure{err}
	}
	return nil
}

// isConfigFailure reports whether err is marked as bad configuration.
func isConfigFailure(err error) bool {
	var cf *configFailure
	return errors.As(err, &cf)
}

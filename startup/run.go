package startup

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
	"github.com/connect-init/connect-init/workerconfig"
)

// LogConfigError logs a bad setting found by step (settings, or later: the
// lock's topic, the command after --) as one error event naming the
// setting and its fix.
func LogConfigError(log *slog.Logger, gate string, err error) {
	attrs := []any{"gate", gate, "error", err.Error()}
	var ce *settings.ConfigError
	var we *workerconfig.Error
	switch {
	case errors.As(err, &ce):
		attrs = append(attrs, "setting", ce.Setting)
		if ce.Fix != "" {
			attrs = append(attrs, "fix", ce.Fix)
		}
	case errors.As(err, &we):
		if we.Setting != "" {
			attrs = append(attrs, "setting", we.Setting)
		}
		if we.Fix != "" {
			attrs = append(attrs, "fix", we.Fix)
		}
	}
	log.Error("bad configuration", attrs...)
}

// ExitCode maps an error to the contract's exit codes.
func ExitCode(ctx context.Context, err error) int {
	if se, ok := entrypoint.Interrupted(ctx); ok {
		return se.ExitCode()
	}
	var ee *entrypoint.Error
	if settings.AsConfigError(err) || errors.As(err, &ee) || isConfigFailure(err) {
		return exitcode.Config
	}
	return exitcode.Failed
}

// Invocation is one run or prepare: what the command line and the
// environment gave, and the seams the process has (tests replace them).
type Invocation struct {
	// Argv is the worker command after --, for run; Env is the environment.
	Argv, Env []string
	// Settings are connect-init's own, flags applied and validated.
	Settings settings.Settings
	// WithExec is true for run, false for prepare (no lock, peers, exec).
	WithExec bool
	Log      *slog.Logger
	// Clock paces the gates; nil is the system clock.
	Clock clock.Clock
	// Options stand for the image's file system and this machine's
	// addresses (settings.Options); the zero value is the real ones.
	Options settings.Options
	// Exec replaces the process with the worker; nil is Command.Exec.
	Exec func(*entrypoint.Command) error
	// Executable is connect-init's own path, for the apply child and the
	// in-worker lock's provider; nil is os.Executable.
	Executable func() (string, error)
	// Version is logged as the start-up begins.
	Version string
}

// Run is run (WithExec) and prepare: the start-up's steps (pipeline.go)
// with the real gates. It returns the exit code.
func Run(ctx context.Context, inv Invocation) int {
	st := &state{argv: inv.Argv, env: inv.Env, settings: inv.Settings, withExec: inv.WithExec, profile: NewProfile(inv.Clock)}
	defer func() {
		st.coordinator.Stop() // a signal between the topics and coordinator steps (nil: nothing runs)
		if st.clients != nil {
			st.clients.Close()
		}
	}()
	g := realGates{log: inv.Log, clock: clock.Or(inv.Clock), options: inv.Options, execWorker: inv.Exec, executable: inv.Executable, version: inv.Version}
	if g.execWorker == nil {
		g.execWorker = (*entrypoint.Command).Exec
	}
	if g.executable == nil {
		g.executable = os.Executable
	}
	code := runStartup(ctx, g, st, inv.Log)
	if code == exitcode.OK && !st.withExec {
		// prepare's own line: its figure in make bench comes with the
		// steps' breakdown too.
		st.profile.Log(ctx, inv.Log, WherePrepare)
	}
	return code
}

// runStartup runs the steps over g. Before them, run removes the secrets
// hand-overs of earlier starts whose worker is gone; after them, when the
// worker did not start (any failure, the exec's included), it removes the
// hand-overs it wrote: no child will read them (handover.go, issue 48).
// When the exec succeeds, nothing here runs again.
func runStartup(ctx context.Context, g gates, st *state, log *slog.Logger) int {
	if st.withExec {
		sweepStaleHandovers(log)
	}
	code := runSteps(ctx, startupSteps(g), st, log)
	if code != exitcode.OK {
		pending.removeAll()
	}
	return code
}

// LoadConfig is the settings step: it reads and checks every setting and
// builds both clients' configurations without connecting; every error
// here is bad configuration (exit 2).
func LoadConfig(o settings.Options, env []string, s settings.Settings, log *slog.Logger) (*settings.Config, *kafka.Clients, error) {
	cfg, err := o.Load(env, s)
	if err != nil {
		return nil, nil, err
	}
	LogFlavour(log, cfg)
	clients, err := kafka.NewClients(cfg)
	if err != nil {
		return nil, nil, cfg.Attribute(err)
	}
	return cfg, clients, nil
}

// LogFlavour logs the image flavour the worker settings were read with,
// and the variables the image overwrites or ignores.
func LogFlavour(log *slog.Logger, cfg *settings.Config) {
	log.Info("image flavour", "gate", step.Settings, "flavour", string(cfg.Flavour), "detected", cfg.Detection.Found && !cfg.Settings.Given("CONNECT_INIT_IMAGE"), "evidence", cfg.Detection.Evidence)
	for _, n := range cfg.Notes {
		log.Warn("worker settings note", "gate", step.Settings, "note", n)
	}
}

package startup

import (
	"context"
	"log/slog"
	"time"

	"github.com/connect-init/connect-init/connect/plugins"
	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/future"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
)

// deadline says which timeout bounds a step.
type deadline int

const (
	// deadlineNone: the step runs under the caller's context only:
	// settings does no I/O, the lock's wait is bounded by its hold lease,
	// exec is final.
	deadlineNone deadline = iota
	// deadlineCluster: the cluster steps (brokers to plugins) share one
	// CONNECT_INIT_TIMEOUT.
	deadlineCluster
	// deadlineFresh: the step gets a CONNECT_INIT_TIMEOUT of its own:
	// peers, after a wait for the lock that may have been long.
	deadlineFresh
)

// stage is one named step of the start-up, with its deadline and skip reason.
type stage struct {
	name     string
	deadline deadline
	// skip, when set, returns why the step does not run ("" when it runs).
	skip func(st *state) string
	run  func(ctx context.Context, st *state) error
}

// state is what the steps share: the invocation, then what each step
// produced for the ones after it.
type state struct {
	argv, env []string
	settings  settings.Settings
	// withExec is true for run, false for prepare (no lock, no peers, no
	// exec).
	withExec bool
	started  time.Time

	command *entrypoint.Command
	cfg     *settings.Config
	clients *kafka.Clients
	// handoff is what the brokers step read for the steps after it (the
	// live brokers and their views of the internal topics, the metadata,
	// the topics' settings, the coordinator): the one value that passes
	// from an earlier step to later ones. Each takes its part; a part it
	// does not find, it reads itself.
	handoff *gate.Handoff
	// coordinator is the coordinator step's check, started by the topics
	// step beside its own.
	coordinator *future.Future[*gate.CoordinatorReport]
	// group is the group gate's report, for peers.
	group *gate.GroupReport
	// queued are the lock queue's members released as ready, for peers.
	queued []string
	// inWorker, when set, is the in-worker lock: the worker waits for its
	// turn in its config provider, so the lock step does not wait here.
	inWorker *inWorkerPlan
	// waited is true once the lock step waited in the queue: the group
	// report is stale then, and peers looks at the group again.
	waited bool
	// profile times the steps for the start-up profile line (profile.go);
	// nil records nothing.
	profile *Profile
}

// gates are the steps' dependencies, one method per step: realGates runs
// the real ones, the pipeline's unit tests give fakes.
type gates interface {
	settings(ctx context.Context, st *state) error
	brokers(ctx context.Context, st *state) error
	topics(ctx context.Context, st *state) error
	coordinator(ctx context.Context, st *state) error
	group(ctx context.Context, st *state) error
	plugins(ctx context.Context, st *state) error
	lock(ctx context.Context, st *state) error
	peers(ctx context.Context, st *state) error
	exec(ctx context.Context, st *state) error
}

// reasonPrepare is why prepare skips the plugins, lock, peers and exec
// steps; it is logged at debug level only, since it is what prepare means.
// (prepare has no worker command and may run in another container than
// the worker's, so it cannot know what the worker loads.)
const reasonPrepare = "prepare stops after the group gate"

// startupSteps is the start-up: every step for run, settings to group for
// prepare.
func startupSteps(g gates) []stage {
	onlyRun := func(st *state) string {
		if !st.withExec {
			return reasonPrepare
		}
		return ""
	}
	return []stage{
		{name: step.Settings, deadline: deadlineNone, run: g.settings},
		{name: step.Brokers, deadline: deadlineCluster, run: g.brokers},
		{name: step.Topics, deadline: deadlineCluster, run: g.topics},
		{name: step.Coordinator, deadline: deadlineCluster, run: g.coordinator},
		{name: step.Group, deadline: deadlineCluster, run: g.group},
		{name: step.Plugins, deadline: deadlineCluster, run: g.plugins, skip: func(st *state) string {
			if why := onlyRun(st); why != "" {
				return why
			}
			if mode, err := plugins.ParseCheckMode(st.settings.PluginCheck); err == nil && mode == plugins.CheckOff {
				return "CONNECT_INIT_PLUGIN_CHECK=off"
			}
			return ""
		}},
		{name: step.Lock, deadline: deadlineNone, run: g.lock, skip: func(st *state) string {
			if why := onlyRun(st); why != "" {
				return why
			}
			if !st.settings.Lock {
				return "CONNECT_INIT_LOCK=false"
			}
			if st.inWorker != nil {
				return "the worker waits for its turn itself, after its plugin scan (in-worker lock)"
			}
			return ""
		}},
		{name: step.Peers, deadline: deadlineFresh, run: g.peers, skip: onlyRun},
		{name: step.Exec, run: g.exec, skip: onlyRun},
	}
}

// runSteps runs steps in order and returns the exit code: 0 when all ran
// or were skipped; the failing step's code otherwise (exitCode). A signal
// that arrives while a step runs fails that step; one that arrives as a
// step succeeds stops the pipeline before the next: 128+signal either way.
func runSteps(ctx context.Context, steps []stage, st *state, log *slog.Logger) int {
	var clusterCtx context.Context
	for _, s := range steps {
		if se, ok := entrypoint.Interrupted(ctx); ok {
			log.Warn("stopped before the worker started", "gate", s.name, "signal", se.Signal.String())
			return se.ExitCode()
		}
		if s.skip != nil {
			if why := s.skip(st); why != "" {
				level := slog.LevelInfo
				if why == reasonPrepare {
					level = slog.LevelDebug
				}
				log.Log(ctx, level, "gate skipped", "gate", s.name, "reason", why)
				continue
			}
		}
		sctx := ctx
		switch s.deadline {
		case deadlineCluster:
			if clusterCtx == nil {
				var cancel context.CancelFunc
				clusterCtx, cancel = context.WithTimeout(ctx, st.settings.Timeout)
				defer cancel()
			}
			sctx = clusterCtx
		case deadlineFresh:
			var cancel context.CancelFunc
			sctx, cancel = context.WithTimeout(ctx, st.settings.Timeout)
			defer cancel()
		}
		start := st.profile.Now()
		err := s.run(sctx, st)
		st.profile.Since(s.name, start)
		if err != nil {
			return Failed(ctx, log, s.name, err)
		}
	}
	return exitcode.OK
}

// Failed logs why step name stopped the start-up and returns the exit code.
func Failed(ctx context.Context, log *slog.Logger, name string, err error) int {
	code := ExitCode(ctx, err)
	if se, ok := entrypoint.Interrupted(ctx); ok {
		log.Warn("stopped before the worker started", "gate", name, "signal", se.Signal.String())
		return code
	}
	if code == exitcode.Config {
		LogConfigError(log, name, err)
	} else {
		log.Error("gate failed", "gate", name, "error", err.Error())
	}
	return code
}

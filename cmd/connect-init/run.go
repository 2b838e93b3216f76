package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/bootstrap"
	"github.com/connect-init/connect-init/entrypoint"
)

// Exit codes of the external contract (DESIGN.md).
const (
	exitOK     = 0
	exitGate   = 1
	exitConfig = 2
)

// subcommands lists every subcommand with its one-line description; help
// prints it and the examples test checks deployment files against it.
var subcommands = []struct{ name, summary string }{
	{"run", "run every gate, take the startup lock, then exec the worker (default)"},
	{"prepare", "run the cluster gates once and exit: for an init task or a Compose dependency"},
	{"doctor", "explain the state of the Kafka cluster and the worker group"},
	{"healthcheck", "exit 0 when the local worker has joined its group and serves requests"},
	{"lock", "lock acquire: wait in the worker for its turn to join (run by the worker's config provider)"},
	{"version", "print the version"},
	{"help", "print this help"},
}

// execFunc performs the exec; tests replace it so run can be called in
// process without replacing the test binary.
var execFunc = func(c *entrypoint.Command) error { return c.Exec() }

// run is the whole program: main only wires the process to it.
func run(ctx context.Context, args, env []string, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "version":
		fmt.Fprintln(stdout, "connect-init", version)
		return exitOK
	case "help", "-h", "--help":
		usage(stdout)
		return exitOK
	case "lock":
		return lockCommand(ctx, args, env, stderr)
	case "run", "prepare", "doctor", "healthcheck":
	default:
		fmt.Fprintf(stderr, "connect-init: unknown command %q\n", cmd)
		usage(stderr)
		return exitConfig
	}

	settings, err := bootstrap.LoadSettings(env)
	if err != nil {
		fmt.Fprintln(stderr, "connect-init:", err)
		return exitConfig
	}
	fs := flag.NewFlagSet("connect-init "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	bindFlags(fs, &settings)
	asJSON := fs.Bool("json", false, "doctor: print one JSON document")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitConfig
	}
	if err := settings.Validate(); err != nil {
		fmt.Fprintln(stderr, "connect-init:", err)
		return exitConfig
	}
	log := newLogger(stderr, settings)
	sarama.Logger = slog.NewLogLogger(log.Handler(), slog.LevelDebug)

	switch cmd {
	case "run":
		return runGates(ctx, fs.Args(), env, settings, log, true)
	case "prepare":
		if len(fs.Args()) > 0 {
			fmt.Fprintf(stderr, "connect-init: prepare takes no command (got %q)\n", fs.Args())
			return exitConfig
		}
		return runGates(ctx, nil, env, settings, log, false)
	case "doctor":
		return doctor(ctx, env, settings, log, stdout, *asJSON)
	case "healthcheck":
		return healthcheck(ctx, env, settings, stdout, stderr)
	}
	return exitConfig
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: connect-init [command] [flags] [-- worker command...]")
	fmt.Fprintln(w, "commands:")
	for _, c := range subcommands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "settings come from CONNECT_INIT_* variables or the matching flags (connect-init run -h); worker settings from CONNECT_* variables and --worker-config")
}

// bindFlags declares one flag per setting, defaulting to the value read
// from the environment, so flags win.
func bindFlags(fs *flag.FlagSet, s *bootstrap.Settings) {
	fs.DurationVar(&s.Timeout, "timeout", s.Timeout, "bound on all gates together (CONNECT_INIT_TIMEOUT)")
	fs.IntVar(&s.ExpectedBrokers, "expected-brokers", s.ExpectedBrokers, "brokers to wait for (CONNECT_INIT_EXPECTED_BROKERS)")
	fs.StringVar(&s.WorkerConfig, "worker-config", s.WorkerConfig, "worker .properties file (CONNECT_INIT_WORKER_CONFIG)")
	fs.BoolVar(&s.Lock, "lock", s.Lock, "take the startup lock (CONNECT_INIT_LOCK)")
	fs.StringVar(&s.LockTopic, "lock-topic", s.LockTopic, "startup lock topic (CONNECT_INIT_LOCK_TOPIC)")
	fs.DurationVar(&s.LockLease, "lock-lease", s.LockLease, "how long a holder may take to get ready (CONNECT_INIT_LOCK_LEASE)")
	fs.IntVar(&s.LockPermits, "lock-permits", s.LockPermits, "workers allowed to start at once (CONNECT_INIT_LOCK_PERMITS)")
	fs.Func("peers", "extra REST peers, comma-separated (CONNECT_INIT_PEERS)", func(v string) error {
		s.Peers = nil
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				s.Peers = append(s.Peers, p)
			}
		}
		return nil
	})
	fs.StringVar(&s.PeerCheck, "peer-check", s.PeerCheck, "fail, warn or off (CONNECT_INIT_PEER_CHECK)")
	fs.BoolVar(&s.Strict, "strict", s.Strict, "treat coordinator warnings as errors (CONNECT_INIT_STRICT)")
	fs.StringVar(&s.LogFormat, "log-format", s.LogFormat, "text or json (CONNECT_INIT_LOG_FORMAT)")
	fs.StringVar(&s.LogLevel, "log-level", s.LogLevel, "debug, info, warn or error (CONNECT_INIT_LOG_LEVEL)")
}

func newLogger(w io.Writer, s bootstrap.Settings) *slog.Logger {
	var level slog.Level
	switch strings.ToLower(s.LogLevel) {
	case "debug":
		level = slog.LevelDebug
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	if s.LogFormat == "json" {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(h).With("component", "connect-init")
}

// exitCode maps an error to the contract's exit codes.
func exitCode(ctx context.Context, err error) int {
	if se, ok := entrypoint.Interrupted(ctx); ok {
		return se.ExitCode()
	}
	var ee *entrypoint.Error
	if bootstrap.AsConfigError(err) || errors.As(err, &ee) {
		return exitConfig
	}
	return exitGate
}

// runGates is run (withExec) and prepare.
func runGates(ctx context.Context, argv, env []string, s bootstrap.Settings, log *slog.Logger, withExec bool) int {
	var command *entrypoint.Command
	if withExec {
		var err error
		if command, err = entrypoint.Resolve(argv, env); err != nil {
			log.Error(err.Error())
			return exitConfig
		}
	}
	cfg, clients, err := loadConfig(env, s)
	if err != nil {
		log.Error("bad configuration: " + err.Error())
		return exitConfig
	}
	defer clients.Close()
	var inWorker *inWorkerPlan // issue 14: the worker waits for its turn itself, after its plugin scan
	if withExec && s.Lock {
		if inWorker, err = planStartupLock(cfg, command, log); err != nil {
			log.Error("bad configuration: " + err.Error())
			return exitConfig
		}
	}

	start := time.Now()
	gctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	log.Info("connect-init starting", "version", version, "group", cfg.GroupID, "bootstrap", strings.Join(cfg.BootstrapServers, ","),
		"expected_brokers", cfg.ExpectedBrokers, "timeout", s.Timeout.String())
	rep, err := bootstrap.Prepare(gctx, cfg, clients, log, bootstrap.SystemClock{})
	if err != nil {
		return failed(ctx, log, err)
	}
	log.Info("cluster ready", "took", time.Since(start).Round(time.Millisecond).String())
	if !withExec {
		return exitOK
	}
	var queued []string
	group := rep.Group // still current without a wait for the lock
	switch {
	case inWorker != nil: // wired just before the exec
	case s.Lock:
		if queued, err = takeStartupLock(ctx, cfg, clients, log); err != nil {
			return failed(ctx, log, err)
		}
		group = nil // the group may have changed while we waited: look again
	default:
		log.Info("startup lock disabled (CONNECT_INIT_LOCK=false)")
	}
	if err := checkPeers(ctx, cfg, clients, group, queued, log); err != nil {
		return failed(ctx, log, err)
	}
	if inWorker != nil {
		if err := inWorker.apply(command); err != nil {
			return failed(ctx, log, err)
		}
	}
	clients.Close()
	log.Info("starting the worker", "command", strings.Join(command.Argv, " "))
	if err := execFunc(command); err != nil {
		log.Error(err.Error())
		return exitConfig
	}
	return exitOK
}

// loadConfig reads the worker settings and builds both clients'
// configurations; every error here is bad configuration (exit 2).
func loadConfig(env []string, s bootstrap.Settings) (*bootstrap.Config, *bootstrap.Clients, error) {
	cfg, err := bootstrap.LoadConfig(env, s)
	if err != nil {
		return nil, nil, err
	}
	clients, err := bootstrap.NewClients(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cfg, clients, nil
}

func failed(ctx context.Context, log *slog.Logger, err error) int {
	code := exitCode(ctx, err)
	if se, ok := entrypoint.Interrupted(ctx); ok {
		log.Warn("stopped before the worker started", "signal", se.Signal.String())
		return code
	}
	if code == exitConfig {
		log.Error("bad configuration: " + err.Error())
	} else {
		log.Error(err.Error())
	}
	return code
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/startup"
	"github.com/connect-init/connect-init/step"
)

// subcommands lists every subcommand with its one-line description; help
// prints it and the examples test checks deployment files against it.
var subcommands = []struct{ name, summary string }{
	{"run", "run every gate, take the startup lock, then exec the worker (default)"},
	{"prepare", "run the cluster gates once and exit: for an init task or a Compose dependency"},
	{"doctor", "explain the state of the Kafka cluster and the worker group"},
	{"config", "print the worker configuration as the worker will see it, with where each value comes from"},
	{"healthcheck", "exit 0 when the local worker has joined its group and serves requests"},
	{"apply", "create, update (and with --prune delete) connectors from a directory of definitions, then wait until they run"},
	{"offsets", "export a connector's offsets to a file, apply them from one, or reset them (Kafka >= 3.6, KIP-875): offsets export|apply|reset --url U --connector N [--file F]"},
	{"repair", "raise the replication factor of __consumer_offsets and Connect's topics online (a single-replica __consumer_offsets); --execute to carry it out"},
	{"lock", "lock acquire: wait in the worker for its turn to join (run by the worker's config provider)"},
	{"version", "print the version"},
	{"help", "print this help"},
}

// run is the whole program: main only wires the process to it.
func (c *cli) run(ctx context.Context, args []string) int {
	env, stderr := c.env, c.stderr
	cmd := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	if code, done := c.runOwnCommand(ctx, cmd, args); done {
		return code
	}

	settings, err := settings.LoadSettings(env)
	if err != nil {
		logConfigError(earlyLogger(stderr, env, args), err)
		return startup.ExitConfig
	}
	fs := flag.NewFlagSet("connect-init "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // a bad flag is one error event, not a page of usage
	bindFlags(fs, &settings)
	var out outputFlags
	fs.BoolVar(&out.asJSON, "json", false, "doctor, config: print one JSON document")
	fs.BoolVar(&out.watch, "watch", false, "doctor: look again every --interval and print only what changed, until Ctrl-C (with --json: one document per change)")
	fs.DurationVar(&out.interval, "interval", 5*time.Second, "doctor --watch: the pause between two looks")
	if code, done := parseCommandFlags(fs, args, env, stderr, cmd); done {
		return code
	}
	settings.Flags = setFlags(fs)
	if err := settings.Validate(); err != nil {
		logConfigError(earlyLogger(stderr, env, args), err)
		return startup.ExitConfig
	}
	log := newLogger(stderr, settings)
	sarama.Logger = slog.NewLogLogger(log.Handler(), slog.LevelDebug)
	return c.runSettingsCommand(ctx, cmd, fs, settings, log, out)
}

// outputFlags are the flags of run's commands that are not settings: how
// doctor and config print.
type outputFlags struct {
	asJSON, watch bool
	interval      time.Duration
}

// runOwnCommand runs the commands that parse their own flags (version,
// help, lock, apply, repair) and refuses an unknown one; done is false for
// the commands run parses the settings flags for.
func (c *cli) runOwnCommand(ctx context.Context, cmd string, args []string) (code int, done bool) {
	stdout, stderr := c.stdout, c.stderr
	switch cmd {
	case "version":
		if len(args) > 0 {
			fmt.Fprintf(stderr, "connect-init: version takes no flags or arguments (got %q); run 'connect-init version'\n", args)
			return startup.ExitConfig, true
		}
		fmt.Fprintln(stdout, "connect-init", version)
		return startup.ExitOK, true
	case "help", "-h", "--help":
		usage(stdout)
		return startup.ExitOK, true
	case "lock":
		return c.lockCommand(ctx, args), true
	case "apply":
		return c.applyCommand(ctx, args), true
	case "repair":
		return c.repairCommand(ctx, args), true
	case "offsets":
		return c.offsetsCommand(ctx, args), true
	case "run", "prepare", "doctor", "healthcheck", "config":
		return 0, false
	default:
		fmt.Fprintf(stderr, "connect-init: unknown command %q; run 'connect-init help' for the commands\n", cmd)
		return startup.ExitConfig, true
	}
}

// runSettingsCommand runs run, prepare, doctor, healthcheck or config once
// their settings and flags are parsed and valid.
func (c *cli) runSettingsCommand(ctx context.Context, cmd string, fs *flag.FlagSet, s settings.Settings, log *slog.Logger, out outputFlags) int {
	switch cmd {
	case "run":
		return c.startup(ctx, fs.Args(), s, log, true)
	case "prepare":
		if len(fs.Args()) > 0 {
			fmt.Fprintf(c.stderr, "connect-init: prepare takes no command (got %q)\n", fs.Args())
			return startup.ExitConfig
		}
		return c.startup(ctx, nil, s, log, false)
	case "doctor":
		if out.watch || flagSet(fs, "interval") {
			return c.doctorWatch(ctx, s, log, out.asJSON, out.watch, out.interval)
		}
		return c.doctor(ctx, s, log, out.asJSON)
	case "healthcheck":
		return c.healthcheck(ctx, s)
	case "config":
		return c.showConfig(s, log, out.asJSON)
	}
	return startup.ExitConfig
}

// startup is run (withExec) and prepare: the start-up pipeline of package
// startup with this process's seams.
func (c *cli) startup(ctx context.Context, argv []string, s settings.Settings, log *slog.Logger, withExec bool) int {
	return startup.Run(ctx, startup.Invocation{Argv: argv, Env: c.env, Settings: s, WithExec: withExec, Log: log,
		Clock: c.clock, Options: c.options, Exec: c.exec, Executable: c.executable, Version: version})
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: connect-init [command] [flags] [-- worker command...]")
	fmt.Fprintln(w, "commands:")
	for _, c := range subcommands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "settings come from CONNECT_INIT_* variables or the matching flags (connect-init run -h); worker settings from CONNECT_* variables and --worker-config")
}

// flagVars maps each flag to the variable it stands for, so that messages
// name what the user typed.
var flagVars = map[string]string{
	"timeout": "CONNECT_INIT_TIMEOUT", "expected-brokers": "CONNECT_INIT_EXPECTED_BROKERS",
	"worker-config": "CONNECT_INIT_WORKER_CONFIG", "lock": "CONNECT_INIT_LOCK", "lock-topic": "CONNECT_INIT_LOCK_TOPIC",
	"lock-lease": "CONNECT_INIT_LOCK_LEASE", "lock-permits": "CONNECT_INIT_LOCK_PERMITS", "peers": "CONNECT_INIT_PEERS",
	"peer-check": "CONNECT_INIT_PEER_CHECK", "strict": "CONNECT_INIT_STRICT", "log-format": "CONNECT_INIT_LOG_FORMAT",
	"log-level": "CONNECT_INIT_LOG_LEVEL", "image": "CONNECT_INIT_IMAGE",
}

// setFlags returns, by variable, the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]string {
	out := map[string]string{}
	fs.Visit(func(f *flag.Flag) {
		if v, ok := flagVars[f.Name]; ok {
			out[v] = "--" + f.Name
		}
	})
	return out
}

// bindFlags declares one flag per setting, defaulting to the value read
// from the environment, so flags win.
func bindFlags(fs *flag.FlagSet, s *settings.Settings) {
	fs.StringVar(&s.Image, "image", s.Image, "image flavour: confluent-dub, confluent-ub, debezium, apache, properties (CONNECT_INIT_IMAGE; default: detected)")
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

// earlyLogger is the logger for errors in the settings themselves: it
// follows CONNECT_INIT_LOG_FORMAT (or --log-format) as far as it can be
// read, so that in JSON mode a settings error is a JSON event too.
func earlyLogger(w io.Writer, env, args []string) *slog.Logger {
	s := settings.Settings{LogFormat: "text", LogLevel: "info"}
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == "CONNECT_INIT_LOG_FORMAT" && strings.TrimSpace(v) == "json" {
			s.LogFormat = "json"
		}
	}
	for i, a := range args {
		if a == "--log-format=json" || a == "-log-format=json" || (a == "--log-format" || a == "-log-format") && i+1 < len(args) && args[i+1] == "json" {
			s.LogFormat = "json"
		}
	}
	return newLogger(w, s)
}

// logConfigError logs a bad setting as one event naming the setting the
// user set, the problem and the fix.
func logConfigError(log *slog.Logger, err error) {
	startup.LogConfigError(log, step.Settings, err)
}

func newLogger(w io.Writer, s settings.Settings) *slog.Logger {
	level, _ := settings.ParseLogLevel(s.LogLevel)
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	if s.LogFormat == "json" {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(h).With("component", "connect-init")
}

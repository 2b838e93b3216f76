package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/connect-init/connect-init/apply"
	"github.com/connect-init/connect-init/buildinfo"
	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/startup"
)

// subcommand is one command of connect-init: a small value with its name,
// its one-line summary and how it runs. Each command builds its own flag
// set from the settings table and shares the bootstrap (bootstrap.go).
type subcommand struct {
	name, summary string
	run           func(c *cli, ctx context.Context, args []string) int
}

// subcommands is every command, in help's order: help prints the
// summaries, run dispatches on the names, and the examples test checks
// deployment files against them.
func subcommands() []subcommand {
	return []subcommand{
		{"run", "run every gate, take the startup lock, then exec the worker (default)",
			func(c *cli, ctx context.Context, args []string) int { return c.startupCommand(ctx, "run", args) }},
		{"prepare", "run the cluster gates once and exit: for an init task or a Compose dependency",
			func(c *cli, ctx context.Context, args []string) int { return c.startupCommand(ctx, "prepare", args) }},
		{"doctor", "explain the state of the Kafka cluster and the worker group", (*cli).doctorCommand},
		{"config", "print the worker configuration as the worker will see it, with where each value comes from",
			func(c *cli, _ context.Context, args []string) int { return c.configCommand(args) }},
		{"healthcheck", "exit 0 when the local worker has joined its group and serves requests", (*cli).healthcheckCommand},
		{"apply", "create, update (and with --prune delete) connectors from a directory of definitions, then wait until they run", (*cli).applyCommand},
		{"offsets", "export a connector's offsets to a file, apply them from one, or reset them (Kafka >= 3.6, KIP-875): offsets export|apply|reset --url U --connector N [--file F]", (*cli).offsetsCommand},
		{"repair", "raise the replication factor of __consumer_offsets and Connect's topics online (a single-replica __consumer_offsets); --execute to carry it out", (*cli).repairCommand},
		{"lock", "lock acquire: wait in the worker for its turn to join (run by the worker's config provider)", (*cli).lockCommand},
		{"version", "print the version",
			func(c *cli, _ context.Context, args []string) int { return c.versionCommand(args) }},
		{"help", "print this help; help COMMAND prints that command's", (*cli).helpCommand},
		{"completion", "print a completion script: completion bash|zsh|fish", (*cli).completionCommand},
	}
}

// run is the whole program: main only wires the process to it. An answer
// that could not be written on stdout fails the command (answer.go).
func (c *cli) run(ctx context.Context, args []string) int {
	out := &answerWriter{w: c.stdout}
	c.stdout = out
	return c.answered(out, c.dispatch(ctx, args))
}

// dispatch runs the command args name. Without a command it is run
// (`connect-init -- CMD`, `connect-init -h`), except `connect-init
// --version`.
func (c *cli) dispatch(ctx context.Context, args []string) int {
	if len(args) > 0 && isHelpFlag(args[0]) {
		usage(c.stdout)
		return exitcode.OK
	}
	cmd := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	} else if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		cmd, args = "version", args[1:]
	}
	for _, sc := range subcommands() {
		if want, stream := wantsJSON(args); sc.name == cmd && jsonCommands[cmd] && want {
			return c.runJSON(ctx, sc, args, stream)
		}
		if sc.name == cmd {
			return sc.run(c, ctx, args)
		}
	}
	return c.usageError(fmt.Sprintf("unknown command %q", cmd), commandFix(cmd))
}

// commandFix is the fix of an unknown command: the command it is a slip
// of (settings.Suggest, the one did-you-mean rule), else the list.
func commandFix(typed string) string {
	var names []string
	for _, sc := range subcommands() {
		names = append(names, sc.name)
	}
	if near, ok := settings.Suggest(typed, names); ok {
		return "did you mean connect-init " + near + "? ('connect-init help' lists the commands)"
	}
	return "run 'connect-init help' for the commands"
}

// subcommandWords are the words after a command that help takes (help
// lock acquire, help offsets export).
var subcommandWords = map[string][]string{"lock": {"acquire"}, "offsets": {"export", "apply", "reset"}}

// isHelpFlag reports whether a is -h or --help.
func isHelpFlag(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

// helpCommand is `connect-init help [COMMAND [SUBCOMMAND]]`: the commands,
// or that command's own -h, on stdout.
func (c *cli) helpCommand(ctx context.Context, args []string) int {
	if len(args) == 0 {
		usage(c.stdout)
		return exitcode.OK
	}
	if (args[0] == "help" || isHelpFlag(args[0])) && len(args) == 1 {
		usage(c.stdout)
		return exitcode.OK
	}
	for _, sc := range subcommands() {
		if sc.name != args[0] || sc.name == "help" {
			continue
		}
		// Only a command with subcommands takes a word more (help lock
		// acquire); anything else is refused as typed, never as the -h
		// help adds.
		if len(args) > 2 || len(args) == 2 && !slices.Contains(subcommandWords[sc.name], args[1]) {
			return c.usageError(fmt.Sprintf("help takes one command (got %q)", strings.Join(args, " ")), "run connect-init help "+sc.name)
		}
		return sc.run(c, ctx, append(append([]string{}, args[1:]...), "-h"))
	}
	return c.usageError(fmt.Sprintf("help: unknown command %q", strings.Join(args, " ")), commandFix(args[0]))
}

// versionCommand is `connect-init version [--json]` (and `connect-init
// --version`): --json takes a value as every command's does
// (--json=true).
func (c *cli) versionCommand(args []string) int {
	fs := flag.NewFlagSet("connect-init version", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Bool("json", false, "print one JSON document")
	problems, help := parseAll(fs, "version", args)
	switch {
	case help:
		fmt.Fprintln(c.stdout, "usage of connect-init version [--json]")
		fmt.Fprintln(c.stdout)
		writeAbout(c.stdout, "version")
		fmt.Fprintln(c.stdout, "flags:\n  --json\n      print one JSON document (docs/json.md)")
		writeExitCodes(c.stdout, "version")
		return exitcode.OK
	case fs.NArg() > 0:
		problems = append(problems, &settings.ConfigError{Setting: commandLine, Problem: fmt.Sprintf("version takes no arguments (got %q)", fs.Args()),
			Fix: "run 'connect-init version' or 'connect-init version --json'"})
	}
	if len(problems) > 0 {
		logConfigError(c.earlyLogger(settings.Read(c.env), nil), problemList(problems))
		return exitcode.Config
	}
	info := buildinfo.Read(version)
	if c.envelope != nil { // --json: the envelope's result (runJSON prints it)
		c.setResult(info)
		return exitcode.OK
	}
	fmt.Fprintln(c.stdout, "connect-init", info)
	return exitcode.OK
}

// startupCommand is run and prepare: the start-up pipeline, with the exec
// (run) or without (prepare). Their settings include
// CONNECT_INIT_CONNECTORS_DIR, checked before anything is touched.
func (c *cli) startupCommand(ctx context.Context, cmd string, args []string) int {
	spec := command{name: settings.Run, usage: "run [flags] [-- worker command...]"}
	if cmd == "prepare" {
		spec = command{name: settings.Prepare, usage: "prepare [flags]"}
	}
	s, fs, code, done, problems := c.bootstrap(spec, args, true)
	if done {
		return code
	}
	problems = c.withWorkerProblems(s, c.withConnectorsDir(s, problems))
	if problems != nil {
		reportProblems(c.earlyLogger(s, args), problems)
		return exitcode.Config
	}
	log := c.logger(s)
	// The worker's settings, every problem at once (the pipeline's
	// settings step reads them again, and reports one error at a time).
	if _, err := c.options.Inspect(c.env, s); len(settings.Each(err)) > 1 {
		reportProblems(log, err)
		return exitcode.Config
	}
	if cmd == "prepare" {
		if len(fs.Args()) > 0 {
			logConfigError(log, &settings.ConfigError{Setting: "command line", Problem: fmt.Sprintf("prepare takes no command (got %q)", fs.Args()), Fix: "see connect-init prepare -h"})
			return exitcode.Config
		}
		return c.startup(ctx, nil, s, log, false)
	}
	return c.startup(ctx, fs.Args(), s, log, true)
}

// withConnectorsDir adds to problems what is wrong with
// CONNECT_INIT_CONNECTORS_DIR: the directory must exist, be readable, and
// every definition in it parse (apply's own reader; nothing is written).
func (c *cli) withConnectorsDir(s settings.Settings, problems error) error {
	if strings.TrimSpace(s.ConnectorsDir) == "" {
		return problems
	}
	for _, p := range settings.Each(problems) {
		var ce *settings.ConfigError
		if errors.As(p, &ce) && ce.Setting == s.Name("CONNECT_INIT_CONNECTORS_DIR") {
			return problems
		}
	}
	if _, _, err := apply.Load(s.ConnectorsDir); err != nil {
		all := settings.Problems(settings.Each(problems))
		for _, fe := range apply.EachFileError(err) { // every bad file, each named
			all = append(all, &fileProblem{FileError: fe,
				fix: "correct it, or point " + s.Name("CONNECT_INIT_CONNECTORS_DIR") + " at a readable directory of connector definitions (*.json, *.properties), or leave it unset"})
		}
		return all
	}
	return problems
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
	for _, c := range subcommands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "settings come from CONNECT_INIT_* variables or the matching flags (connect-init <command> -h lists a command's; connect-init config shows them all); worker settings from CONNECT_* variables and --worker-config")
	fmt.Fprintln(w, "connect-init help <command> or connect-init <command> -h prints what a command does, examples, its flags and exit codes; connect-init --version prints the version")
	fmt.Fprintln(w, "a mistyped command, flag or CONNECT_INIT_* name is answered with the nearest one; connect-init completion bash|zsh|fish completes them")
	fmt.Fprintln(w, "with no command at all, connect-init is connect-init run")
}

// newLogger is the command's logger on stderr; with --json its error
// events also become the document's errors (envelopeHandler).
func (c *cli) newLogger(s settings.Settings) *slog.Logger {
	log := newLogger(c.stderr, s)
	if c.envelope == nil {
		return log
	}
	return slog.New(&envelopeHandler{Handler: log.Handler(), env: c.envelope})
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

package main

import (
	"flag"
	"io"
	"log/slog"
	"strings"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/startup"
)

// command is what the shared bootstrap needs to know of one command: its
// name in the settings table, how -h and errors name it, and the flags it
// has besides its settings'.
type command struct {
	// name is the command as the table names it (settings.Run...).
	name settings.Command
	// usage follows "connect-init " in -h and errors: the command, with
	// its arguments when it has some.
	usage string
	// flags declares the command's own flags (nil: none).
	flags func(fs *flag.FlagSet)
	// hidden are flags other parts of connect-init pass (run's apply
	// child, the in-worker lock's provider), not for people: -h omits
	// them.
	hidden []string
}

// bootstrap is every command's start: read the settings, bind the flags
// the table gives the command and its own, parse args, validate. done means
// the command ends now with code: after -h (exit 0), or after bad input
// (every problem reported, exit 2, nothing touched). problems are returned
// instead of reported when keep is true, for config and doctor --json,
// which print them in their document.
func (c *cli) bootstrap(cmd command, args []string, keep bool) (s settings.Settings, fs *flag.FlagSet, code int, done bool, problems error) {
	env := c.startupEnv(cmd)
	s = settings.Read(env)
	fs = flag.NewFlagSet("connect-init "+string(cmd.name), flag.ContinueOnError)
	fs.SetOutput(io.Discard) // a bad flag is one error event, not a page of usage
	fs.Usage = func() {}
	bindSettingFlags(fs, cmd.name, &s)
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	// Every bad flag and every bad setting, in one list (issue 52).
	flagProblems, help := parseAll(fs, cmdPath(cmd), args)
	if help && c.flagSpy != nil {
		c.flagSpy(fs, cmd)
		return s, fs, exitcode.OK, true, nil
	}
	if help {
		commandHelp(c.stdout, fs, cmd)
		return s, fs, exitcode.OK, true, nil
	}
	problems = mergeProblems(problemList(flagProblems), s.Validate())
	if problems == nil || keep {
		return s, fs, 0, false, problems
	}
	reportProblems(c.earlyLogger(s, args), problems)
	return s, fs, exitcode.Config, true, nil
}

// startupEnv is the environment a command reads its settings from: `lock
// acquire` runs inside the worker, whose CONNECT_* variables include the
// wiring run added.
func (c *cli) startupEnv(cmd command) []string {
	if cmd.name == settings.LockAcquire {
		return startup.WithoutInWorkerWiring(c.env)
	}
	return c.env
}

// logger is the command's logger once the settings are valid; sarama logs
// through it at debug level.
func (c *cli) logger(s settings.Settings) *slog.Logger {
	log := c.newLogger(s)
	setSaramaHandler(log.Handler())
	return log
}

// earlyLogger is the logger for problems in the settings themselves: it
// follows CONNECT_INIT_LOG_FORMAT (or --log-format) as far as it could be
// read, so that in JSON mode a settings error is a JSON event too.
func (c *cli) earlyLogger(s settings.Settings, args []string) *slog.Logger {
	early := settings.Settings{LogFormat: "text", LogLevel: "info"}
	if s.LogFormat == "json" {
		early.LogFormat = "json"
	}
	for i, a := range args {
		if a == "--log-format=json" || a == "-log-format=json" || (a == "--log-format" || a == "-log-format") && i+1 < len(args) && args[i+1] == "json" {
			early.LogFormat = "json"
		}
	}
	return c.newLogger(early)
}

// usageError reports a bad command line as every other bad input: one
// event naming it, with the fix; exit 2.
func (c *cli) usageError(problem, fix string) int {
	logConfigError(c.earlyLogger(settings.Read(c.env), nil), &settings.ConfigError{Setting: "command line", Problem: problem, Fix: fix})
	return exitcode.Config
}

// reportProblems is the one way a bad input reaches the user: one event
// per problem, each naming the setting, the problem and the fix.
func reportProblems(log *slog.Logger, err error) { logConfigError(log, err) }

// bindSettingFlags declares the flags the table gives cmd, each defaulting
// to the value read from the environment, so that a flag wins.
func bindSettingFlags(fs *flag.FlagSet, cmd settings.Command, s *settings.Settings) {
	for _, r := range settings.Table() {
		if r.FlagFor(cmd) {
			fs.Var(&settingFlag{row: r, s: s, cmd: cmd}, r.Flag, plainHelp(r.HelpIn(cmd))+" ("+r.Env+")")
		}
	}
}

// plainHelp is table help without its Markdown.
func plainHelp(s string) string { return strings.ReplaceAll(s, "`", "") }

// settingFlag is the flag.Value of one setting.
type settingFlag struct {
	row settings.Setting
	s   *settings.Settings
	cmd settings.Command
}

func (f *settingFlag) String() string {
	if f == nil || f.s == nil {
		return ""
	}
	return f.row.Value(f.s)
}

func (f *settingFlag) Set(v string) error { return f.s.SetFlag(f.row, v) }

// IsBoolFlag lets --lock and --strict stand without a value.
func (f *settingFlag) IsBoolFlag() bool { return f.row.Type() == "bool" }

// cmdPath is the command as typed: "lock acquire" for the lock's waiter,
// "offsets" for "offsets export|apply|reset --url U ...": the usage's
// leading words, up to the first flag, option or alternative.
func cmdPath(cmd command) string {
	var words []string
	for _, w := range strings.Fields(cmd.usage) {
		if strings.ContainsAny(w, "-[|") {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// settingFlagHelp is a setting flag's -h entry: the flag and its type, the
// help, the variable, the default, and the value the environment set.
func settingFlagHelp(sf *settingFlag, value string) (head, help string) {
	r := sf.row
	head = "  --" + r.Flag
	if t := r.Type(); t != "bool" {
		head += " " + settingPlaceholder(r)
	}
	help = plainHelp(r.HelpIn(sf.cmd)) + " (" + r.Env
	// A command whose help states its own default (offsets: 2m unless
	// set) is not contradicted by the table's.
	if d := r.ShownDefault(); d != "" && !strings.Contains(help, "unless set") && !strings.Contains(help, "by default") {
		help += "; default " + plainHelp(d)
	}
	if sf.s.Given(r.Env) {
		help += "; set to " + value
	}
	return head, help + ")"
}

// problemList is errs as one error (nil when there are none).
func problemList(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return settings.Problems(errs)
}

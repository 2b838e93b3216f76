package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	diag "github.com/connect-init/connect-init/doctor"
	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/metrics"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/startup"
)

// doctorCommand is `connect-init doctor [--json] [--watch [--interval=5s]]`.
// With --json it prints one JSON document whatever happens: the report,
// or, when the settings are bad, the errors (setting, problem, fix).
func (c *cli) doctorCommand(ctx context.Context, args []string) int {
	var out outputFlags
	spec := command{name: settings.Doctor, usage: "doctor [--json] [--watch [--interval=5s] [--metrics-addr=:9465]] [flags]", flags: func(fs *flag.FlagSet) {
		fs.BoolVar(&out.asJSON, "json", false, "print one JSON document (with --watch: one per change, one per line)")
		fs.BoolVar(&out.watch, "watch", false, "look again every --interval and print only what changed, until Ctrl-C")
		fs.DurationVar(&out.interval, "interval", 5*time.Second, "with --watch, the pause between two looks")
		fs.StringVar(&out.metricsAddr, "metrics-addr", "", "with --watch, serve the last look as Prometheus metrics at http://ADDR/metrics (e.g. :9465)")
	}}
	s, fs, code, done, problems := c.bootstrap(spec, args, true)
	if done {
		return code
	}
	if fs.NArg() > 0 {
		problems = mergeProblems(problems, &settings.ConfigError{Setting: "command line", Problem: fmt.Sprintf("doctor takes no arguments (got %q)", fs.Args()), Fix: "put flags before nothing else: see connect-init doctor -h"})
	}
	problems = mergeProblems(problems, checkWatchFlags(fs, out))
	if problems != nil {
		return c.doctorBadSettings(s, args, c.withWorkerProblems(s, problems))
	}
	log := c.logger(s)
	if out.watch || flagSet(fs, "interval") || flagSet(fs, "metrics-addr") {
		return c.doctorWatch(ctx, s, log, out)
	}
	return c.doctor(ctx, s, log, out.asJSON)
}

// checkWatchFlags refuses --interval and --metrics-addr without --watch,
// and an interval below 1s: with the settings' problems, all at once.
func checkWatchFlags(fs *flag.FlagSet, out outputFlags) error {
	var errs []error
	if !out.watch && flagSet(fs, "metrics-addr") {
		errs = append(errs, &settings.ConfigError{Setting: "--metrics-addr", Problem: "is given without --watch", Fix: "add --watch, or drop --metrics-addr"})
	}
	if !out.watch && flagSet(fs, "interval") {
		errs = append(errs, &settings.ConfigError{Setting: "--interval", Problem: "is given without --watch", Fix: "add --watch, or drop --interval"})
	}
	if out.interval < time.Second {
		errs = append(errs, &settings.ConfigError{Setting: "--interval", Problem: fmt.Sprintf("is %s, below 1s", out.interval), Fix: "use e.g. --interval=5s"})
	}
	return problemList(errs)
}

// outputFlags are doctor's flags that are not settings: how it prints.
type outputFlags struct {
	asJSON, watch bool
	interval      time.Duration
	metricsAddr   string
}

// doctorBadSettings reports bad settings, each problem one event on
// stderr (with --json also one of the envelope's errors), and exits 2.
func (c *cli) doctorBadSettings(s settings.Settings, args []string, problems error) int {
	reportProblems(c.earlyLogger(s, args), problems)
	return exitcode.Config
}

// doctor reads the settings like run, takes one look at the cluster and the
// worker group without creating or changing anything, and prints the
// summary and findings (text, or one JSON document). Exit 0 when no finding
// is an error, 1 otherwise, 2 for bad configuration. Progress and the gates'
// own messages go to the log (stderr); the report alone goes to stdout.
func (c *cli) doctor(ctx context.Context, s settings.Settings, log *slog.Logger, asJSON bool) int {
	stdout := c.stdout
	cfg, clients, err := startup.LoadConfig(c.options, c.env, s, log)
	if err != nil {
		return c.doctorBadSettings(s, nil, err)
	}
	defer clients.Close()

	dctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	doc := diag.Run(dctx, cfg, clients, log, diag.Options{}, version)
	// With --json the report is the envelope's result (runJSON prints it).
	if c.envelope != nil {
		c.setResult(doc)
		for _, e := range errorFindings(doc) {
			c.envelope.addError(e)
		}
	} else {
		err = doc.WriteText(stdout)
	}
	if err != nil {
		log.Error("cannot write the report", "error", err.Error())
		return exitcode.Failed
	}
	if se, ok := entrypoint.Interrupted(ctx); ok {
		return se.ExitCode()
	}
	return doc.ExitCode
}

// errorFindings are the report's findings of severity error as the
// envelope's errors.
func errorFindings(doc *diag.Document) []errorEntry {
	var out []errorEntry
	for _, f := range doc.Findings {
		if f.Severity == "error" { // checks.Error
			en := errorEntry{Problem: f.ID + ": " + f.Subject + ": " + f.Summary, Fix: f.Fix}
			if en.Fix == "" {
				en.Fix = fallbackFix
			}
			out = append(out, en)
		}
	}
	return out
}

// doctorWatch is `connect-init doctor --watch [--interval=5s] [--json]`:
// the first look in full, then, every interval, only what changed
// (findings that appear or clear, members joining and leaving, the group's
// state and how often it rebalanced), until SIGINT or SIGTERM; with --json
// one document per change, one per line. Each look is bounded by
// CONNECT_INIT_TIMEOUT and taken with clients of its own (doctor.TakeLook).
// With --metrics-addr it also serves the last look as Prometheus metrics
// (doctor.Metrics); a failed look is a metric and a warning, never an
// exit. It exits 128+signal, 1 when it cannot write, 2 when the metrics
// address cannot be listened on.
func (c *cli) doctorWatch(ctx context.Context, s settings.Settings, log *slog.Logger, out outputFlags) int {
	interval := out.interval // checked with every other problem (checkWatchFlags)
	cfg, clients, err := startup.LoadConfig(c.options, c.env, s, log)
	if err != nil {
		logConfigError(log, err)
		return exitcode.Config
	}
	clients.Close() // never connected: each look opens its own
	var m *diag.Metrics
	if out.metricsAddr != "" {
		reg := metrics.NewRegistry()
		m = diag.NewMetrics(reg, cfg.GroupID)
		addr, err := metrics.Serve(ctx, out.metricsAddr, reg)
		if err != nil {
			logConfigError(log, &settings.ConfigError{Setting: "--metrics-addr", Problem: err.Error(), Fix: "choose a free host:port, e.g. --metrics-addr=:9465"})
			return exitcode.Config
		}
		log.Info("serving the watcher's metrics", "url", "http://"+addr.String()+"/metrics", "interval", interval.String())
	}
	// One record of the group across the looks: the rejoins it measures
	// feed the rebalance-delay rules and the metrics.
	rejoins := diag.NewRejoinTracker()
	// With metrics, one record of the group's generation across the looks:
	// each reads its __consumer_offsets partition from where the last
	// stopped, for the exact connect_init_group_rebalances_total.
	var generations *diag.GenerationTracker
	if m != nil {
		generations = diag.NewGenerationTracker()
	}
	look := func(ctx context.Context) *diag.Document {
		lctx, cancel := context.WithTimeout(ctx, s.Timeout)
		defer cancel()
		// Clients of the look's own: reusing one set would reconnect it
		// on every look and leak the connections of the look before.
		l := diag.TakeLook(lctx, cfg, log, diag.Options{Clock: c.clock, SkipLocalScan: m != nil, Rejoins: rejoins, Generations: generations}, version)
		m.Observe(l)
		if l.Failed != "" && ctx.Err() == nil && m != nil {
			log.Warn("the look failed; connect_init_doctor_look_success is 0", "error", l.Failed, "took", l.Duration.String())
		} else if l.Failed != "" && ctx.Err() == nil {
			log.Warn("the look failed; the next look is at the next interval", "error", l.Failed, "took", l.Duration.String())
		}
		return l.Document
	}
	looked := false
	emit := func(doc *diag.Document, ch *diag.Change) error {
		first := !looked
		looked = true
		switch {
		case c.envelope != nil: // --json: one envelope per change, a line each
			doc.Changes = ch
			return c.streamLine(doc, doc.ExitCode, errorFindings(doc))
		case first:
			return doc.WriteText(c.stdout)
		}
		return ch.WriteText(c.stdout, doc.GeneratedAt)
	}
	if err := diag.Watch(ctx, interval, c.clock, look, emit); err != nil {
		log.Error("cannot write the report", "error", err.Error())
		return exitcode.Failed
	}
	if se, ok := entrypoint.Interrupted(ctx); ok {
		return se.ExitCode()
	}
	return exitcode.OK
}

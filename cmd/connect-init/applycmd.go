package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/connect-init/connect-init/apply"
	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/restclient"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/startup"
	"github.com/connect-init/connect-init/workers"
)

// `connect-init apply` (issue 15): connectors as code. The apply package
// plans, validates, writes and waits; workers finds the REST API of
// a worker of *our* group and proves it is one before anything is written.
// This file only wires flags and settings to them and prints the outcome.

// applyFlags are apply's own flags.
type applyFlags struct {
	dir       string
	prune     bool
	dryRun    bool
	wait      time.Duration
	url       string
	waitLocal bool
	// writeTimeout bounds one write's wait for Connect's answer.
	writeTimeout time.Duration
	// watch keeps the desired state after applying (--watch), looking
	// every watchInterval, restarting with restartUnit's backoff at most
	// maxRestarts times in a row.
	watch       bool
	maxRestarts int
	// allowEmptyPrune, json and detailedExitCode are apply.Options'
	// AllowEmptyPrune, JSON and DetailedExitCode.
	allowEmptyPrune  bool
	json             bool
	detailedExitCode bool
	// metricsAddr, with --watch, is where the watcher's Prometheus
	// metrics are served ("" none).
	metricsAddr string
	// metricsFlag is set when --metrics-addr was given (not only the
	// variable, which run's one-shot apply may see too).
	metricsFlag bool
}

// applyCommand is `connect-init apply [--dir D] [--prune
// [--allow-empty-prune]] [--dry-run [--json] [--detailed-exitcode]]
// [--wait=5m] [--url U] [--wait-local] [--write-timeout=100s] [--watch
// [--watch-interval=30s] [--restart-backoff=1m] [--max-restarts=7]
// [--metrics-addr=host:port]]`; with --watch it runs until a signal ends
// it. Exit 0: all applied and in the desired state; 1: a connector or task
// failed, a write failed, no worker of the group answered, or the wait
// timed out; 2: a bad file (named with its line), a definition Connect's
// validation refused, a prune of a directory that defines nothing, or bad
// flags; 3: a dry run with --detailed-exitcode that would write;
// 128+signal when SIGTERM or SIGINT stopped it. --dry-run with --url,
// and --url where no worker setting is set at all (a CI runner), reach
// only that URL's REST API (applyAt).
func (c *cli) applyCommand(ctx context.Context, args []string) int {
	s, af, code, done := c.applyArgs(args)
	if done {
		return code
	}
	log, out, flush := c.applyOutput(s, af)
	defer flush()

	// The files first: a typo costs no connection.
	conns, ok := loadDefinitions(log, s, af)
	if !ok {
		return exitcode.Config
	}
	if af.dryRun && af.url != "" {
		return c.applyAt(ctx, s, af, conns, out, log, nil)
	}
	// The metrics' address is taken before anything is written: one in
	// use is bad input, not a line in the log after the apply.
	var metrics *apply.Metrics
	if af.watch && af.metricsAddr != "" {
		metrics = apply.NewMetrics()
		addr, err := apply.ServeMetrics(ctx, af.metricsAddr, metrics)
		if err != nil {
			logConfigError(log, &settings.ConfigError{Setting: s.Name("CONNECT_INIT_APPLY_METRICS_ADDR"), Problem: err.Error(), Fix: "choose a free host:port"})
			return exitcode.Config
		}
		log.Info("watch: serving metrics", "url", "http://"+addr.String()+"/metrics")
	}
	// --url with no worker settings at all (a CI runner): the REST API
	// alone. Worker settings, even incomplete, mean the full proof.
	if af.url != "" {
		if c.options.NoWorkerSettings(c.env, s) {
			return c.applyAt(ctx, s, af, conns, out, log, metrics)
		}
	}
	cfg, clients, err := startup.LoadConfig(c.options, c.env, s, log)
	if err != nil {
		logConfigError(log, err)
		return exitcode.Config
	}
	defer clients.Close()
	metrics.SetGroupID(cfg.GroupID) // the label group_id: two clusters' connectors of one name stay apart
	if err := c.connectBrokers(ctx, cfg, clients, log); err != nil {
		if code, stopped := applyInterrupted(ctx, log); stopped {
			return code
		}
		fix := "start the brokers, or check the worker settings' bootstrap.servers and security"
		if af.url != "" {
			fix += "; from a runner that reaches only the REST API, run apply --url without the worker settings (CONNECT_*): it then writes through the REST API alone, without the apply lease"
		}
		log.Error("cannot reach the Kafka cluster", "gate", "apply", "error", err.Error(), "fix", fix)
		return exitcode.Failed
	}
	if cfg.RESTClientTLS, err = s.RESTTLS(cfg.RESTClientTLS); err != nil {
		logConfigError(log, err)
		return exitcode.Config
	}
	f := &workers.Finder{Config: cfg, Clients: clients, Log: log, Clock: c.clock, Local: af.waitLocal}
	if err := explicitWorkers(f, s, af, cfg.AdvertisedURL); err != nil {
		logConfigError(log, err)
		return exitcode.Config
	}
	if af.waitLocal {
		var cancel context.CancelFunc
		ctx, cancel = workers.WhileWorkerLives(ctx, c.clock)
		defer cancel()
	}
	api, err := f.Find(ctx)
	if code, stopped := applyInterrupted(ctx, log); stopped {
		return code
	}
	var refused *restclient.AuthError
	if errors.As(err, &refused) {
		log.Error("a worker's REST API refused connect-init", "gate", "apply", "group", cfg.GroupID, "error", err.Error(), "fix", refused.Fix())
		return exitcode.Failed
	}
	if err != nil {
		log.Error("no worker of the group to apply to", "gate", "apply", "group", cfg.GroupID, "error", err.Error(),
			"fix", "start the group's workers, or give --url of one of them")
		return exitcode.Failed
	}
	api.REST.WriteTimeout = af.writeTimeout
	log.Info("applying connector definitions", "gate", "apply", "url", api.Target.Raw, "dir", af.dir, "definitions", len(conns), "prune", af.prune, "dry_run", af.dryRun)
	opts := applyOptions(c, af, f, out, log)
	return c.applyThenWatch(ctx, api, conns, s, af, f, opts, metrics, log)
}

// applyThenWatch is apply's last part, for either way to the workers:
// apply once, stop on a signal, log the result, and with --watch (unless
// the definitions were refused as bad input) watch until a signal.
func (c *cli) applyThenWatch(ctx context.Context, api *apply.API, conns []apply.Connector, s settings.Settings, af applyFlags, f *workers.Finder, opts apply.Options, metrics *apply.Metrics, log *slog.Logger) int {
	res := apply.Run(ctx, api, conns, opts)
	if code, stopped := applyInterrupted(ctx, log); stopped {
		return code
	}
	logApplyResult(log, res, af.dryRun)
	if !af.watch || res.Code == exitcode.Config {
		return res.Code
	}
	c.watch(ctx, api, conns, s, af, f, opts, metrics)
	code, _ := applyInterrupted(ctx, log)
	return code
}

// watch keeps the desired state until a signal ends it. The child of run
// (--wait-local) watches only while its worker leads the group, one
// active watcher per Connect cluster, and ends with its worker.
func (c *cli) watch(ctx context.Context, api *apply.API, conns []apply.Connector, s settings.Settings, af applyFlags, f *workers.Finder, opts apply.Options, metrics *apply.Metrics) {
	wo := apply.WatchOptions{Options: opts, Interval: s.ApplyWatchInterval, RestartUnit: s.ApplyRestartBackoff, MaxRestarts: af.maxRestarts, Dir: af.dir, Metrics: metrics}
	if af.waitLocal {
		wo.Active = f.Leads
	}
	apply.Watch(ctx, api, conns, wo)
	if workers.WorkerExited(ctx) {
		opts.Log.Info("watch: the worker exited (this process was reparented); the watcher ends", "gate", "apply")
	}
}

// applyOptions wires apply to the cluster: the lease of the group's
// applies, and the group's other members to move to when the worker stops
// answering (none for a worker pinned by --url or, with --wait-local, this
// container's own).
func applyOptions(c *cli, af applyFlags, f *workers.Finder, out io.Writer, log *slog.Logger) apply.Options {
	lease := &workers.Lease{Config: f.Config, Clients: f.Clients, Log: log, Clock: c.clock,
		Identity: workers.Identity(af.waitLocal, f.Config.AdvertisedURL)}
	o := apply.Options{Out: out, Log: log, Clock: c.clock, Prune: af.prune, DryRun: af.dryRun, Wait: af.wait, Source: af.dir,
		Lease: lease.Take, AllowEmptyPrune: af.allowEmptyPrune, JSON: af.json, DetailedExitCode: af.detailedExitCode}
	if af.url == "" && !af.waitLocal {
		o.Workers = f
	}
	return o
}

// applyArgs reads the settings and apply's flags; done means exit with code
// now (bad input, or --help). --dir, --watch-interval and --restart-backoff
// are settings (the table's CONNECT_INIT_CONNECTORS_DIR,
// CONNECT_INIT_APPLY_WATCH_INTERVAL, CONNECT_INIT_APPLY_RESTART_BACKOFF);
// the rest are apply's own.
func (c *cli) applyArgs(args []string) (s settings.Settings, af applyFlags, code int, done bool) {
	spec := command{name: settings.Apply, usage: "apply [--dir D] [--prune] [--dry-run] [--watch] [flags]", hidden: []string{"wait-local"}, flags: func(fs *flag.FlagSet) {
		fs.BoolVar(&af.prune, "prune", false, "delete the cluster's connectors that no file defines")
		fs.BoolVar(&af.dryRun, "dry-run", false, "print the plan and Connect's validation, write nothing")
		fs.BoolVar(&af.allowEmptyPrune, "allow-empty-prune", false, "with --prune, allow a directory that defines no connector (deletes every connector)")
		fs.BoolVar(&af.json, "json", false, "with --dry-run, print the plan as one JSON document (key names, never values)")
		fs.BoolVar(&af.detailedExitCode, "detailed-exitcode", false, "with --dry-run, exit 3 when applying would write anything (0 nothing, 1 error, 2 bad input)")
		fs.DurationVar(&af.wait, "wait", 5*time.Minute, "how long to wait for every connector and task to be in the desired state (0: do not wait)")
		fs.StringVar(&af.url, "url", "", "the REST URL of a worker of the group (default: CONNECT_INIT_PEERS, else the group's members)")
		fs.BoolVar(&af.waitLocal, "wait-local", false, "wait for this container's worker to be ready, then apply once (started by run)")
		fs.BoolVar(&af.watch, "watch", false, "after applying, keep the desired state: restart FAILED connectors and tasks, put back what drifted (until SIGTERM)")
		countVar(fs, &af.maxRestarts, "max-restarts", apply.DefaultMaxRestarts, "with --watch, restarts in a row before a connector is left FAILED")
		fs.DurationVar(&af.writeTimeout, "write-timeout", restclient.DefaultWriteTimeout, "how long one write waits for Connect's answer before it is read back (Connect waits up to 90s for a write it forwards to the leader)")
	}}
	s, fs, code, done, problems := c.bootstrap(spec, args, true)
	if done {
		return s, af, code, true
	}
	af.dir = s.ConnectorsDir
	// Until a plan is made, a --json document says none was.
	c.setResult(apply.PlanDoc{Target: restclient.RedactUserinfo(af.url), Source: af.dir})
	af.metricsAddr, af.metricsFlag = s.ApplyMetricsAddr, s.Flags["CONNECT_INIT_APPLY_METRICS_ADDR"] != ""
	if err := mergeProblems(problems, checkApplyFlags(fs, af)); err != nil {
		log := c.earlyLogger(s, args)
		reportProblems(log, err)
		// The files' problems too, when the directory can be read: every
		// problem of the call at once (issue 52).
		if fi, serr := os.Stat(af.dir); af.dir != "" && serr == nil && fi.IsDir() {
			loadDefinitions(log, s, af)
		}
		return s, af, exitcode.Config, true
	}
	return s, af, 0, false
}

// checkApplyFlags refuses flags that contradict each other or the command.
func checkApplyFlags(fs *flag.FlagSet, af applyFlags) error {
	switch {
	case fs.NArg() > 0:
		return &settings.ConfigError{Setting: "command line", Problem: fmt.Sprintf("apply takes no arguments (got %q)", fs.Args()), Fix: "name the directory with --dir"}
	case strings.TrimSpace(af.dir) == "":
		return &settings.ConfigError{Setting: "CONNECT_INIT_CONNECTORS_DIR", Problem: "is not set, and --dir is not given", Fix: "point --dir or CONNECT_INIT_CONNECTORS_DIR at a directory of connector definitions (*.json, *.properties)"}
	case af.wait < 0:
		return &settings.ConfigError{Setting: "--wait", Problem: fmt.Sprintf("is negative (%s)", af.wait), Fix: "use a duration such as 5m, or 0 not to wait"}
	case af.writeTimeout <= 0:
		return &settings.ConfigError{Setting: "--write-timeout", Problem: fmt.Sprintf("is not positive (%s)", af.writeTimeout), Fix: "use a duration above 90s, Connect's own bound for a forwarded write"}
	case af.watch && af.dryRun:
		return &settings.ConfigError{Setting: "--watch", Problem: "is given with --dry-run, which writes nothing", Fix: "use one of them"}
	case af.watch && af.maxRestarts <= 0:
		return &settings.ConfigError{Setting: "--max-restarts", Problem: fmt.Sprintf("must be positive (got %d)", af.maxRestarts), Fix: "e.g. --max-restarts=7"}
	case af.json && !af.dryRun:
		return &settings.ConfigError{Setting: "--json", Problem: "is given without --dry-run", Fix: "add --dry-run: the JSON document is the plan of a dry run"}
	case af.detailedExitCode && !af.dryRun:
		return &settings.ConfigError{Setting: "--detailed-exitcode", Problem: "is given without --dry-run", Fix: "add --dry-run: exit 3 says a dry run found changes pending"}
	case af.metricsFlag && !af.watch:
		return &settings.ConfigError{Setting: "--metrics-addr", Problem: "is given without --watch", Fix: "add --watch: the metrics are the watcher's"}
	case af.allowEmptyPrune && !af.prune:
		return &settings.ConfigError{Setting: "--allow-empty-prune", Problem: "is given without --prune", Fix: "add --prune, or leave --allow-empty-prune out"}
	case af.waitLocal && af.url != "":
		return &settings.ConfigError{Setting: "--url", Problem: "is given with --wait-local, which applies to this container's worker", Fix: "use one of them"}
	case af.url != "":
		return checkURLFlag(af.url)
	}
	return nil
}

// checkURLFlag refuses a bad --url with restclient's refusal (the URL
// quoted without any credentials) and its fix; nil when it parses.
func checkURLFlag(raw string) error {
	_, err := restclient.Parse(raw)
	var ue *restclient.URLError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue):
		return &settings.ConfigError{Setting: "--url", Problem: ue.Refusal(), Fix: ue.Fix}
	}
	return &settings.ConfigError{Setting: "--url", Problem: "cannot be read as a URL", Fix: "give a worker's REST URL, e.g. http://connect-1:8083"}
}

// applyOutput is the log and the output of the plan: stdout and stderr, or
// for the child of run (--wait-local) the worker's stderr, every line
// marked. flush writes a last unterminated line.
func (c *cli) applyOutput(s settings.Settings, af applyFlags) (log *slog.Logger, out io.Writer, flush func()) {
	log = c.logger(s)
	if c.envelope != nil {
		// The plan becomes the envelope's result (runJSON).
		return log, &c.envelope.planOut, func() {}
	}
	if !af.waitLocal {
		return log, c.stdout, func() {}
	}
	pw := &prefixWriter{w: c.stderr, prefix: "connect-init apply: "}
	return log.With("process", "apply"), pw, pw.flush
}

// loadDefinitions reads the directory; false means a bad file (logged).
func loadDefinitions(log *slog.Logger, s settings.Settings, af applyFlags) ([]apply.Connector, bool) {
	conns, skipped, err := apply.Load(af.dir)
	if err != nil {
		// Every bad file, one line each: a directory is fixed in one round.
		bad := apply.EachFileError(err)
		for _, fe := range bad {
			log.Error("bad connector definition", "gate", "apply", "file", fe.File, "line", fe.Line, "problem", fe.Problem, "error", fe.Error(),
				"fix", "correct it (read from the directory "+s.Name("CONNECT_INIT_CONNECTORS_DIR")+" names); nothing was written")
		}
		if len(bad) > 1 {
			log.Error("bad connector definitions; nothing was written", "gate", "apply", "bad_files", len(bad), "dir", af.dir)
		}
		return nil, false
	}
	suspects := apply.Suspects(af.dir, skipped)
	suspect := map[string]bool{}
	for _, sp := range suspects {
		suspect[sp.Name] = true
		log.Warn("a file of the connectors directory looks like a definition but is not read", "file", sp.Name, "why", sp.Why)
	}
	for _, f := range skipped {
		if !suspect[f] {
			log.Info("ignored a file of the connectors directory", "file", f, "why", "only *.json and *.properties are definitions")
		}
	}
	if err := apply.CheckPrune(af.dir, conns, suspects, af.prune, af.allowEmptyPrune); err != nil {
		log.Error("refusing to prune", "gate", "apply", "error", err.Error(), "setting", s.Name("CONNECT_INIT_CONNECTORS_DIR"), "fix", err.(*apply.PruneError).Fix())
		return nil, false
	}
	if len(conns) == 0 {
		log.Warn("no connector definitions", "dir", af.dir)
	}
	return conns, true
}

// explicitWorkers sets the finder's candidates from --url or
// CONNECT_INIT_PEERS (not for the child of run, which applies to its own
// worker).
func explicitWorkers(f *workers.Finder, s settings.Settings, af applyFlags, advertised string) error {
	if af.url != "" {
		f.Explicit, f.ExplicitFrom = []string{af.url}, "--url"
		return nil
	}
	if len(s.Peers) == 0 || af.waitLocal {
		return nil
	}
	for _, p := range s.Peers {
		u, err := workers.PeerURL(p, advertised)
		if err != nil {
			return &settings.ConfigError{Setting: s.Name("CONNECT_INIT_PEERS"), Problem: fmt.Sprintf("entry %q %v", restclient.RedactUserinfo(p), err), Fix: "list peers as host or host:port, comma-separated"}
		}
		f.Explicit = append(f.Explicit, u)
	}
	f.ExplicitFrom = s.Name("CONNECT_INIT_PEERS")
	return nil
}

// applyInterrupted logs and returns 128+signal when a signal ended ctx.
func applyInterrupted(ctx context.Context, log *slog.Logger) (int, bool) {
	se, ok := entrypoint.Interrupted(ctx)
	if !ok {
		return 0, false
	}
	log.Warn("apply interrupted", "gate", "apply", "signal", se.Signal.String())
	return se.ExitCode(), true
}

// logApplyResult is the last log line of an apply; a dry run's says what
// it would do (would_create=...), never what it did.
func logApplyResult(log *slog.Logger, res apply.Result, dryRun bool) {
	if res.Unreachable != "" {
		log.Error("apply failed", "gate", "apply", "unreachable", res.Unreachable, "exit", res.Code,
			"fix", "start the worker again, or apply through another worker of the group (without --url apply moves on by itself)")
		return
	}
	if dryRun && (res.Code == exitcode.ChangesPending || res.Code == exitcode.OK) {
		// Words that cannot be read as done: a dry run wrote nothing.
		log.Info("apply planned (dry run, nothing written)", "gate", "apply", "would_create", res.Plan.Count(apply.Create),
			"would_update", res.Plan.Count(apply.Update), "unchanged", res.Plan.Count(apply.Unchanged),
			"would_delete", res.Plan.Count(apply.Delete), "changes_pending", res.Plan.Writes(), "exit", res.Code)
		return
	}
	if res.Code != exitcode.OK {
		fix := "see the connectors' and tasks' status above, correct the cause and apply again"
		problem := "apply failed"
		if res.Code == exitcode.Config {
			problem = "apply refused, nothing was written"
			fix = "correct the definitions as the errors above say (each with its file and line), then apply again"
		}
		if len(res.Failed) > 0 {
			problem += ": " + strings.Join(res.Failed, ", ")
		}
		log.Error("apply failed", "gate", "apply", "failed", strings.Join(res.Failed, ","), "exit", res.Code, "problem", problem, "fix", fix)
		return
	}
	log.Info("apply done", "gate", "apply", "created", res.Plan.Count(apply.Create), "updated", res.Plan.Count(apply.Update),
		"unchanged", res.Plan.Count(apply.Unchanged), "deleted", res.Plan.Count(apply.Delete))
}

// prefixWriter marks every line the in-run child prints.
type prefixWriter struct {
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := strings.IndexByte(string(p.buf), '\n')
		if i < 0 {
			return len(b), nil
		}
		if _, err := io.WriteString(p.w, p.prefix+string(p.buf[:i+1])); err != nil {
			return len(b), err
		}
		p.buf = p.buf[i+1:]
	}
}

func (p *prefixWriter) flush() {
	if len(p.buf) > 0 {
		_, _ = io.WriteString(p.w, p.prefix+string(p.buf)+"\n")
		p.buf = nil
	}
}

// applyAt is apply through the REST API of --url alone: a dry run
// (always), or an apply from a runner that has no worker settings (a CI
// runner, which often reaches no broker). It proves only that the URL
// answers GET / as Connect does and is ready (apply.Direct): the proof that
// the worker is a member of our group and the apply lease both need the
// brokers, and the log and the plan's output say they are not there. The
// safety that needs no broker is kept: the files' checks and the refused
// empty prune (before this), Connect's validation before any write, the
// wait for the connectors to run. The REST client's TLS is the
// CONNECT_INIT_REST_CA_FILE/CERT_FILE/KEY_FILE files on top of the worker
// settings' when those can be read.
func (c *cli) applyAt(ctx context.Context, s settings.Settings, af applyFlags, conns []apply.Connector, out io.Writer, log *slog.Logger, metrics *apply.Metrics) int {
	rest := &restclient.Client{Timeout: 10 * time.Second, Clock: c.clock, Auth: s.RESTAuth(), WriteTimeout: af.writeTimeout}
	if cfg, err := c.options.Load(c.env, s); err == nil {
		rest.TLS = cfg.RESTClientTLS
	} else {
		log.Debug("apply through --url: the worker settings are not used", "gate", "apply", "error", err.Error())
	}
	var err error
	if rest.TLS, err = s.RESTTLS(rest.TLS); err != nil {
		logConfigError(log, err)
		return exitcode.Config
	}
	// --timeout (CONNECT_INIT_TIMEOUT) bounds finding the worker and
	// proving it Connect, as it bounds the finder's search without --url.
	findCtx, cancel := context.WithTimeout(ctx, s.Timeout)
	api, version, err := apply.Direct(findCtx, rest, af.url)
	timedOut := findCtx.Err() == context.DeadlineExceeded
	cancel()
	if code, stopped := applyInterrupted(ctx, log); stopped {
		return code
	}
	if err != nil && timedOut {
		log.Error("the worker's REST API did not answer in time", "gate", "apply", "url", af.url, "setting", s.Name("CONNECT_INIT_TIMEOUT"),
			"timeout", s.Timeout.String(), "error", err.Error(),
			"fix", "check that --url is a running Connect worker that answers, or give it longer with "+s.Name("CONNECT_INIT_TIMEOUT"))
		return exitcode.Failed
	}
	if err != nil {
		fix := "give --url of a running Connect worker (or the reverse proxy in front of it, with its path prefix)"
		var refused *restclient.AuthError
		if errors.As(err, &refused) {
			fix = refused.Fix()
		} else if strings.Contains(err.Error(), "certificate") {
			fix = "trust the worker's CA with --cacert (CONNECT_INIT_REST_CA_FILE), and give a client certificate with --cert and --key if it asks for one"
		}
		log.Error("cannot reach the worker's REST API", "gate", "apply", "url", af.url, "setting", "--url", "error", err.Error(), "fix", fix)
		return exitcode.Failed
	}
	api.Clock = c.clock
	opts := apply.Options{Out: out, Log: log, Clock: c.clock, Prune: af.prune, DryRun: af.dryRun, Wait: af.wait, Source: af.dir,
		AllowEmptyPrune: af.allowEmptyPrune, JSON: af.json, DetailedExitCode: af.detailedExitCode}
	if af.dryRun {
		log.Info("dry run through the REST API only: the worker is not proven a member of the group (that needs the brokers); nothing is written",
			"gate", "apply", "url", api.Target.Raw, "version", version, "dir", af.dir, "definitions", len(conns), "prune", af.prune)
	} else {
		opts.NoLease = "apply --url without worker settings reaches only the REST API, and the lease lives on the brokers (connect-init's lock topic)"
		opts.Unproven = "the worker is not proven a member of the group (that needs the brokers)"
		log.Warn("applying through the REST API only: the worker is not proven a member of the group and the apply lease is not taken (both need the brokers)",
			"gate", "apply", "url", api.Target.Raw, "version", version, "dir", af.dir, "definitions", len(conns), "prune", af.prune,
			"fix", "to have both, run apply with the worker settings (CONNECT_*) where the brokers are reachable")
	}
	return c.applyThenWatch(ctx, api, conns, s, af, nil, opts, metrics, log) // no finder: --url is never --wait-local
}

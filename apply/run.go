package apply

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/restclient"
)

// Defaults of Options.
const (
	DefaultPoll   = time.Second
	DefaultSettle = 3 * time.Second
	// TasklessSettle is how long a connector RUNNING without tasks must
	// stay so before it counts: a connector whose task configs could not
	// be written (its leader died) gets them from the herder's retries,
	// which back off from 250 ms up to a minute; seen on real workers 6 s
	// after the group settled. 30 s covers the first seven retries, and
	// costs that much only to a connector that makes no tasks.
	TasklessSettle = 30 * time.Second
	// DefaultTraceLines is how much of a failed task's trace is shown.
	DefaultTraceLines = 6
	// DefaultUnreachable is how long a pinned worker (no Workers to move
	// to) may leave every status read unanswered before apply says it is
	// unreachable: longer than a GC pause or one slow read, far shorter
	// than a wait worth the name.
	DefaultUnreachable = 20 * time.Second
	// DefaultWriteBudget bounds the writes' repeats (and the wait's, if
	// shorter).
	DefaultWriteBudget = 2 * time.Minute
)

// Workers are the other live members of the worker group, for an apply
// whose worker stops answering or leaves the group. The command gives
// workers' Finder; nil pins apply to its one worker (--url).
type Workers interface {
	// Another returns a worker of the group, proven ours and ready, other
	// than not; an error when there is none at the moment.
	Another(ctx context.Context, not restclient.Target) (restclient.Target, error)
	// Member reports whether t is a live member of the group now.
	Member(ctx context.Context, t restclient.Target) (bool, error)
	// Members are the workers the next apply may plan from.
	Members(ctx context.Context) ([]restclient.Target, error)
	// Running are the worker ids (host:port, as Connect's status names
	// them) of the group's members, true for those alive now: a status
	// that says RUNNING on any other worker is stale (Connect keeps the
	// last word of a dead worker until its work is reassigned), and a
	// member that is false is dead but not yet out of the group.
	Running(ctx context.Context) (map[string]bool, error)
}

// Options steer Run.
type Options struct {
	// Out receives the plan and the results (stdout for a person, the log
	// stream in the in-run child).
	Out io.Writer
	Log *slog.Logger
	// Clock paces the wait and bounds the writes' repeats; nil is the
	// system clock.
	Clock clock.Clock
	// Prune deletes the cluster's connectors no file defines.
	Prune bool
	// AllowEmptyPrune lets Prune run with no definition at all, deleting
	// every connector (--allow-empty-prune); without it such a Run is
	// refused (a *PruneError, exit 2) before anything is read.
	AllowEmptyPrune bool
	// JSON prints a dry run's plan as one JSON document (PlanDoc) and
	// nothing else on Out.
	JSON bool
	// DetailedExitCode makes a dry run that finds writes to make exit
	// exitcode.ChangesPending instead of exitcode.OK.
	DetailedExitCode bool
	// DryRun stops after the plan and the validation.
	DryRun bool
	// Wait bounds the wait for the desired states, and the repeats of
	// the writes (at most DefaultWriteBudget); 0 does not wait.
	Wait time.Duration
	// Poll is the pause between two status reads (DefaultPoll).
	Poll time.Duration
	// Settle is how long a connector's verdict must hold, seen by
	// successful status reads from one live member and no failed read
	// between them, before it counts (DefaultSettle): right after a
	// config update the status may still show the old tasks RUNNING, and
	// a task that failed under the old config shows FAILED until the
	// herder restarts it.
	Settle time.Duration
	// Unreachable is how long the status reads of a pinned worker may all
	// fail before apply stops and names the worker (DefaultUnreachable).
	Unreachable time.Duration
	// TraceLines is how many lines of a failed task's trace to print.
	TraceLines int
	// Source names where the definitions come from, for the plan's header.
	Source string
	// Workers, when set, are where apply moves when its worker stops
	// answering, and the membership check of the final verdict.
	Workers Workers
	// Lease, when set, is taken once the plan shows writes and before any
	// (so that concurrent applies of one cluster write each change once):
	// it returns when this apply may write, and a release to call once
	// the writes are made. hold is how long this apply may keep it. Run
	// plans again after taking it: another apply may have written
	// meanwhile.
	Lease func(ctx context.Context, hold time.Duration) (release func(), err error)
	// NoLease, when Lease is nil, says why this apply writes without the
	// lease (an apply through the REST API alone reaches no broker, and
	// the lease lives on one): the plan's output and the log say so
	// before the first write, since a concurrent apply may then write the
	// same change again.
	NoLease string
	// Unproven, when set, says why the worker is not proven to belong to
	// the cluster the definitions are for (an apply through the REST API
	// alone: no Kafka cluster id, no group membership checked). Then a
	// prune deletes only in a cluster that already holds at least one of
	// the directory's connectors: a typo in the URL, which reaches another
	// Connect cluster, must not delete that cluster's connectors
	// (AllowEmptyPrune, which asks to delete every connector, aside).
	Unproven string
}

// Result is what Run did.
type Result struct {
	Code int
	Plan Plan
	// Failed names the connectors that failed, were refused or timed out.
	Failed []string
	// Unreachable is the URL of the worker that stopped answering before a
	// verdict could be read: the connectors' state is then unknown, and
	// none is named failed.
	Unreachable string
}

// runner is one Run.
type runner struct {
	api     *API
	desired []Connector
	o       Options
	out     *printer
	red     *Redactor
	clk     clock.Clock
	// made are the connectors this process created: no evidence that the
	// cluster is the directory's (unprovenPrune), since it made them.
	made map[string]bool
}

// Run is the whole apply against one worker: read the cluster, plan,
// validate (before anything is written), print, take the lease and plan
// again, write, wait.
func Run(ctx context.Context, api *API, desired []Connector, o Options) Result {
	o.defaults()
	if o.Unproven == "" {
		o.Unproven = api.unproven
	}
	r := &runner{api: api, desired: desired, o: o, out: &printer{w: o.Out}, red: NewRedactor(), clk: clock.Or(o.Clock)}
	if o.JSON {
		r.out = &printer{w: io.Discard}
	}
	if err := CheckPrune(o.Source, desired, nil, o.Prune, o.AllowEmptyPrune); err != nil {
		r.out.f("%v\n", err)
		o.Log.Error("refusing to prune", "error", err.Error())
		return Result{Code: exitcode.Config}
	}
	listing, plan, res, done := r.prepare(ctx)
	if done {
		return res
	}
	if !plan.Writes() {
		return r.unchanged(ctx, plan, listing)
	}
	listing, plan, res, done = r.writeAll(ctx, plan)
	switch {
	case done:
		return res
	case listing != nil:
		return r.unchanged(ctx, plan, listing)
	case o.Wait <= 0:
		return Result{Code: exitcode.OK, Plan: plan}
	}
	return r.wait(ctx, plan)
}

// writeAll makes the plan's writes under the lease (when there is one):
// it takes the lease, plans again (another apply may have written
// meanwhile), writes, and releases it. The lease covers the writes only,
// not the wait: the plan made under it reads configs the leader has
// already written, and a holder that dies keeps the others waiting for its
// hold lease, so that must stay short. A listing is returned when the new
// plan writes nothing; done means Run ends with res.
func (r *runner) writeAll(ctx context.Context, plan Plan) (*Listing, Plan, Result, bool) {
	if r.o.Lease != nil {
		release, err := r.o.Lease(ctx, r.hold())
		if err != nil {
			r.out.f("cannot take the apply lease: %v\n", err)
			return nil, plan, Result{Code: exitcode.Failed, Plan: plan}, true
		}
		defer release()
		listing, again, res, done := r.replan(ctx, plan)
		if done || !again.Writes() {
			return listing, again, res, done
		}
		plan = again
	} else if r.o.NoLease != "" {
		r.out.f("writing without the apply lease: %s\n", r.o.NoLease)
		r.o.Log.Warn("writing without the apply lease", "gate", "apply", "why", r.o.NoLease,
			"risk", "an apply of the same cluster at the same moment may write the same change again")
	}
	if res, ok := r.write(ctx, plan); !ok {
		return nil, plan, res, true
	}
	if r.o.Lease != nil {
		r.visible(ctx)
	}
	return nil, plan, Result{}, false
}

// prepare reads the cluster, plans, validates and prints the plan; done
// means Run ends with res (an error, refused definitions, a dry run).
func (r *runner) prepare(ctx context.Context) (*Listing, Plan, Result, bool) {
	listing, err := r.api.List(ctx)
	if err != nil {
		r.out.f("cannot read the cluster's connectors: %v\n", err)
		r.planJSON(Plan{}, nil, err)
		return nil, Plan{}, Result{Code: exitcode.Failed}, true
	}
	plan := Compute(r.desired, listing.Current, r.o.Prune)
	// The dry run runs the guard too, and refuses as the apply would: a
	// plan that promises a prune the apply refuses is a lie (issue 48).
	if err := r.unprovenPrune(plan); err != nil {
		printPlan(r.out, plan, r.red, r.api.Target.Raw, r.o.Source)
		r.out.f("\n%v; nothing was written\n", err)
		r.planJSON(plan, nil, err)
		r.o.Log.Error("refusing to prune; nothing was written", "gate", "apply", "error", err.Error(),
			"fix", "check that --url reaches the Connect cluster this directory is for; then run apply with the worker settings (CONNECT_*) where the brokers are reachable, which prove the cluster, or once without --prune if the cluster is new")
		return nil, plan, Result{Code: exitcode.Config, Plan: plan}, true
	}
	if !r.o.Prune && len(plan.Kept) > 0 && r.pruneRefusal(plan, len(plan.Kept)) != nil {
		plan.KeptRefusal = "the cluster holds none of the directory's connectors and the worker is not proven ours"
	}
	r.learn(listing)
	// Validation first: nothing is written unless every new or changed
	// definition passes.
	invalid := map[string][]FieldError{}
	for _, s := range plan.Steps {
		if !s.WritesConfig() {
			continue
		}
		v, err := r.api.Validate(ctx, s.Desired.Config)
		if err != nil {
			r.out.f("cannot validate %s (%s): %s\n", s.Name, s.File, r.red.Scrub(err.Error()))
			r.planJSON(plan, nil, fmt.Errorf("cannot validate %s (%s): %w", s.Name, s.File, err))
			return nil, plan, Result{Code: exitcode.Failed, Plan: plan, Failed: []string{s.Name}}, true
		}
		for _, k := range v.Passwords {
			r.red.MarkPassword(k)
		}
		if len(v.Errors) > 0 {
			invalid[s.Name] = v.Errors
		}
	}
	r.learn(listing)
	for _, s := range plan.Steps {
		if s.Kind != Create || s.Desired.Offsets == nil {
			continue
		}
		if why := r.api.OffsetsSupported(ctx); why != "" {
			invalid[s.Name] = append(invalid[s.Name], FieldError{Key: "offsets", Messages: []string{"cannot be set: " + why}})
		}
	}
	printPlan(r.out, plan, r.red, r.api.Target.Raw, r.o.Source)
	if len(invalid) > 0 {
		r.planJSON(plan, invalid, nil)
		return nil, plan, r.refused(plan, invalid), true
	}
	if r.o.DryRun {
		r.out.f("\ndry run: nothing was written\n")
		r.planJSON(plan, nil, nil)
		code := exitcode.OK
		if r.o.DetailedExitCode && plan.Writes() {
			code = exitcode.ChangesPending
		}
		return nil, plan, Result{Code: code, Plan: plan}, true
	}
	return listing, plan, Result{}, false
}

// unprovenPrune refuses, for a worker not proven ours (Options.Unproven),
// a plan that deletes while the cluster holds none of the directory's
// connectors (those this process created do not count): nothing then
// shows it is the cluster the files are for.
func (r *runner) unprovenPrune(plan Plan) error {
	if !r.o.Prune {
		return nil
	}
	return r.pruneRefusal(plan, plan.Count(Delete))
}

// pruneRefusal is unprovenPrune's rule for a prune that would delete n
// connectors: the plan's deletes, or, for a plan without --prune, the
// connectors it keeps (whether --prune would delete them).
func (r *runner) pruneRefusal(plan Plan, n int) error {
	if r.o.Unproven == "" || r.o.AllowEmptyPrune || n == 0 {
		return nil
	}
	for _, s := range plan.Steps {
		if (s.Kind == Update || s.Kind == Unchanged) && !r.made[s.Name] {
			return nil // the cluster held it before this process wrote
		}
	}
	return fmt.Errorf("refusing to prune through %s: %s, and the cluster holds none of the %d connectors the directory defines, so nothing shows it is the cluster these files are for (a typo in the URL?): its %d other connectors are not deleted",
		r.api.Target.Raw, r.o.Unproven, len(r.desired), n)
}

// learn teaches the redactor every value of the cluster's and the files'
// configs (again after validation has marked PASSWORD keys).
func (r *runner) learn(l *Listing) {
	for _, c := range l.Current {
		r.red.Learn(c.Config)
	}
	for _, d := range r.desired {
		r.red.Learn(d.Config)
	}
}

// refused prints Connect's validation errors per field with file and line.
func (r *runner) refused(plan Plan, invalid map[string][]FieldError) Result {
	var failed []string
	for _, s := range plan.Steps {
		errs, bad := invalid[s.Name]
		if !bad {
			continue
		}
		failed = append(failed, s.Name)
		r.out.f("\n%s: Connect's validation refused the definition (%s):\n", s.Name, s.File)
		for _, fe := range errs {
			for _, m := range fe.Messages {
				r.out.f("  %s: %s: %s\n", s.Desired.Where(fe.Key), fe.Key, r.red.Scrub(m))
			}
		}
	}
	r.out.f("\nnothing was written: fix the definitions above and run apply again\n")
	return Result{Code: exitcode.Config, Plan: plan, Failed: failed}
}

// replan reads the cluster again once the lease is ours and prints what
// changed since the first plan: another apply may have written meanwhile.
// Definitions were validated before; a step that writes now but did not
// before has a config the cluster ran a moment ago.
func (r *runner) replan(ctx context.Context, first Plan) (*Listing, Plan, Result, bool) {
	listing, err := r.api.List(ctx)
	if err != nil {
		r.out.f("cannot read the cluster's connectors again after taking the apply lease: %v\n", err)
		return nil, first, Result{Code: exitcode.Failed, Plan: first}, true
	}
	r.learn(listing)
	plan := Compute(r.desired, listing.Current, r.o.Prune)
	before := map[string]Kind{}
	for _, s := range first.Steps {
		before[s.Name] = s.Kind
	}
	var moved []string
	for _, s := range plan.Steps {
		if k, ok := before[s.Name]; !ok || k != s.Kind {
			moved = append(moved, fmt.Sprintf("%s %s -> %s", s.Name, orNone(k), s.Kind))
		}
	}
	if len(moved) > 0 || len(plan.Steps) != len(first.Steps) {
		r.out.f("planned again after taking the apply lease (the cluster changed meanwhile): %s\n", strings.Join(moved, ", "))
		r.out.f("plan: %d to create, %d to update, %d unchanged, %d to delete\n",
			plan.Count(Create), plan.Count(Update), plan.Count(Unchanged), plan.Count(Delete))
	}
	return listing, plan, Result{}, false
}

func orNone(k Kind) string {
	if k == "" {
		return "none"
	}
	return string(k)
}

// unchanged ends an apply whose plan writes nothing: the status read with
// the plan is fresh evidence (nothing was written after it), so when it
// shows every connector in the desired state the verdict is given at
// once, without the hold that guards against the stale status right after
// a write. Otherwise the wait decides, as after a write.
func (r *runner) unchanged(ctx context.Context, plan Plan, l *Listing) Result {
	r.out.f("nothing to write: the cluster matches the definitions\n")
	if r.o.Wait <= 0 {
		return Result{Code: exitcode.OK, Plan: plan}
	}
	verdicts := map[string][2]string{}
	for _, s := range plan.Steps {
		_, present := l.Current[s.Name]
		v, why := judge(s.Expect, l.Status[s.Name], present)
		if v != verdictOK {
			return r.wait(ctx, plan)
		}
		verdicts[s.Name] = [2]string{v, why}
	}
	get := func(n string) (string, string) { return verdicts[n][0], verdicts[n][1] }
	report(plan, get, l, r.o, r.out, r.red, true, 0)
	return Result{Code: exitcode.OK, Plan: plan}
}

// writeBudget is how long the writes may repeat: the apply's wait, at
// most DefaultWriteBudget (a rebalance that refuses writes for longer is
// not one to wait out).
func (r *runner) writeBudget() time.Duration {
	if r.o.Wait > 0 {
		return min(r.o.Wait, DefaultWriteBudget)
	}
	return DefaultWriteBudget
}

// hold is how long this apply may keep the lease: its writes and half a
// minute to spare; a holder that dies keeps the others waiting that long
// at most.
func (r *runner) hold() time.Duration { return r.writeBudget() + 30*time.Second }

func (o *Options) defaults() {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if o.Unreachable <= 0 {
		o.Unreachable = DefaultUnreachable
	}
	if o.TraceLines <= 0 {
		o.TraceLines = DefaultTraceLines
	}
}

// printer writes to the output, ignoring errors: the exit code tells.
type printer struct{ w io.Writer }

func (p *printer) f(format string, args ...any) { fmt.Fprintf(p.w, format, args...) }

// printPlan prints the plan with every secret value hidden.
func printPlan(out *printer, plan Plan, red *Redactor, target, source string) {
	out.f("plan for %s", target)
	if source != "" {
		out.f(" from %s", source)
	}
	out.f(":\n")
	for _, s := range plan.Steps {
		switch s.Kind {
		case Create:
			out.f("  + create     %s (%s)\n", s.Name, s.File)
			for _, c := range s.Changes {
				out.f("        %s = %s\n", c.Key, red.Value(c.Key, c.New))
			}
			if s.Desired.Offsets != nil {
				out.f("        offsets: %d partitions, set before it first runs\n", len(s.Desired.Offsets.Offsets))
			}
		case Update:
			out.f("  ~ update     %s (%s)\n", s.Name, s.File)
			for _, c := range s.Changes {
				switch c.Op {
				case Added:
					out.f("        + %s = %s\n", c.Key, red.Value(c.Key, c.New))
				case Changed:
					out.f("        ~ %s: %s -> %s\n", c.Key, red.Value(c.Key, c.Old), red.Value(c.Key, c.New))
				case Removed:
					out.f("        - %s (was %s)\n", c.Key, red.Value(c.Key, c.Old))
				}
			}
		case Unchanged:
			out.f("  = unchanged  %s (%s)\n", s.Name, s.File)
		case Delete:
			out.f("  - delete     %s\n", s.Name)
		}
		if s.StateCall != "" {
			out.f("        state: %s (then wait for %s)\n", s.StateCall, s.Expect)
		}
		if (s.Kind == Update || s.Kind == Unchanged) && s.Desired.Offsets != nil {
			out.f("        offsets: not applied, the connector exists (they are set at creation; connect-init offsets apply sets them now)\n")
		}
	}
	switch {
	case len(plan.Kept) > 0 && plan.KeptRefusal != "":
		out.f("  not in the directory, kept (--prune would refuse to delete them: %s): %s\n", plan.KeptRefusal, strings.Join(plan.Kept, ", "))
	case len(plan.Kept) > 0:
		out.f("  not in the directory, kept (--prune deletes them): %s\n", strings.Join(plan.Kept, ", "))
	}
	out.f("plan: %d to create, %d to update, %d unchanged, %d to delete\n",
		plan.Count(Create), plan.Count(Update), plan.Count(Unchanged), plan.Count(Delete))
}

// Verdicts of the wait.
const (
	verdictPending = "pending"
	verdictOK      = "ok"
	verdictFailed  = "failed"
)

// judge compares a connector's status with the state expected.
func judge(expect string, st *Status, present bool) (verdict, why string) {
	if expect == "" { // deleted
		if present {
			return verdictPending, "still listed"
		}
		return verdictOK, "deleted"
	}
	if st == nil {
		return verdictPending, "no status yet"
	}
	if st.Connector.State == "FAILED" {
		return verdictFailed, "connector FAILED"
	}
	var failedTasks, good []string
	for _, t := range st.Tasks {
		if t.State == "FAILED" {
			failedTasks = append(failedTasks, fmt.Sprint(t.ID))
		}
		if t.State == expect {
			good = append(good, fmt.Sprint(t.ID))
		}
	}
	if len(failedTasks) > 0 {
		return verdictFailed, "task " + strings.Join(failedTasks, ", ") + " FAILED"
	}
	summary := fmt.Sprintf("connector %s, %d/%d tasks %s", st.Connector.State, len(good), len(st.Tasks), expect)
	if expect == "STOPPED" {
		summary = "connector " + st.Connector.State
	}
	if st.Connector.State == expect && (expect == "STOPPED" || len(good) == len(st.Tasks)) {
		return verdictOK, summary
	}
	return verdictPending, summary
}

// report prints each connector's outcome (a failed task with the first
// lines of its trace) and returns those not in the desired state.
func report(plan Plan, get func(string) (string, string), l *Listing, o Options, out *printer, red *Redactor, settled bool, took time.Duration) []string {
	var failed []string
	out.f("\n")
	for _, s := range plan.Steps {
		v, why := get(s.Name)
		switch v {
		case verdictOK:
			out.f("%s: ok: %s\n", s.Name, why)
			continue
		case verdictFailed:
			out.f("%s: FAILED: %s\n", s.Name, why)
		default:
			out.f("%s: not %s after %s: %s\n", s.Name, orDeleted(s.Expect), o.Wait, why)
		}
		failed = append(failed, s.Name)
		if l == nil {
			continue
		}
		st := l.Status[s.Name]
		if st == nil {
			continue
		}
		if st.Connector.State == "FAILED" {
			out.f("  connector on %s:\n%s", st.Connector.WorkerID, traceHead(red.Scrub(st.Connector.Trace), o.TraceLines))
		}
		for _, t := range st.Tasks {
			if t.State == "FAILED" {
				out.f("  task %d on %s:\n%s", t.ID, t.WorkerID, traceHead(red.Scrub(t.Trace), o.TraceLines))
			}
		}
	}
	if len(failed) == 0 {
		out.f("all %d connectors in the desired state after %s\n", len(plan.Steps), took.Round(100*time.Millisecond))
	} else if !settled {
		out.f("%d of %d connectors not in the desired state within --wait=%s\n", len(failed), len(plan.Steps), o.Wait)
	} else {
		out.f("%d of %d connectors failed\n", len(failed), len(plan.Steps))
	}
	return failed
}

func orDeleted(expect string) string {
	if expect == "" {
		return "deleted"
	}
	return expect
}

// traceHead is the first n lines of a Java stack trace, indented.
func traceHead(trace string, n int) string {
	if strings.TrimSpace(trace) == "" {
		return "    (no trace)\n"
	}
	lines := strings.Split(strings.TrimRight(trace, "\n"), "\n")
	more := 0
	if len(lines) > n {
		more = len(lines) - n
		lines = lines[:n]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("    " + strings.TrimRight(l, "\r") + "\n")
	}
	if more > 0 {
		fmt.Fprintf(&b, "    ... %d more lines\n", more)
	}
	return b.String()
}

package apply

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
)

// Exit codes of `connect-init apply`.
const (
	// ExitOK: everything applied, and every connector of the directory
	// and its tasks are in the desired state.
	ExitOK = 0
	// ExitFailed: a connector or task failed, a write failed, or the wait
	// timed out.
	ExitFailed = 1
	// ExitBadDefinition: a file is bad, or Connect's validation refused a
	// definition; nothing was written.
	ExitBadDefinition = 2
)

// Defaults of Options.
const (
	DefaultPoll   = time.Second
	DefaultSettle = 3 * time.Second
	// DefaultTraceLines is how much of a failed task's trace is shown.
	DefaultTraceLines = 6
)

// Options steer Run.
type Options struct {
	// Out receives the plan and the results (stdout for a person, the log
	// stream in the in-run child).
	Out io.Writer
	Log *slog.Logger
	// Clock paces the wait; nil is the system clock.
	Clock clock.Clock
	// Prune deletes the cluster's connectors no file defines.
	Prune bool
	// DryRun stops after the plan and the validation.
	DryRun bool
	// Wait bounds the wait for the desired states; 0 does not wait.
	Wait time.Duration
	// Poll is the pause between two status reads (DefaultPoll).
	Poll time.Duration
	// Settle is how long a connector's verdict must hold before it
	// counts (DefaultSettle): right after a config update the status may
	// still show the old tasks RUNNING, and a task that failed under the
	// old config shows FAILED until the herder restarts it.
	Settle time.Duration
	// TraceLines is how many lines of a failed task's trace to print.
	TraceLines int
	// Source names where the definitions come from, for the plan's header.
	Source string
}

// Result is what Run did.
type Result struct {
	Code int
	Plan Plan
	// Failed names the connectors that failed, were refused or timed out.
	Failed []string
}

// Run is the whole apply against one worker: read the cluster, plan,
// validate (before anything is written), print, write, wait.
func Run(ctx context.Context, api *API, desired []Connector, o Options) Result {
	o.defaults()
	out := &printer{w: o.Out}
	listing, err := api.List(ctx)
	if err != nil {
		out.f("cannot read the cluster's connectors: %v\n", err)
		return Result{Code: ExitFailed}
	}
	plan := Compute(desired, listing.Current, o.Prune)
	red := NewRedactor()
	for _, c := range listing.Current {
		red.Learn(c.Config)
	}
	for _, d := range desired {
		red.Learn(d.Config)
	}

	// Validation first: nothing is written unless every new or changed
	// definition passes.
	invalid := map[string][]FieldError{}
	for _, s := range plan.Steps {
		if !s.WritesConfig() {
			continue
		}
		v, err := api.Validate(ctx, s.Desired.Config)
		if err != nil {
			out.f("cannot validate %s (%s): %s\n", s.Name, s.File, red.Scrub(err.Error()))
			return Result{Code: ExitFailed, Plan: plan, Failed: []string{s.Name}}
		}
		for _, k := range v.Passwords {
			red.MarkPassword(k)
		}
		if len(v.Errors) > 0 {
			invalid[s.Name] = v.Errors
		}
	}
	for _, c := range listing.Current {
		red.Learn(c.Config)
	}
	for _, d := range desired {
		red.Learn(d.Config)
	}
	printPlan(out, plan, red, api.Target.Raw, o.Source)
	if len(invalid) > 0 {
		var failed []string
		for _, s := range plan.Steps {
			errs, bad := invalid[s.Name]
			if !bad {
				continue
			}
			failed = append(failed, s.Name)
			out.f("\n%s: Connect's validation refused the definition (%s):\n", s.Name, s.File)
			for _, fe := range errs {
				for _, m := range fe.Messages {
					out.f("  %s: %s: %s\n", s.Desired.Where(fe.Key), fe.Key, red.Scrub(m))
				}
			}
		}
		out.f("\nnothing was written: fix the definitions above and run apply again\n")
		return Result{Code: ExitBadDefinition, Plan: plan, Failed: failed}
	}
	if o.DryRun {
		out.f("\ndry run: nothing was written\n")
		return Result{Code: ExitOK, Plan: plan}
	}

	changed := false
	for _, s := range plan.Steps {
		var err error
		switch {
		case s.Kind == Delete:
			if err = api.Delete(ctx, s.Name); err == nil {
				out.f("deleted %s\n", s.Name)
			}
		case s.WritesConfig():
			if err = api.PutConfig(ctx, s.Name, s.Desired.Config); err == nil {
				out.f("%s %s\n", map[Kind]string{Create: "created", Update: "updated"}[s.Kind], s.Name)
			}
		}
		if err == nil && s.StateCall != "" {
			if err = api.SetState(ctx, s.Name, s.StateCall); err == nil {
				out.f("%s: %s requested\n", s.Name, s.StateCall)
			}
		}
		if err != nil {
			out.f("%s: %s\n", s.Name, red.Scrub(err.Error()))
			return Result{Code: ExitFailed, Plan: plan, Failed: []string{s.Name}}
		}
		changed = changed || s.Kind != Unchanged
	}
	if !changed {
		out.f("nothing to write: the cluster matches the definitions\n")
	}
	if o.Wait <= 0 {
		return Result{Code: ExitOK, Plan: plan}
	}
	failed := wait(ctx, api, plan, o, out, red)
	if len(failed) > 0 {
		return Result{Code: ExitFailed, Plan: plan, Failed: failed}
	}
	return Result{Code: ExitOK, Plan: plan}
}

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
	}
	if len(plan.Kept) > 0 {
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

// wait polls the cluster's status until every step's verdict has held for
// Settle, or Wait passes; it prints the outcome and returns the connectors
// that failed or never got there.
func wait(ctx context.Context, api *API, plan Plan, o Options, out *printer, red *Redactor) []string {
	clk := clock.Or(o.Clock)
	start := clk.Now()
	deadline := start.Add(o.Wait)
	type seen struct {
		verdict, why string
		since        time.Time
	}
	state := map[string]*seen{}
	var last *Listing
	lastLog := start
	for {
		now := clk.Now()
		l, err := api.List(ctx)
		if err != nil {
			o.Log.Warn("cannot read the connectors' status; retrying", "error", red.Scrub(err.Error()))
		} else {
			last = l
			for _, s := range plan.Steps {
				_, present := l.Current[s.Name]
				v, why := judge(s.Expect, l.Status[s.Name], present)
				if p := state[s.Name]; p == nil || p.verdict != v {
					state[s.Name] = &seen{verdict: v, why: why, since: now}
				} else {
					p.why = why
				}
			}
		}
		settled := last != nil
		for _, s := range plan.Steps {
			p := state[s.Name]
			if p == nil || p.verdict == verdictPending || now.Sub(p.since) < o.Settle {
				settled = false
			}
		}
		timedOut := !now.Before(deadline)
		if settled || timedOut || ctx.Err() != nil {
			get := func(n string) (string, string) {
				if p := state[n]; p != nil {
					return p.verdict, p.why
				}
				return verdictPending, "no answer from the worker"
			}
			return report(plan, get, last, o, out, red, settled, clk.Now().Sub(start))
		}
		if now.Sub(lastLog) >= 5*time.Second {
			lastLog = now
			var pending []string
			for _, s := range plan.Steps {
				if p := state[s.Name]; p == nil || p.verdict == verdictPending {
					pending = append(pending, s.Name)
				}
			}
			o.Log.Info("waiting for the connectors", "pending", strings.Join(pending, ","), "waited", now.Sub(start).Round(time.Second).String(), "wait", o.Wait.String())
		}
		select {
		case <-ctx.Done():
		case <-clk.After(o.Poll):
		}
	}
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

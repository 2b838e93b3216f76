package apply

import (
	"context"
	"strings"
	"time"
)

// seen is one connector's verdict and the time of the first successful
// status read, in the current unbroken run of them, that showed it.
type seen struct {
	verdict, why string
	since        time.Time
}

// waiter is the state of one wait: the evidence of the current run of
// successful reads, the last good listing, and when a read last succeeded.
type waiter struct {
	*runner
	plan     Plan
	start    time.Time
	deadline time.Time
	evidence map[string]*seen
	last     *Listing
	lastGood time.Time
	lastErr  error
	lastLog  time.Time
}

// wait polls the cluster's status until every step's verdict has held for
// Settle, or Wait passes; it prints the outcome. No verdict rests on
// anything but fresh evidence: only successful reads taken after the last
// write count, a failed read throws away what the reads before it showed
// (the state may have changed unseen), and the verdict needs reads that
// span the hold from a worker that is still a live member of the group.
// When the worker stops answering, the wait moves to another member
// (Workers); a pinned worker that answers no read for Unreachable, or a
// wait that ends with no worker answering, ends the apply naming the
// worker, never a connector, whose state is then unknown.
func (r *runner) wait(ctx context.Context, plan Plan) Result {
	now := r.clk.Now()
	w := &waiter{runner: r, plan: plan, start: now, deadline: now.Add(r.o.Wait), evidence: map[string]*seen{}, lastGood: now, lastLog: now}
	for {
		now := r.clk.Now()
		l, err := r.api.List(ctx)
		if err != nil {
			w.failed(ctx, err)
		} else if w.observe(l, now) && w.member(ctx) {
			return w.verdict(true)
		}
		switch {
		case w.lastErr != nil && (r.o.Workers == nil && now.Sub(w.lastGood) >= r.o.Unreachable || !now.Before(w.deadline)):
			return w.unreachable(now)
		case !now.Before(w.deadline) || ctx.Err() != nil:
			return w.verdict(false)
		}
		w.progress(now)
		select {
		case <-ctx.Done():
		case <-r.clk.After(r.o.Poll):
		}
	}
}

// failed handles a failed read: the evidence is void, and the wait moves
// to another worker of the group if there is one.
func (w *waiter) failed(ctx context.Context, err error) {
	w.lastErr = err
	clear(w.evidence)
	w.o.Log.Warn("cannot read the connectors' status", "url", w.api.Target.Raw, "error", w.red.Scrub(err.Error()))
	w.moveOn(ctx, err)
}

// observe folds a successful read taken at now into the evidence and
// reports whether every verdict has held for Settle.
func (w *waiter) observe(l *Listing, now time.Time) bool {
	w.lastErr, w.lastGood, w.last = nil, now, l
	for _, s := range w.plan.Steps {
		_, present := l.Current[s.Name]
		v, why := judge(s.Expect, l.Status[s.Name], present)
		if p := w.evidence[s.Name]; p == nil || p.verdict != v {
			w.evidence[s.Name] = &seen{verdict: v, why: why, since: now}
		} else {
			p.why = why
		}
	}
	for _, s := range w.plan.Steps {
		p := w.evidence[s.Name]
		if p.verdict == verdictPending || now.Sub(p.since) < w.o.Settle {
			return false
		}
	}
	return true
}

// member confirms, before a verdict, that the worker whose reads it rests
// on is still a live member of the group; when it is not, the evidence is
// void and the wait moves on. Without Workers (a pinned --url, which may
// be a load balancer) the proof of the start stands.
func (w *waiter) member(ctx context.Context) bool {
	if w.o.Workers == nil {
		return true
	}
	ok, err := w.o.Workers.Member(ctx, w.api.Target)
	if err != nil {
		w.o.Log.Info("cannot confirm that the worker is still a member of the group; reading again", "url", w.api.Target.Raw, "error", err.Error())
		return false
	}
	if !ok {
		w.o.Log.Warn("the worker is no longer a member of the group; its status does not count", "url", w.api.Target.Raw)
		clear(w.evidence)
		w.moveOn(ctx, errNotMember)
	}
	return ok
}

// errNotMember is why a worker that left the group is left.
var errNotMember = notMemberError{}

type notMemberError struct{}

func (notMemberError) Error() string { return "it is no longer a member of the group" }

// verdict prints each connector's outcome from the evidence.
func (w *waiter) verdict(settled bool) Result {
	get := func(n string) (string, string) {
		if p := w.evidence[n]; p != nil {
			return p.verdict, p.why
		}
		return verdictPending, "no fresh status from the worker"
	}
	failed := report(w.plan, get, w.last, w.o, w.out, w.red, settled, w.clk.Now().Sub(w.start))
	if len(failed) > 0 {
		return Result{Code: ExitFailed, Plan: w.plan, Failed: failed}
	}
	return Result{Code: ExitOK, Plan: w.plan}
}

// unreachable ends a wait whose worker stopped answering: it names the
// worker and the error, and says the connectors' state is unknown.
func (w *waiter) unreachable(now time.Time) Result {
	url := w.api.Target.Raw
	w.out.f("\nthe worker at %s is unreachable: %s (no status read answered for %s)\n", url, w.red.Scrub(shortErr(w.lastErr)), now.Sub(w.lastGood).Round(time.Second))
	var names []string
	for _, s := range w.plan.Steps {
		names = append(names, s.Name)
	}
	w.out.f("the state of %d connectors is unknown (%s): no fresh status could be read\n", len(names), strings.Join(names, ", "))
	return Result{Code: ExitFailed, Plan: w.plan, Unreachable: url}
}

// progress logs the pending connectors every 5 s.
func (w *waiter) progress(now time.Time) {
	if now.Sub(w.lastLog) < 5*time.Second {
		return
	}
	w.lastLog = now
	var pending []string
	for _, s := range w.plan.Steps {
		if p := w.evidence[s.Name]; p == nil || p.verdict == verdictPending {
			pending = append(pending, s.Name)
		}
	}
	w.o.Log.Info("waiting for the connectors", "pending", strings.Join(pending, ","), "waited", now.Sub(w.start).Round(time.Second).String(), "wait", w.o.Wait.String())
}

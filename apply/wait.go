package apply

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/connect-init/connect-init/exitcode"
)

// seen is one connector's verdict and the time of the first successful
// status read, in the current unbroken run of them, that showed it.
type seen struct {
	verdict, why string
	// taskless marks a RUNNING connector without tasks, whose verdict
	// must hold for TasklessSettle.
	taskless bool
	since    time.Time
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
	// live are the worker ids of the group's live members, as last asked
	// (nil: not asked yet, or no Workers).
	live map[string]bool
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
		} else {
			w.recheckLive(ctx, l)
			if w.observe(l, now) && w.member(ctx) && w.onLiveWorkers(ctx, now) {
				return w.verdict(true)
			}
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
		if off := offLive(l.Status[s.Name], w.live); v == verdictOK && off != "" {
			v, why = verdictPending, off
		}
		taskless := taskless(l.Status[s.Name])
		if p := w.evidence[s.Name]; p == nil || p.verdict != v || p.taskless != taskless {
			w.evidence[s.Name] = &seen{verdict: v, why: why, taskless: taskless, since: now}
		} else {
			p.why = why
		}
	}
	for _, s := range w.plan.Steps {
		p := w.evidence[s.Name]
		hold := w.o.Settle
		if p.taskless {
			hold = max(hold, TasklessSettle)
		}
		if p.verdict == verdictPending || now.Sub(p.since) < hold {
			return false
		}
	}
	return true
}

// taskless reports a connector RUNNING without tasks: its tasks may be
// on their way (TasklessSettle).
func taskless(st *Status) bool {
	return st != nil && st.Connector.State == "RUNNING" && len(st.Tasks) == 0
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

// onLiveWorkers checks, before a verdict, that every connector and task
// the verdict rests on runs on a live member of the group: when its worker
// died, Connect's status keeps saying RUNNING on it (and no tasks, for a
// connector whose worker died before it made them) until the group
// reassigns its work. Such a connector is pending again, with the reason,
// and its hold starts over.
func (w *waiter) onLiveWorkers(ctx context.Context, now time.Time) bool {
	if w.o.Workers == nil {
		return true
	}
	live, err := w.o.Workers.Running(ctx)
	if err != nil {
		w.o.Log.Info("cannot tell which workers of the group are alive; reading again", "error", err.Error())
		return false
	}
	w.live = live
	ok := true
	for _, s := range w.plan.Steps {
		if why := offLive(w.last.Status[s.Name], live); why != "" {
			w.evidence[s.Name] = &seen{verdict: verdictPending, why: why, since: now}
			ok = false
		}
	}
	return ok
}

// recheckLive asks again which workers are alive when a status names one
// that was not: it may have come back, or the set may be older than the
// status.
func (w *waiter) recheckLive(ctx context.Context, l *Listing) {
	if w.live == nil {
		return
	}
	for _, s := range w.plan.Steps {
		if offLive(l.Status[s.Name], w.live) != "" {
			if live, err := w.o.Workers.Running(ctx); err == nil {
				w.live = live
			}
			return
		}
	}
}

// offLive names a connector's or task's worker that is not alive, or ""
// (also when live is unknown).
func offLive(st *Status, live map[string]bool) string {
	if st == nil || live == nil {
		return ""
	}
	if id := st.Connector.WorkerID; id != "" && !live[id] {
		return fmt.Sprintf("connector %s on %s, which is not a live member of the group (its status is that worker's last word)", st.Connector.State, id)
	}
	if dead := deadMember(live); st.Connector.State == "RUNNING" && len(st.Tasks) == 0 && dead != "" {
		return fmt.Sprintf("connector RUNNING without tasks while member %s is dead but still in the group: its tasks wait for the group to settle (a new leader writes their configs)", dead)
	}
	for _, t := range st.Tasks {
		if t.WorkerID != "" && !live[t.WorkerID] {
			return fmt.Sprintf("task %d %s on %s, which is not a live member of the group", t.ID, t.State, t.WorkerID)
		}
	}
	return ""
}

// deadMember names a member of the group that is not alive ("" when all
// are): until its session ends the group does not rebalance, and if it
// was the leader no task configs are written.
func deadMember(live map[string]bool) string {
	var dead []string
	for id, alive := range live {
		if !alive {
			dead = append(dead, id)
		}
	}
	sort.Strings(dead)
	return strings.Join(dead, ", ")
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
		return Result{Code: exitcode.Failed, Plan: w.plan, Failed: failed}
	}
	return Result{Code: exitcode.OK, Plan: w.plan}
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
	return Result{Code: exitcode.Failed, Plan: w.plan, Unreachable: url}
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

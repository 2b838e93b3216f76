package apply

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/restclient"
)

// Defaults of WatchOptions.
const (
	DefaultWatchInterval = 30 * time.Second
	// DefaultRestartUnit is the unit of the restart backoff: Strimzi's
	// auto-restart counts it in minutes too.
	DefaultRestartUnit = time.Minute
	// DefaultMaxRestarts is how many restarts in a row a connector gets
	// before the watcher leaves it FAILED for a person to look at.
	DefaultMaxRestarts = 7
)

// WatchOptions steer Watch.
type WatchOptions struct {
	// Options are those of Run: Out, Log, Clock, Prune, Workers, Lease.
	Options
	// Interval is the pause between two looks (DefaultWatchInterval).
	Interval time.Duration
	// RestartUnit is the backoff's unit (DefaultRestartUnit): restart n+1
	// of a connector follows restart n by min(n*n+n, 60) units (2, 6, 12,
	// 20, 30, 42, 56, then 60), the first is made when FAILED is first
	// seen, and the count starts over once the connector and its tasks
	// have run for 10 units.
	RestartUnit time.Duration
	// MaxRestarts ends the restarts of a connector that keeps failing
	// (DefaultMaxRestarts); it is logged, and left FAILED.
	MaxRestarts int
	// Active says, at each look, whether this watcher is the one that acts
	// now, and why not: several watchers of one Connect cluster (the
	// in-run watcher of every worker) must not each restart a connector
	// on a backoff of its own. Nil: always active (a watcher started by
	// hand). A watcher that stands by forgets its restart counts, since
	// the active one kept its own.
	Active func(ctx context.Context) (active bool, why string)
	// Dir, when set, is read again at every look (Load), so that the
	// watcher follows the repository (a git-sync sidecar, a ConfigMap
	// update). A directory that cannot be read or holds a bad file, or,
	// with Prune and without AllowEmptyPrune, defines no connector (a
	// lost mount), is said at that look: the watcher then keeps the last
	// definitions it read and deletes nothing.
	Dir string
	// Metrics, when set, are told what each look saw and did.
	Metrics *Metrics
}

func (o *WatchOptions) defaults() {
	o.Options.defaults()
	if o.Interval <= 0 {
		o.Interval = DefaultWatchInterval
	}
	if o.RestartUnit <= 0 {
		o.RestartUnit = DefaultRestartUnit
	}
	if o.MaxRestarts <= 0 {
		o.MaxRestarts = DefaultMaxRestarts
	}
}

// restarts is one connector's restart history.
type restarts struct {
	n       int       // restarts in a row
	last    time.Time // the last restart
	healthy time.Time // running since (zero: not running)
	gaveUp  bool
}

// RestartDelay is how long after restart n (from 1) restart n+1 is made:
// min(n*n+n, 60) units, Strimzi's auto-restart rule.
func RestartDelay(n int, unit time.Duration) time.Duration {
	return time.Duration(min(n*n+n, 60)) * unit
}

// Watch keeps the cluster as the definitions say until ctx ends: every
// Interval it reads the connectors, puts back what drifted (a connector
// deleted or changed behind our back is written again, under the lease,
// planned again under it; with Prune a connector no file defines is
// deleted), and restarts what FAILED through Connect's own API (POST
// /connectors/<name>/restart?includeTasks=true&onlyFailed=true, Kafka >=
// 3.0) with a backoff that grows per connector. Every action is one log
// line naming the connector, the cause and the next attempt.
func Watch(ctx context.Context, api *API, desired []Connector, o WatchOptions) {
	o.defaults()
	r := &runner{api: api, desired: desired, o: o.Options, out: &printer{w: o.Out}, red: NewRedactor(), clk: clock.Or(o.Clock)}
	hist := map[string]*restarts{}
	mine := &turn{log: o.Log}
	defs := &definitions{dir: o.Dir, last: desired, prune: o.Prune, allowEmpty: o.AllowEmptyPrune, log: o.Log}
	o.Log.Info("watching the connectors", "interval", o.Interval.String(), "restart_unit", o.RestartUnit.String(), "max_restarts", o.MaxRestarts, "prune", o.Prune)
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.clk.After(o.Interval):
		}
		act := mine.active(ctx, o.Active)
		o.Metrics.setActive(act)
		if !act {
			clear(hist)
			continue
		}
		r.desired, r.o.Prune = defs.look()
		desired = r.desired
		l, err := r.api.List(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			o.Metrics.looked(r.clk.Now(), nil, nil)
			o.Log.Warn("watch: cannot read the connectors", "url", r.api.Target.Raw, "error", r.red.Scrub(err.Error()), "next_look", o.Interval.String())
			r.moveOn(ctx, err)
			continue
		}
		o.Metrics.looked(r.clk.Now(), l, desired)
		r.learn(l)
		r.repair(ctx, l, o.Metrics)
		for _, d := range desired {
			r.restartIfFailed(ctx, d.Name, l.Status[d.Name], hist, o)
		}
	}
}

// definitions are the watcher's desired connectors, read again from dir
// at every look.
type definitions struct {
	dir        string
	last       []Connector
	prune      bool
	allowEmpty bool
	log        *slog.Logger
}

// look reads the directory and returns the definitions to keep and
// whether to prune at this look. A read that fails, or a prune of a
// directory that defines nothing, keeps the last definitions read and
// prunes nothing; that is logged at every look, as long as it lasts.
func (d *definitions) look() ([]Connector, bool) {
	if d.dir == "" {
		if CheckPrune("", d.last, nil, d.prune, d.allowEmpty) != nil {
			d.log.Warn("watch: no connector definitions; nothing is deleted", "fix", (&PruneError{}).Fix())
			return d.last, false
		}
		return d.last, d.prune
	}
	conns, skipped, err := Load(d.dir)
	if err != nil {
		d.log.Warn("watch: cannot read the connector definitions; nothing is deleted, the last definitions read are kept",
			"dir", d.dir, "error", err.Error(), "kept", len(d.last), "next_look", "at the next interval")
		return d.last, false
	}
	if perr := CheckPrune(d.dir, conns, nil, d.prune, d.allowEmpty); perr != nil {
		var sus []string
		for _, s := range Suspects(d.dir, skipped) {
			sus = append(sus, s.Name)
		}
		d.log.Warn("watch: the connectors directory defines no connector (a lost mount?); nothing is deleted, the last definitions read are kept",
			"dir", d.dir, "suspects", strings.Join(sus, ","), "kept", len(d.last), "fix", (&PruneError{}).Fix(), "next_look", "at the next interval")
		return d.last, false
	}
	if added, removed := changedNames(d.last, conns); len(added)+len(removed) > 0 {
		d.log.Info("watch: the definitions changed", "dir", d.dir, "added", strings.Join(added, ","), "removed", strings.Join(removed, ","))
	}
	d.last = conns
	return conns, d.prune
}

// changedNames are the connector names new has and old has not, and the
// other way round.
func changedNames(old, new []Connector) (added, removed []string) {
	was, is := map[string]bool{}, map[string]bool{}
	for _, c := range old {
		was[c.Name] = true
	}
	for _, c := range new {
		is[c.Name] = true
		if !was[c.Name] {
			added = append(added, c.Name)
		}
	}
	for _, c := range old {
		if !is[c.Name] {
			removed = append(removed, c.Name)
		}
	}
	return added, removed
}

// turn logs a watcher's turns between acting and standing by, once per
// change.
type turn struct {
	log   *slog.Logger
	known bool
	was   bool
	why   string
}

// active asks is (nil: always active) and logs a change.
func (d *turn) active(ctx context.Context, is func(context.Context) (bool, string)) bool {
	if is == nil {
		return true
	}
	now, why := is(ctx)
	if ctx.Err() != nil {
		return false
	}
	switch {
	case now && (!d.known || !d.was):
		d.log.Info("watch: active", "why", why)
	case !now && (!d.known || d.was || why != d.why):
		d.log.Info("watch: standing by", "why", why, "next_look", "at the next interval")
	}
	d.known, d.was, d.why = true, now, why
	return now
}

// repair puts back what drifted: the plan from the cluster's state, made
// as Run makes it (under the lease, planned again, written once).
func (r *runner) repair(ctx context.Context, l *Listing, m *Metrics) {
	plan := Compute(r.desired, l.Current, r.o.Prune)
	if !plan.Writes() {
		return
	}
	if err := r.unprovenPrune(plan); err != nil {
		// The rest is put back; only the deletes wait for a cluster that
		// shows it is ours.
		r.o.Log.Error("watch: refusing to prune; nothing is deleted", "error", err.Error(), "next_look", "at the next interval")
		var keep []Step
		for _, s := range plan.Steps {
			if s.Kind != Delete {
				keep = append(keep, s)
			}
		}
		plan.Steps = keep
		if !plan.Writes() {
			return
		}
	}
	for _, s := range plan.Steps {
		if s.Kind == Unchanged {
			continue
		}
		r.o.Log.Warn("watch: drift", "connector", s.Name, "cause", driftCause(s), "action", strings.TrimSpace(string(s.Kind)+" "+s.StateCall), "next_attempt", "now")
	}
	saved := r.o.Wait
	r.o.Wait = 0 // the writes' budget: DefaultWriteBudget; no wait for the status
	_, again, res, done := r.writeAll(ctx, plan)
	r.o.Wait = saved
	if done && res.Code != exitcode.OK {
		r.o.Log.Error("watch: could not put the connectors back", "failed", strings.Join(res.Failed, ","), "next_attempt", "at the next look")
		return
	}
	for _, s := range again.Steps {
		if s.Kind == Create {
			if r.made == nil {
				r.made = map[string]bool{}
			}
			r.made[s.Name] = true
		}
		if s.Kind != Unchanged {
			r.o.Log.Info("watch: put back", "connector", s.Name, "action", string(s.Kind))
			m.repaired(s.Name, s.Kind)
		}
	}
}

// driftCause says what changed behind our back, without any value.
func driftCause(s Step) string {
	switch s.Kind {
	case Create:
		return "the connector is gone (deleted behind our back)"
	case Delete:
		return "no file defines it (--prune)"
	}
	var keys []string
	for _, c := range s.Changes {
		keys = append(keys, string(c.Op)+c.Key)
	}
	sort.Strings(keys)
	cause := "its config differs: " + strings.Join(keys, " ")
	if len(keys) == 0 {
		cause = "its state differs"
	}
	return cause
}

// restartIfFailed restarts a FAILED connector or task when its backoff
// allows, and starts the count over once it has run for 10 units.
func (r *runner) restartIfFailed(ctx context.Context, name string, st *Status, hist map[string]*restarts, o WatchOptions) {
	h := hist[name]
	if h == nil {
		h = &restarts{}
		hist[name] = h
	}
	now := r.clk.Now()
	failed := failedParts(st)
	if failed == "" {
		if st != nil && st.Connector.State == "RUNNING" {
			if h.healthy.IsZero() {
				h.healthy = now
			}
			if h.n > 0 && now.Sub(h.healthy) >= 10*o.RestartUnit {
				o.Log.Info("watch: running again; the restart count starts over", "connector", name, "restarts", h.n)
				*h = restarts{healthy: h.healthy}
			}
		}
		return
	}
	h.healthy = time.Time{}
	if h.gaveUp {
		return
	}
	if h.n >= o.MaxRestarts {
		h.gaveUp = true
		o.Log.Error("watch: giving up restarting", "connector", name, "cause", failed, "restarts", h.n,
			"next_attempt", "none", "fix", "read the trace (GET /connectors/"+name+"/status), fix the cause, then restart it by hand or apply again")
		return
	}
	if h.n > 0 {
		if due := h.last.Add(RestartDelay(h.n, o.RestartUnit)); now.Before(due) {
			return
		}
	}
	rctx, cancel := context.WithTimeout(ctx, DefaultWriteBudget)
	err := r.api.Restart(rctx, name, st)
	cancel()
	h.n++
	h.last = now
	next := "none: the last of --max-restarts"
	if h.n < o.MaxRestarts {
		next = RestartDelay(h.n, o.RestartUnit).String() + " if it fails again"
	}
	if err != nil {
		o.Log.Error("watch: restart failed", "connector", name, "cause", failed, "restart", h.n, "error", r.red.Scrub(err.Error()), "next_attempt", next)
		return
	}
	o.Metrics.restarted(name)
	o.Log.Warn("watch: restarted", "connector", name, "cause", failed, "restart", h.n, "next_attempt", next)
}

// failedParts names what FAILED in a status ("" when nothing did).
func failedParts(st *Status) string {
	if st == nil {
		return ""
	}
	var parts []string
	if st.Connector.State == "FAILED" {
		parts = append(parts, "connector FAILED")
	}
	for _, t := range st.Tasks {
		if t.State == "FAILED" {
			parts = append(parts, fmt.Sprintf("task %d FAILED", t.ID))
		}
	}
	return strings.Join(parts, ", ")
}

// Restart restarts the connector's failed instances: POST
// /connectors/<name>/restart?includeTasks=true&onlyFailed=true (Kafka >=
// 3.0, KIP-745). A worker before 3.0 ignores the query and restarts only
// the connector (answering 204, not 202), so then each FAILED task is
// restarted on its own (POST /connectors/<name>/tasks/<id>/restart).
func (a *API) Restart(ctx context.Context, name string, st *Status) error {
	base := "connectors/" + url.PathEscape(name)
	res, err := a.write(ctx, restclient.Write{Method: http.MethodPost, Path: base + "/restart?includeTasks=true&onlyFailed=true"},
		http.StatusOK, http.StatusAccepted, http.StatusNoContent)
	if err != nil || res.Response.Status != http.StatusNoContent || st == nil {
		return err
	}
	for _, t := range st.Tasks {
		if t.State != "FAILED" {
			continue
		}
		if _, err := a.write(ctx, restclient.Write{Method: http.MethodPost, Path: fmt.Sprintf("%s/tasks/%d/restart", base, t.ID)},
			http.StatusOK, http.StatusAccepted, http.StatusNoContent); err != nil {
			return err
		}
	}
	return nil
}

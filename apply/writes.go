package apply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/restclient"
)

// write carries out the plan's writes in name order, each repeated through
// rebalances until the write budget ends (restclient.Write); a worker that
// stops accepting connections is left for another member of the group.
// ok is false when a write failed (printed).
func (r *runner) write(ctx context.Context, plan Plan) (Result, bool) {
	budget := r.writeBudget()
	until := r.clk.Now().Add(budget)
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	for _, s := range plan.Steps {
		if s.Kind == Unchanged {
			continue
		}
		if err := r.step(ctx, s, until); err != nil {
			r.out.f("%s: %s\n", s.Name, r.red.Scrub(err.Error()))
			res := Result{Code: exitcode.Failed, Plan: plan, Failed: []string{s.Name}}
			var ue *restclient.UnreachableError
			if errors.As(err, &ue) {
				res.Unreachable = ue.URL
			}
			return res, false
		}
	}
	return Result{}, true
}

// step makes one step's writes: the config or the deletion, then the state
// call; each part moves to another worker when its worker is unreachable,
// and a part that is done is not made again.
func (r *runner) step(ctx context.Context, s Step, until time.Time) error {
	if s.Kind == Delete {
		return r.failover(ctx, func() error { return r.api.Delete(ctx, s.Name, until) }, func() {
			r.out.f("deleted %s\n", s.Name)
		})
	}
	initial := r.initialState(ctx, s)
	if s.WritesConfig() {
		var res restclient.WriteResult
		err := r.failover(ctx, func() (err error) {
			if initial != "" {
				res, err = r.api.Create(ctx, s.Name, s.Desired.Config, initial, until)
				return err
			}
			res, err = r.api.PutConfig(ctx, s.Name, s.Desired.Config, until)
			return err
		}, func() {
			if initial != "" {
				r.out.f("created %s in state %s (initial_state)\n", s.Name, initial)
				return
			}
			verb := map[Kind]string{Create: "created", Update: "updated"}[s.Kind]
			if res.Landed {
				r.out.f("%s %s (its answer was lost; read back: the cluster holds the new config)\n", verb, s.Name)
				return
			}
			r.out.f("%s %s\n", verb, s.Name)
		})
		if err != nil {
			return err
		}
	}
	if s.Kind == Create && s.Desired.Offsets != nil {
		return r.startAt(ctx, s, initial != "", until)
	}
	if s.StateCall == "" || initial != "" {
		return nil
	}
	return r.failover(ctx, func() error { return r.api.SetState(ctx, s.Name, s.StateCall, until) }, func() {
		r.out.f("%s: %s requested\n", s.Name, s.StateCall)
	})
}

// failover runs do, and again on another worker of the group while its
// worker is unreachable; done runs once do succeeded.
func (r *runner) failover(ctx context.Context, do func() error, done func()) error {
	for {
		err := do()
		if err == nil {
			done()
			return nil
		}
		var ue *restclient.UnreachableError
		if !errors.As(err, &ue) || !r.moveOn(ctx, err) {
			return err
		}
	}
}

// moveOn switches to another live member of the group after the current
// worker failed with cause; false when there is none (or no Workers).
func (r *runner) moveOn(ctx context.Context, cause error) bool {
	if r.o.Workers == nil {
		return false
	}
	from := r.api.Target
	t, err := r.o.Workers.Another(ctx, from)
	if err != nil {
		r.o.Log.Warn("no other worker of the group to move to", "from", from.Raw, "error", r.red.Scrub(err.Error()))
		return false
	}
	r.api.Target = t
	r.out.f("the worker at %s stopped answering (%s); going on with %s\n", from.Raw, r.red.Scrub(shortErr(cause)), t.Raw)
	r.o.Log.Warn("moved to another worker of the group", "from", from.Raw, "to", t.Raw, "cause", r.red.Scrub(cause.Error()))
	return true
}

// shortErr is the innermost cause of err, for a one-line note.
func shortErr(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the connection closed without an answer"
	}
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return fmt.Sprint(err)
		}
		err = u
	}
}

// visibleWait bounds the wait for the writes to show on the workers.
const visibleWait = 30 * time.Second

// visiblePoll is the pause between two looks at a worker that does not
// show the writes yet.
const visiblePoll = 250 * time.Millisecond

// visible waits, before the lease passes on, until every worker the next
// apply may plan from shows the writes: planning again on its listing
// writes nothing. A PUT returns once the leader has written the config,
// but a worker's GET /connectors lists what its herder has taken in, which
// lags while the herder is busy (starting the connector just created): on
// Kafka 4.3.1 the next holder, 10 ms after the release, planned on the
// same worker and created one of two connectors a second time. A worker
// that does not answer is skipped (it cannot serve the next plan either);
// one still stale after visibleWait is logged and the lease passes on.
func (r *runner) visible(ctx context.Context) {
	targets := []restclient.Target{r.api.Target}
	if r.o.Workers != nil {
		if ms, err := r.o.Workers.Members(ctx); err == nil && len(ms) > 0 {
			targets = ms
		}
	}
	deadline := r.clk.Now().Add(visibleWait)
	for _, t := range targets {
		api := &API{REST: r.api.REST, Target: t}
		for {
			l, err := api.List(ctx)
			if err != nil {
				break
			}
			if !Compute(r.desired, l.Current, r.o.Prune).Writes() {
				break
			}
			if !r.clk.Now().Before(deadline) || ctx.Err() != nil {
				r.o.Log.Warn("a worker does not show the writes yet; the next apply may plan from a stale listing", "url", t.Raw, "waited", visibleWait.String())
				break
			}
			select {
			case <-ctx.Done():
			case <-r.clk.After(visiblePoll):
			}
		}
	}
}

// initialState is the initial_state to create s's connector in: its
// paused or stopped state on a worker of Kafka 3.7 or later (KIP-980:
// POST /connectors with "initial_state"), so that it never runs; "" to
// create it running and then pause or stop it, which older workers need
// (logged, since the connector runs meanwhile).
func (r *runner) initialState(ctx context.Context, s Step) string {
	if s.Kind != Create || s.Desired == nil {
		return ""
	}
	want := strings.ToUpper(s.Desired.State)
	if s.Desired.Offsets != nil {
		want = "STOPPED" // its offsets are written before it first runs
	}
	if want != "PAUSED" && want != "STOPPED" {
		return ""
	}
	v, err := r.api.Version(ctx)
	if err == nil && AtLeast(v, 3, 7) {
		return want
	}
	why := "the worker's version " + v + " predates initial_state (Kafka 3.7, KIP-980)"
	if err != nil {
		why = "the worker's version cannot be read: " + r.red.Scrub(err.Error())
	}
	r.o.Log.Info("creating the connector running, then setting its state", "connector", s.Name, "state", want, "why", why)
	return ""
}

// startAt sets a new connector's offsets (its definition's "offsets")
// before it first runs, then gives it its declared state: created STOPPED
// (initial_state), or on a 3.6 worker created and stopped at once (it ran
// meanwhile, logged), its offsets PATCHed and read back, then resumed or
// paused as the definition says.
func (r *runner) startAt(ctx context.Context, s Step, createdStopped bool, until time.Time) error {
	return r.failover(ctx, func() error {
		if !createdStopped {
			r.o.Log.Info("the worker predates initial_state (Kafka 3.7): the connector was created running and is stopped to set its offsets", "connector", s.Name)
			if err := r.api.SetState(ctx, s.Name, "stop", until); err != nil {
				return err
			}
		}
		if err := r.api.waitState(ctx, s.Name, "STOPPED", until); err != nil {
			return err
		}
		if err := r.api.alterOffsets(ctx, s.Name, s.Desired.Offsets, until); err != nil {
			return err
		}
		if err := r.api.verifyOffsets(ctx, s.Name, s.Desired.Offsets, until); err != nil {
			return err
		}
		r.out.f("%s: offsets set (%d partitions, read back)\n", s.Name, len(s.Desired.Offsets.Offsets))
		switch s.Desired.State {
		case StateStopped:
			return nil
		case StatePaused:
			return r.api.SetState(ctx, s.Name, "pause", until)
		}
		return r.api.SetState(ctx, s.Name, "resume", until)
	}, func() {})
}

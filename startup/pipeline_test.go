package startup

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
)

var allSteps = []string{step.Settings, step.Brokers, step.Topics, step.Coordinator, step.Group, step.Plugins, step.Lock, step.Peers, step.Exec}

// fakeGates records the steps run and the deadline each got; fail makes a
// step return an error, and signal makes a signal arrive while a step runs
// (returning ctx's error, as a real gate does) or as it succeeds.
type fakeGates struct {
	ran       []string
	deadlines map[string]time.Time
	fail      map[string]error
	// signalDuring and signalAfter name a step; cancel delivers SIGTERM.
	signalDuring, signalAfter string
	cancel                    context.CancelCauseFunc
	sawWaited                 bool // what peers found in st.waited
	// clk, when set, is advanced by took[name] while step name runs.
	clk  *clock.Stepping
	took map[string]time.Duration
}

func (f *fakeGates) step(ctx context.Context, name string) error {
	f.ran = append(f.ran, name)
	if f.clk != nil {
		f.clk.After(f.took[name])
	}
	if dl, ok := ctx.Deadline(); ok {
		f.deadlines[name] = dl
	}
	switch name {
	case f.signalDuring:
		f.cancel(&entrypoint.SignalError{Signal: syscall.SIGTERM})
		return &gate.GateError{Gate: name, Err: ctx.Err()}
	case f.signalAfter:
		f.cancel(&entrypoint.SignalError{Signal: syscall.SIGTERM})
	}
	return f.fail[name]
}

func (f *fakeGates) settings(ctx context.Context, _ *state) error { return f.step(ctx, step.Settings) }
func (f *fakeGates) brokers(ctx context.Context, _ *state) error  { return f.step(ctx, step.Brokers) }
func (f *fakeGates) topics(ctx context.Context, _ *state) error   { return f.step(ctx, step.Topics) }
func (f *fakeGates) coordinator(ctx context.Context, _ *state) error {
	return f.step(ctx, step.Coordinator)
}
func (f *fakeGates) group(ctx context.Context, _ *state) error { return f.step(ctx, step.Group) }
func (f *fakeGates) plugins(ctx context.Context, _ *state) error {
	return f.step(ctx, step.Plugins)
}
func (f *fakeGates) lock(ctx context.Context, st *state) error {
	st.waited = true
	return f.step(ctx, step.Lock)
}
func (f *fakeGates) peers(ctx context.Context, st *state) error {
	f.sawWaited = st.waited
	return f.step(ctx, step.Peers)
}
func (f *fakeGates) exec(ctx context.Context, _ *state) error { return f.step(ctx, step.Exec) }

type pipelineRun struct {
	gates *fakeGates
	code  int
	log   string
}

func runFake(t *testing.T, withExec, lock bool, setup func(*fakeGates)) pipelineRun {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cancel(nil) })
	f := &fakeGates{deadlines: map[string]time.Time{}, fail: map[string]error{}, cancel: cancel}
	if setup != nil {
		setup(f)
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	st := &state{settings: settings.Settings{Timeout: time.Hour, Lock: lock}, withExec: withExec}
	code := runSteps(ctx, startupSteps(f), st, log)
	return pipelineRun{gates: f, code: code, log: buf.String()}
}

func TestPipelineRunsEveryStepInOrder(t *testing.T) {
	r := runFake(t, true, true, nil)
	if r.code != exitcode.OK || !slices.Equal(r.gates.ran, allSteps) {
		t.Fatalf("exit %d, ran %v; want 0 and %v", r.code, r.gates.ran, allSteps)
	}
	if !r.gates.sawWaited {
		t.Error("peers did not learn that the lock step waited (it must look at the group again)")
	}
}

func TestPipelinePrepareStopsAfterGroup(t *testing.T) {
	r := runFake(t, false, true, nil)
	if want := allSteps[:5]; r.code != exitcode.OK || !slices.Equal(r.gates.ran, want) {
		t.Fatalf("exit %d, ran %v; want 0 and %v", r.code, r.gates.ran, want)
	}
	if strings.Contains(r.log, "gate skipped") {
		t.Errorf("prepare logged its own skips at info level:\n%s", r.log)
	}
}

func TestPipelineLockDisabled(t *testing.T) {
	r := runFake(t, true, false, nil)
	want := []string{step.Settings, step.Brokers, step.Topics, step.Coordinator, step.Group, step.Plugins, step.Peers, step.Exec}
	if r.code != exitcode.OK || !slices.Equal(r.gates.ran, want) {
		t.Fatalf("exit %d, ran %v; want 0 and %v", r.code, r.gates.ran, want)
	}
	if r.gates.sawWaited {
		t.Error("peers was told the lock step waited, though it was skipped: the group report would be thrown away")
	}
	if !strings.Contains(r.log, `msg="gate skipped" gate=lock reason="CONNECT_INIT_LOCK=false"`) {
		t.Errorf("no skip line for the lock:\n%s", r.log)
	}
}

// CONNECT_INIT_PLUGIN_CHECK=off skips the plugins step with a reason; the
// others run.
func TestPipelinePluginCheckOff(t *testing.T) {
	ctx := context.Background()
	f := &fakeGates{deadlines: map[string]time.Time{}, fail: map[string]error{}}
	var buf bytes.Buffer
	st := &state{settings: settings.Settings{Timeout: time.Hour, Lock: true, PluginCheck: "OFF"}, withExec: true}
	code := runSteps(ctx, startupSteps(f), st, slog.New(slog.NewTextHandler(&buf, nil)))
	want := []string{step.Settings, step.Brokers, step.Topics, step.Coordinator, step.Group, step.Lock, step.Peers, step.Exec}
	if code != exitcode.OK || !slices.Equal(f.ran, want) {
		t.Fatalf("exit %d, ran %v; want 0 and %v", code, f.ran, want)
	}
	if !strings.Contains(buf.String(), `msg="gate skipped" gate=plugins reason="CONNECT_INIT_PLUGIN_CHECK=off"`) {
		t.Errorf("no skip line for plugins:\n%s", buf.String())
	}
}

// A failing step ends the start-up with its exit code; no later step runs.
func TestPipelineExitCodes(t *testing.T) {
	errs := []struct {
		kind string
		err  error
		code int
	}{
		{"gate error", &gate.GateError{Gate: "x", Err: errors.New("boom")}, exitcode.Failed},
		{"plain error", errors.New("boom"), exitcode.Failed},
		{"bad setting", &settings.ConfigError{Setting: "CONNECT_X", Problem: "is bad"}, exitcode.Config},
		{"marked bad configuration", &configFailure{errors.New("exec format error")}, exitcode.Config},
	}
	for i, name := range allSteps {
		for _, e := range errs {
			t.Run(name+"/"+e.kind, func(t *testing.T) {
				r := runFake(t, true, true, func(f *fakeGates) { f.fail[name] = e.err })
				if r.code != e.code || !slices.Equal(r.gates.ran, allSteps[:i+1]) {
					t.Fatalf("exit %d after %v; want %d after %v", r.code, r.gates.ran, e.code, allSteps[:i+1])
				}
				msg := `msg="gate failed" gate=` + name
				if e.code == exitcode.Config {
					msg = `msg="bad configuration" gate=` + name
				}
				if !strings.Contains(r.log, msg) || !strings.Contains(r.log, "boom") && !strings.Contains(r.log, "bad") {
					t.Errorf("log lacks %q and the error:\n%s", msg, r.log)
				}
			})
		}
	}
}

// A signal ends the start-up with 128+signal: while any step runs (the
// step fails on its cancelled context), or as it succeeds (the next step
// never starts).
func TestPipelineInterruptedAtEachStep(t *testing.T) {
	for i, name := range allSteps {
		t.Run("during "+name, func(t *testing.T) {
			r := runFake(t, true, true, func(f *fakeGates) { f.signalDuring = name })
			if r.code != 128+int(syscall.SIGTERM) || !slices.Equal(r.gates.ran, allSteps[:i+1]) {
				t.Fatalf("exit %d after %v; want 143 after %v", r.code, r.gates.ran, allSteps[:i+1])
			}
			if !strings.Contains(r.log, `msg="stopped before the worker started" gate=`+name+" signal=terminated") {
				t.Errorf("no interruption line for %s:\n%s", name, r.log)
			}
			if strings.Contains(r.log, "gate failed") {
				t.Errorf("an interruption was logged as a failure:\n%s", r.log)
			}
		})
		if name == step.Exec {
			continue // nothing runs after exec
		}
		t.Run("after "+name, func(t *testing.T) {
			r := runFake(t, true, true, func(f *fakeGates) { f.signalAfter = name })
			if r.code != 128+int(syscall.SIGTERM) || !slices.Equal(r.gates.ran, allSteps[:i+1]) {
				t.Fatalf("exit %d after %v; want 143 after %v", r.code, r.gates.ran, allSteps[:i+1])
			}
		})
	}
}

// brokers to plugins share one CONNECT_INIT_TIMEOUT; the lock's wait has
// none; peers gets a fresh one after it.
func TestPipelineDeadlines(t *testing.T) {
	r := runFake(t, true, true, nil)
	d := r.gates.deadlines
	first := d[step.Brokers]
	if first.IsZero() {
		t.Fatal("the brokers step had no deadline")
	}
	for _, name := range []string{step.Topics, step.Coordinator, step.Group, step.Plugins} {
		if !d[name].Equal(first) {
			t.Errorf("%s deadline %v, want the brokers step's %v (one timeout for the cluster gates)", name, d[name], first)
		}
	}
	for _, name := range []string{step.Settings, step.Lock, step.Exec} {
		if _, ok := d[name]; ok {
			t.Errorf("%s has a deadline; it must not", name)
		}
	}
	if p, ok := d[step.Peers]; !ok || !p.After(first) {
		t.Errorf("peers deadline %v, want a fresh one (not the cluster gates' %v)", p, first)
	}
}

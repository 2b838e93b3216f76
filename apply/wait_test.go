package apply

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/restclient"
)

// These tests drive the wait's error paths on in-process fakes and a
// stepping clock; the real proof, with real workers killed mid-wait, is
// in apply_integration_test.go.

// fakeWorker is one fake worker and its target.
type fakeWorker struct {
	f   *fakeConnect
	t   restclient.Target
	srv *httptest.Server
}

func startFake(t *testing.T, f *fakeConnect) fakeWorker {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	tg, err := restclient.Parse(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	return fakeWorker{f: f, t: tg, srv: srv}
}

// fakeGroup is the Workers of a group of fake workers: Another gives the
// first other worker that is not down.
type fakeGroup struct {
	mu      sync.Mutex
	members []fakeWorker
	// left are targets no longer members of the group.
	left    map[string]bool
	asked   int
	checked int
	// running gives the live worker ids (nil: the fakes' w:8083).
	running func() map[string]bool
}

func (g *fakeGroup) Another(_ context.Context, not restclient.Target) (restclient.Target, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked++
	for _, m := range g.members {
		m.f.mu.Lock()
		down := m.f.down
		m.f.mu.Unlock()
		if m.t != not && !down && !g.left[m.t.Raw] {
			return m.t, nil
		}
	}
	return restclient.Target{}, errors.New("no other live member")
}

func (g *fakeGroup) Members(context.Context) ([]restclient.Target, error) {
	var out []restclient.Target
	for _, m := range g.members {
		out = append(out, m.t)
	}
	return out, nil
}

func (g *fakeGroup) Running(context.Context) (map[string]bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running != nil {
		return g.running(), nil
	}
	return map[string]bool{"w:8083": true}, nil
}

func (g *fakeGroup) Member(_ context.Context, t restclient.Target) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.checked++
	return !g.left[t.Raw], nil
}

func runOn(t *testing.T, w fakeWorker, desired []Connector, o Options) (Result, string, *clock.Stepping) {
	t.Helper()
	clk := clock.NewStepping(time.Unix(0, 0))
	var out bytes.Buffer
	o.Out, o.Clock = &out, clk
	rest := &restclient.Client{Clock: clk, Random: func() float64 { return 0.5 }, Unreachable: 5 * time.Second, WriteTimeout: 200 * time.Millisecond}
	res := Run(context.Background(), &API{REST: rest, Target: w.t, Clock: clk}, desired, o)
	return res, out.String(), clk
}

// The false success of issue 23: the one good read right after the write,
// then only failed reads. A failed read never counts toward the hold, so
// a pinned worker that stops answering ends the apply with exit 1 naming
// the worker, and no connector is reported ok or failed.
func TestPinnedWorkerDiesAfterTheWrite(t *testing.T) {
	w := startFake(t, &fakeConnect{configs: map[string]map[string]string{}, status: running, dieAfterPut: true})
	res, out, clk := runOn(t, w, []Connector{conn("a", "", "connector.class", "C")}, Options{Wait: 2 * time.Minute})
	if res.Code != exitcode.Failed || res.Unreachable != w.t.Raw || len(res.Failed) != 0 {
		t.Fatalf("result %+v\n%s", res, out)
	}
	for _, want := range []string{"created a", "the worker at " + w.t.Raw + " is unreachable", "the state of 1 connectors is unknown"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "a: ok") || strings.Contains(out, "a: not RUNNING") || strings.Contains(out, "desired state after") {
		t.Errorf("a verdict on the connector without a fresh read:\n%s", out)
	}
	// It gives up after Unreachable, not after the whole wait.
	if clk.Waited() < DefaultUnreachable || clk.Waited() > DefaultUnreachable+5*time.Second {
		t.Errorf("gave up after %v on the clock, want about %v", clk.Waited(), DefaultUnreachable)
	}
}

// A worker of the group that stops answering after the write: the wait
// moves to another live member, and the verdict rests on its reads alone,
// spanning the hold, confirmed a member.
func TestWaitMovesToAnotherMember(t *testing.T) {
	configs := map[string]map[string]string{}
	w1 := startFake(t, &fakeConnect{configs: configs, status: running, dieAfterPut: true})
	w2 := startFake(t, &fakeConnect{configs: configs, status: running})
	g := &fakeGroup{members: []fakeWorker{w1, w2}}
	res, out, _ := runOn(t, w1, []Connector{conn("a", "", "connector.class", "C")}, Options{Wait: time.Minute, Workers: g})
	if res.Code != exitcode.OK || !strings.Contains(out, "a: ok: connector RUNNING, 1/1 tasks RUNNING") {
		t.Fatalf("result %+v\n%s", res, out)
	}
	if !strings.Contains(out, "the worker at "+w1.t.Raw+" stopped answering") || !strings.Contains(out, "going on with "+w2.t.Raw) {
		t.Errorf("the move is not said:\n%s", out)
	}
	// Settle is 3 s at 1 s polls: at least four reads from w2.
	if n := w2.f.lists; n < 4 {
		t.Errorf("the verdict rests on %d reads of the other worker", n)
	}
	if g.checked == 0 {
		t.Error("the verdict was given without checking that the worker is a member")
	}
}

// A worker that answers but has left the group: its status does not count,
// and the wait moves to a member.
func TestWorkerThatLeftTheGroupDoesNotCount(t *testing.T) {
	configs := map[string]map[string]string{}
	w1 := startFake(t, &fakeConnect{configs: configs, status: running})
	w2 := startFake(t, &fakeConnect{configs: configs, status: running})
	g := &fakeGroup{members: []fakeWorker{w1, w2}, left: map[string]bool{w1.t.Raw: true}}
	res, out, _ := runOn(t, w1, []Connector{conn("a", "", "connector.class", "C")}, Options{Wait: time.Minute, Workers: g})
	if res.Code != exitcode.OK || !strings.Contains(out, "going on with "+w2.t.Raw) || w2.f.lists < 4 {
		t.Fatalf("result %+v, %d reads of the member\n%s", res, w2.f.lists, out)
	}
}

// No worker of the group answers to the end of the wait: exit 1 naming
// the worker, the connectors' state unknown.
func TestNoMemberAnswers(t *testing.T) {
	w1 := startFake(t, &fakeConnect{configs: map[string]map[string]string{}, status: running, dieAfterPut: true})
	g := &fakeGroup{members: []fakeWorker{w1}}
	res, out, clk := runOn(t, w1, []Connector{conn("a", "", "connector.class", "C")}, Options{Wait: time.Minute, Workers: g})
	if res.Code != exitcode.Failed || res.Unreachable != w1.t.Raw || !strings.Contains(out, "is unreachable") || g.asked == 0 {
		t.Fatalf("result %+v, asked %d\n%s", res, g.asked, out)
	}
	if clk.Waited() < time.Minute {
		t.Errorf("a group's apply gave up after %v, before its wait", clk.Waited())
	}
}

// A no-op apply returns as soon as the plan is empty: no write, no hold,
// no wait on the clock.
func TestNoopReturnsAtOnce(t *testing.T) {
	d := conn("a", "", "connector.class", "C")
	w := startFake(t, &fakeConnect{configs: map[string]map[string]string{"a": d.Config}, status: running})
	res, out, clk := runOn(t, w, []Connector{d}, Options{Wait: time.Minute})
	if res.Code != exitcode.OK || w.f.puts != 0 || clk.Waited() != 0 || w.f.lists != 1 {
		t.Fatalf("result %+v, %d puts, waited %v, %d reads\n%s", res, w.f.puts, clk.Waited(), w.f.lists, out)
	}
	if !strings.Contains(out, "nothing to write") || !strings.Contains(out, "a: ok: connector RUNNING") {
		t.Errorf("output:\n%s", out)
	}
	// A no-op whose connector is not running yet waits, as after a write.
	w2 := startFake(t, &fakeConnect{configs: map[string]map[string]string{"a": d.Config}, status: func(string) *Status {
		st := running("a")
		st.Connector.State = "UNASSIGNED"
		return st
	}})
	res, _, clk = runOn(t, w2, []Connector{d}, Options{Wait: 10 * time.Second})
	if res.Code != exitcode.Failed || clk.Waited() < 10*time.Second {
		t.Errorf("an unassigned connector: %+v after %v", res, clk.Waited())
	}
}

// The lease is taken once the plan writes, and the plan is made again
// under it: a change another apply wrote meanwhile is not written twice.
func TestLeaseReplans(t *testing.T) {
	d := conn("a", "", "connector.class", "C", "topic", "t2")
	f := &fakeConnect{configs: map[string]map[string]string{"a": {"name": "a", "connector.class": "C", "topic": "t1"}}, status: running}
	w := startFake(t, f)
	var held time.Duration
	released := false
	lease := func(_ context.Context, hold time.Duration) (func(), error) {
		held = hold
		f.mu.Lock()
		f.configs["a"] = d.Config // the other apply's write
		f.mu.Unlock()
		return func() { released = true }, nil
	}
	res, out, _ := runOn(t, w, []Connector{d}, Options{Wait: time.Minute, Lease: lease})
	if res.Code != exitcode.OK || f.puts != 0 || !released {
		t.Fatalf("result %+v, %d puts, released %v\n%s", res, f.puts, released, out)
	}
	if !strings.Contains(out, "~ update     a") || !strings.Contains(out, "planned again after taking the apply lease") || !strings.Contains(out, "a update -> unchanged") {
		t.Errorf("output:\n%s", out)
	}
	if held != 90*time.Second {
		t.Errorf("hold %v, want the writes' minute and half a minute to spare", held)
	}
	// With a write to make, the lease is released once it is made, before
	// the wait reads the status.
	d2 := conn("b", "", "connector.class", "C")
	putsAtRelease, listsAtRelease := -1, -1
	res, out, _ = runOn(t, w, []Connector{d, d2}, Options{Wait: time.Minute, Lease: func(context.Context, time.Duration) (func(), error) {
		return func() {
			f.mu.Lock()
			putsAtRelease, listsAtRelease = f.puts, f.lists
			f.mu.Unlock()
		}, nil
	}})
	if res.Code != exitcode.OK || putsAtRelease != 1 || f.puts != 1 || f.lists < listsAtRelease+4 {
		t.Errorf("released after %d puts and %d reads; %d puts and %d reads in all\n%s", putsAtRelease, listsAtRelease, f.puts, f.lists, out)
	}
	// A no-op takes no lease at all.
	taken := false
	res, _, _ = runOn(t, w, []Connector{d}, Options{Wait: time.Minute, Lease: func(context.Context, time.Duration) (func(), error) {
		taken = true
		return func() {}, nil
	}})
	if res.Code != exitcode.OK || taken {
		t.Errorf("no-op: %+v, lease taken %v", res, taken)
	}
}

// A PUT whose answer is lost (the client timed out) is read back: the
// cluster holds the config, so it is not sent again and apply says so.
func TestLostAnswerIsReadBack(t *testing.T) {
	f := &fakeConnect{configs: map[string]map[string]string{}, status: running, lost: true}
	w := startFake(t, f)
	res, out, _ := runOn(t, w, []Connector{conn("a", "", "connector.class", "C")}, Options{Wait: time.Minute})
	if res.Code != exitcode.OK || f.puts != 1 || !strings.Contains(out, "created a (its answer was lost; read back: the cluster holds the new config)") {
		t.Fatalf("result %+v, %d puts\n%s", res, f.puts, out)
	}
}

// A worker that stops accepting connections before a write: in a group
// the write moves to another member and is made there, once; pinned, it
// fails naming the worker.
func TestWriteMovesOffADeadWorker(t *testing.T) {
	configs := map[string]map[string]string{}
	w1 := startFake(t, &fakeConnect{configs: configs, status: running})
	w2 := startFake(t, &fakeConnect{configs: configs, status: running})
	w1.srv.Close() // refused from now on
	d := conn("a", "", "connector.class", "C")
	step := Step{Name: "a", Kind: Create, Desired: &d, Expect: "RUNNING"}
	newRunner := func(g Workers) (*runner, *bytes.Buffer, *clock.Stepping) {
		clk := clock.NewStepping(time.Unix(0, 0))
		var out bytes.Buffer
		o := Options{Out: &out, Clock: clk, Workers: g}
		o.defaults()
		rest := &restclient.Client{Clock: clk, Random: func() float64 { return 0.5 }, Unreachable: 5 * time.Second}
		return &runner{api: &API{REST: rest, Target: w1.t, Clock: clk}, o: o, out: &printer{w: &out}, red: NewRedactor(), clk: clk}, &out, clk
	}
	r, out, clk := newRunner(&fakeGroup{members: []fakeWorker{w1, w2}})
	if err := r.step(context.Background(), step, clk.Now().Add(time.Minute)); err != nil || w2.f.puts != 1 || r.api.Target != w2.t {
		t.Fatalf("step: %v, %d puts on the other worker\n%s", err, w2.f.puts, out)
	}
	if !strings.Contains(out.String(), "going on with "+w2.t.Raw) || !strings.Contains(out.String(), "created a") {
		t.Errorf("output:\n%s", out)
	}
	r, out, clk = newRunner(nil)
	err := r.step(context.Background(), step, clk.Now().Add(time.Minute))
	var ue *restclient.UnreachableError
	if !errors.As(err, &ue) || ue.URL != w1.t.Raw || clk.Waited() < 5*time.Second {
		t.Fatalf("pinned: %v after %v\n%s", err, clk.Waited(), out)
	}
}

// The lease passes on only once the worker lists what was written: the
// next holder plans from that listing.
func TestLeasePassesOnOnceTheWritesShow(t *testing.T) {
	f := &fakeConnect{configs: map[string]map[string]string{}, status: running, lag: 3}
	w := startFake(t, f)
	listsAtRelease := -1
	lease := func(context.Context, time.Duration) (func(), error) {
		return func() { listsAtRelease = f.lists }, nil
	}
	res, out, _ := runOn(t, w, []Connector{conn("a", "", "connector.class", "C")}, Options{Wait: time.Minute, Lease: lease})
	// The plan's read, the re-plan's, three stale listings, one fresh.
	if res.Code != exitcode.OK || listsAtRelease != 6 {
		t.Fatalf("released after %d listings, want 6; %+v\n%s", listsAtRelease, res, out)
	}
}

// A connector whose status says RUNNING on a worker that is no longer
// alive (the status is that worker's last word) is not in the desired
// state; once its work runs on a live worker it is, after its own hold.
func TestStatusOnADeadWorkerDoesNotCount(t *testing.T) {
	moved := false
	status := func(string) *Status {
		st := running("a")
		if !moved {
			st.Connector.WorkerID, st.Tasks = "dead:8083", nil
		}
		return st
	}
	w := startFake(t, &fakeConnect{configs: map[string]map[string]string{}, status: status})
	polls := 0
	g := &fakeGroup{members: []fakeWorker{w}, running: func() map[string]bool {
		polls++
		moved = polls >= 3 // the group reassigns a's work after a while
		return map[string]bool{"w:8083": true}
	}}
	res, out, clk := runOn(t, w, []Connector{conn("a", "", "connector.class", "C")}, Options{Wait: time.Minute, Workers: g})
	if res.Code != exitcode.OK || !strings.Contains(out, "a: ok: connector RUNNING, 1/1 tasks RUNNING") {
		t.Fatalf("result %+v\n%s", res, out)
	}
	// Two holds were voided by the dead worker, then one held.
	if clk.Waited() < 3*DefaultSettle {
		t.Errorf("verdict after %v on the clock", clk.Waited())
	}
	// Never: the wait ends with the reason.
	w2 := startFake(t, &fakeConnect{configs: map[string]map[string]string{}, status: func(string) *Status {
		st := running("a")
		st.Connector.WorkerID = "dead:8083"
		return st
	}})
	res, out, _ = runOn(t, w2, []Connector{conn("a", "", "connector.class", "C")}, Options{Wait: 20 * time.Second, Workers: &fakeGroup{members: []fakeWorker{w2}}})
	if res.Code != exitcode.Failed || !strings.Contains(out, "a: not RUNNING after 20s: connector RUNNING on dead:8083, which is not a live member of the group") {
		t.Fatalf("result %+v\n%s", res, out)
	}
}

// The false success TestWorkerKilledMidWait met on real workers: the
// connector RUNNING on the live worker without tasks, for longer than the
// hold, while the killed worker (the leader, which writes task configs)
// was still a member. That is not the desired state while a member is
// dead; once the dead member is out and the task runs, it is.
func TestRunningWithoutTasksWhileAMemberIsDead(t *testing.T) {
	settled := false
	status := func(string) *Status {
		st := running("a")
		if !settled {
			st.Tasks = nil
		}
		return st
	}
	w := startFake(t, &fakeConnect{configs: map[string]map[string]string{}, status: status})
	polls := 0
	g := &fakeGroup{members: []fakeWorker{w}, running: func() map[string]bool {
		polls++
		if polls < 6 {
			return map[string]bool{"w:8083": true, "killed:8083": false}
		}
		settled = true // the session of the killed worker ended; the new leader wrote the task
		return map[string]bool{"w:8083": true}
	}}
	res, out, clk := runOn(t, w, []Connector{conn("a", "", "connector.class", "C")}, Options{Wait: time.Minute, Workers: g})
	if res.Code != exitcode.OK || !strings.Contains(out, "a: ok: connector RUNNING, 1/1 tasks RUNNING") || strings.Contains(out, "0/0 tasks") {
		t.Fatalf("result %+v\n%s", res, out)
	}
	if clk.Waited() < 2*DefaultSettle {
		t.Errorf("verdict after %v on the clock: the taskless RUNNING counted", clk.Waited())
	}
	// Every member alive, the tasks still on their way (the herder's
	// retries back off): 10 s without tasks do not count; the task does.
	var clk2 *clock.Stepping
	reads := 0
	late := func(string) *Status {
		reads++
		st := running("a")
		if reads <= 10 {
			st.Tasks = nil
		}
		return st
	}
	w2 := startFake(t, &fakeConnect{configs: map[string]map[string]string{}, status: late})
	res, out, clk2 = runOn(t, w2, []Connector{conn("a", "", "connector.class", "C")}, Options{Wait: time.Minute, Workers: &fakeGroup{members: []fakeWorker{w2}}})
	if res.Code != exitcode.OK || !strings.Contains(out, "a: ok: connector RUNNING, 1/1 tasks RUNNING") {
		t.Fatalf("late tasks: result %+v\n%s", res, out)
	}
	if clk2.Waited() < 10*time.Second+DefaultSettle {
		t.Errorf("late tasks: verdict after %v on the clock", clk2.Waited())
	}
	// A connector that makes no tasks is what it is, once it stayed so
	// for TasklessSettle.
	w3 := startFake(t, &fakeConnect{configs: map[string]map[string]string{}, status: func(string) *Status { st := running("a"); st.Tasks = nil; return st }})
	res, out, clk3 := runOn(t, w3, []Connector{conn("a", "", "connector.class", "C")}, Options{Wait: time.Minute, Workers: &fakeGroup{members: []fakeWorker{w3}}})
	if res.Code != exitcode.OK || !strings.Contains(out, "a: ok: connector RUNNING, 0/0 tasks RUNNING") || clk3.Waited() < TasklessSettle {
		t.Fatalf("no tasks: result %+v after %v\n%s", res, clk3.Waited(), out)
	}
}

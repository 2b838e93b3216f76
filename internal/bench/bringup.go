package main

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
	"github.com/connect-init/connect-init/startup"
)

// scenario is one way of starting the workers of row 3.
type scenario struct {
	id, what string
	// name is the scenario's name for -bringup-scenarios (beside its id).
	name string
	// workers is the group's size (-bringup-workers).
	workers  int
	viaInit  bool
	extraEnv []string
	// inWorker puts connect-init's config provider on the JVM's classpath
	// and has run wire the worker file (CONNECT_INIT_LOCK_MODE=worker).
	inWorker bool
	// slowScan gives the workers a plugin.path with a bulky plugin.
	slowScan bool

	took        []float64 // s, converged runs only
	opened      []float64 // workers let through by the open group (CONNECT_INIT_LOCK_JOINS=first)
	generations []float64
	forcing     []float64
	joins       []float64
	firstHealth []float64
	handoff     []float64 // ms: a holder's "Herder started" → the next "acquired startup lock"
	acqGaps     []float64 // s: one "acquired startup lock" → the next, in acquisition order
	failures    []string
	// prof are the workers' start-up profile lines (profile.go).
	prof profiles
}

const (
	bringupHeapMB = 256
	// bringupTimeout bounds a bring-up of 4 workers; larger groups get
	// proportionally more.
	bringupTimeout = 6 * time.Minute
	// slowScanTimeout bounds a slow-scan bring-up: with today's lock the
	// four plugin scans run one after the other.
	slowScanTimeout = 12 * time.Minute
)

var joinedRe = regexp.MustCompile(`Joined group at generation (\d+)`)

// benchBringup is row 3: 4 real Connect workers of a new Connect cluster
// started at the same instant, bare or through `connect-init run`.
func benchBringup(ctx context.Context, b *bed, o options, rep *report) error {
	wired, err := lockWired(b)
	if err != nil {
		return err
	}
	lockExec := []string{"CONNECT_INIT_LOCK=true", "CONNECT_INIT_LOCK_LEASE=2m", "CONNECT_INIT_LOCK_MODE=exec"}
	inWorker := []string{"CONNECT_INIT_LOCK=true", "CONNECT_INIT_LOCK_LEASE=2m"}
	scs := []*scenario{
		{id: "3a", name: "bare", what: "bare: N × `java ConnectDistributed` at once (all at once)"},
		{id: "3b", name: "exec", what: "N × `connect-init run --` with the startup lock before the exec (1 permit, lease 2m, joins first)", viaInit: true,
			extraEnv: lockExec},
		{id: "3c", what: "N × `connect-init run --` with `CONNECT_INIT_LOCK_PERMITS=4`", viaInit: true,
			extraEnv: append(lockExec, "CONNECT_INIT_LOCK_PERMITS=4")},
		{id: "3d", name: "default", what: "N × `connect-init run --` with the in-worker startup lock, the default (1 permit, lease 2m, joins first)", viaInit: true, inWorker: true,
			extraEnv: inWorker},
		{id: "3e", what: "slow plugin scan, bare", slowScan: true},
		{id: "3f", what: "slow plugin scan, startup lock before the exec (1 permit, lease 2m)", viaInit: true, slowScan: true,
			extraEnv: lockExec},
		{id: "3g", what: "slow plugin scan, in-worker startup lock (1 permit, lease 2m)", viaInit: true, inWorker: true, slowScan: true,
			extraEnv: inWorker},
		{id: "3h", name: "each", what: "N × `connect-init run --` with the in-worker startup lock, `CONNECT_INIT_LOCK_JOINS=each` (1 permit, lease 2m, one join at a time)", viaInit: true, inWorker: true,
			extraEnv: append(append([]string(nil), inWorker...), "CONNECT_INIT_LOCK_JOINS=each")},
	}
	if !wired {
		scs = scs[:1]
		scs = append(scs, &scenario{id: "3b'", what: "N × `connect-init run --`, gates only (startup lock not wired into this build)", viaInit: true,
			extraEnv: []string{"CONNECT_INIT_LOCK=false"}})
		rep.problems = append(rep.problems, "3b/3c: the startup lock is not wired into `connect-init run` in this build; measured gates only (3b')")
	}
	sizes, err := o.bringupSizes()
	if err != nil {
		return err
	}
	scs = sized(o.pickScenarios(scs), sizes)
	client, admin, err := newAdmin(b)
	if err != nil {
		return err
	}
	defer client.Close()
	for r := 0; r < o.bringupRuns; r++ {
		order := append([]*scenario(nil), scs...)
		if r%2 == 1 {
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		}
		// Each size's scenarios one after the other, so bare and its
		// variants alternate at every size.
		sort.SliceStable(order, func(i, j int) bool { return order[i].workers < order[j].workers })
		for _, sc := range order {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err := bringupOnce(ctx, b, admin, sc, r); err != nil {
				return fmt.Errorf("%s: %w", sc.id, err)
			}
		}
	}
	for _, sc := range scs {
		note := ""
		if len(sc.failures) > 0 {
			note = fmt.Sprintf("%d of %d runs never converged: %s", len(sc.failures), o.bringupRuns, strings.Join(sc.failures, "; "))
		}
		rep.add(sc.id, sc.what+fmt.Sprintf(": start → one Stable generation with %d members, all /health 200", sc.workers), "s", sc.took, note)
		rep.add(sc.id+"-gen", sc.what+": distinct generations joined (\"Joined group at generation N\")", "", sc.generations, "")
		rep.add(sc.id+"-fr", sc.what+fmt.Sprintf(": \"Forcing rebalance\" lines, all %d logs", sc.workers), "", sc.forcing, "")
		if sc.viaInit && strings.Contains(sc.what, "joins first") {
			rep.add(sc.id+"-open", sc.what+": workers let through by the open group (\""+startup.MsgGroupOpen+"\")", "", sc.opened,
				fmt.Sprintf("of %d; the others took a permit", sc.workers))
		}
		if len(sc.acqGaps) > 0 && strings.Contains(sc.what, "1 permit") {
			rep.add(sc.id+"-acq", sc.what+": one \"acquired startup lock\" → the next", "s", sc.acqGaps, fmt.Sprintf("%d gaps per run", sc.workers-1))
		}
		if len(sc.handoff) > 0 && strings.Contains(sc.what, "1 permit") {
			rep.add(sc.id+"-ho", sc.what+": lock handoff, a holder's \"Herder started\" → the next worker's \"acquired startup lock\"", "ms", sc.handoff,
				"readiness seen by /health or the Stable group, then the claim")
		}
		rep.add(sc.id+"-h1", sc.what+": start → first worker /health 200", "s", sc.firstHealth, "")
		sc.prof.addRows(rep, sc.id, sc.what)
	}
	return nil
}

// bringupOnce starts sc.workers workers of a new Connect cluster at once and waits
// until they form one Stable generation and all answer /health 200.
func bringupOnce(ctx context.Context, b *bed, admin sarama.ClusterAdmin, sc *scenario, run int) error {
	n := sc.workers
	group := freshGroup("up" + strings.NewReplacer("'", "x", ".", "w").Replace(sc.id[1:]))
	specs := make([]*testbed.WorkerSpec, n)
	argvs := make([][]string, n)
	envs := make([][]string, n)
	for i := range specs {
		props, err := b.cluster.WorkerProps(group)
		if err != nil {
			return err
		}
		if sc.slowScan {
			if props["plugin.path"], err = slowPluginPath(b); err != nil {
				return err
			}
		}
		spec, err := b.cluster.NewWorkerSpec(fmt.Sprintf("%s-%d", group["group.id"], i), props, bringupHeapMB)
		if err != nil {
			return err
		}
		specs[i] = spec
		extra := append([]string{"CONNECT_INIT_TIMEOUT=" + bringupLimit(sc).String()}, sc.extraEnv...)
		if sc.inWorker {
			jar, err := testbed.ProviderJar()
			if err != nil {
				return err
			}
			spec.AddClasspath(jar)
			extra = append(extra, "CONNECT_INIT_LOCK_MODE=worker", "CONNECT_INIT_LOCK_JAR="+jar, "CONNECT_INIT_WORKER_CONFIG="+spec.PropsFile)
		}
		argvs[i] = spec.Argv
		if sc.viaInit {
			argvs[i] = append([]string{b.binary, "run", "--"}, spec.Argv...)
			envs[i] = gateEnv(props, extra...)
		}
	}
	workers := make([]*testbed.Worker, n)
	defer func() {
		for _, w := range workers {
			if w != nil {
				w.Kill()
			}
		}
	}()
	progress("%s run %d: starting %d workers (group %s)", sc.id, run+1, n, group["group.id"])
	t0, err := startAtOnce(len(specs), func(i int) (err error) {
		workers[i], err = b.cluster.StartWorkerCommand(specs[i], argvs[i], envs[i])
		return err
	})
	if err != nil {
		return err
	}
	urls := make([]string, n)
	for i, s := range specs {
		urls[i] = s.RESTURL
	}
	limit := bringupLimit(sc)
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	httpc := &http.Client{Timeout: 2 * time.Second}
	var firstHealth time.Duration
	var converged time.Duration
	lastState := ""
	lastLog := time.Now()
	for converged == 0 {
		healthy := 0
		for _, u := range urls {
			if resp, err := httpc.Get(u + "/health"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					healthy++
				}
			}
		}
		if healthy > 0 && firstHealth == 0 {
			firstHealth = time.Since(t0)
		}
		state, members := "", 0
		if ds, err := admin.DescribeConsumerGroups([]string{group["group.id"]}); err == nil && len(ds) == 1 {
			state, members = ds[0].State, len(ds[0].Members)
		}
		lastState = fmt.Sprintf("group %s with %d members, %d of %d healthy", state, members, healthy, n)
		if healthy == n && state == "Stable" && members == n {
			converged = time.Since(t0)
			break
		}
		exited := 0
		for _, w := range workers {
			if w.Exited() {
				exited++
			}
		}
		if exited > 0 {
			return fmt.Errorf("%d workers exited; last state: %s; log tail of one:\n%s", exited, lastState, firstExitedTail(workers))
		}
		if time.Since(lastLog) > 15*time.Second {
			progress("%s: %s after %s", sc.id, lastState, time.Since(t0).Round(time.Second))
			lastLog = time.Now()
		}
		select {
		case <-wctx.Done():
			sc.failures = append(sc.failures, fmt.Sprintf("after %s: %s", limit, lastState))
			progress("%s: did not converge within %s (%s)", sc.id, limit, lastState)
			sc.record(workers, 0, firstHealth)
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
	// Let late rebalances show up in the logs before counting.
	time.Sleep(5 * time.Second)
	sc.record(workers, converged, firstHealth)
	progress("%s run %d: converged after %s; %v generations, %v \"Forcing rebalance\"", sc.id, run+1, converged.Round(100*time.Millisecond),
		last(sc.generations), last(sc.forcing))
	return nil
}

func (sc *scenario) record(workers []*testbed.Worker, converged, firstHealth time.Duration) {
	gens := map[string]bool{}
	forcing, joins, opened := 0, 0, 0
	if sc.prof == nil {
		sc.prof = profiles{}
	}
	for _, w := range workers {
		sc.prof.add(w.Log())
		for _, l := range strings.Split(w.Log(), "\n") {
			if m := joinedRe.FindStringSubmatch(l); m != nil {
				gens[m[1]] = true
				joins++
			}
			if strings.Contains(l, "Forcing rebalance") {
				forcing++
			}
			if strings.Contains(l, `msg="`+startup.MsgGroupOpen+`"`) {
				opened++
			}
		}
	}
	if converged > 0 {
		sc.took = append(sc.took, converged.Seconds())
	}
	sc.handoff = append(sc.handoff, handoffs(workers)...)
	sc.acqGaps = append(sc.acqGaps, acquisitionGaps(workers)...)
	if firstHealth > 0 {
		sc.firstHealth = append(sc.firstHealth, firstHealth.Seconds())
	}
	sc.generations = append(sc.generations, float64(len(gens)))
	sc.forcing = append(sc.forcing, float64(forcing))
	sc.joins = append(sc.joins, float64(joins))
	sc.opened = append(sc.opened, float64(opened))
}

// bringupLimit bounds one bring-up: bringupTimeout (slowScanTimeout with
// the slow scan) for 4 workers, proportionally more for larger groups.
func bringupLimit(sc *scenario) time.Duration {
	limit := bringupTimeout
	if sc.slowScan {
		limit = slowScanTimeout
	}
	if sc.workers > 4 {
		limit = limit * time.Duration(sc.workers) / 4
	}
	return limit
}

// bringupSizes reads -bringup-workers: group sizes of 2 or more.
func (o options) bringupSizes() ([]int, error) {
	var sizes []int
	for _, f := range strings.Split(o.workers, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 2 {
			return nil, fmt.Errorf("-bringup-workers: %q is not a group size of 2 or more (e.g. -bringup-workers 4,8)", f)
		}
		sizes = append(sizes, n)
	}
	if len(sizes) == 0 {
		sizes = []int{4}
	}
	return sizes, nil
}

// sized makes one scenario per size: a group of 4 keeps the scenario's id
// (the figures of earlier runs), another size gets it after a dot (3a.8);
// N in the description becomes the size.
func sized(scs []*scenario, sizes []int) []*scenario {
	var out []*scenario
	for _, n := range sizes {
		for _, sc := range scs {
			c := *sc
			c.workers = n
			c.what = strings.ReplaceAll(sc.what, "N ×", fmt.Sprintf("%d ×", n))
			if n != 4 {
				c.id = fmt.Sprintf("%s.%d", sc.id, n)
				if !strings.Contains(c.what, fmt.Sprintf("%d ×", n)) {
					c.what = fmt.Sprintf("%d workers, %s", n, c.what)
				}
			}
			out = append(out, &c)
		}
	}
	return out
}

func firstExitedTail(workers []*testbed.Worker) string {
	for _, w := range workers {
		if w.Exited() {
			return tailString(w.Log(), 3000)
		}
	}
	return ""
}

var (
	initTimeRe    = regexp.MustCompile(`^time=(\S+) .*msg="acquired startup lock"`)
	connectTimeRe = regexp.MustCompile(`^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] INFO .*Herder started`)
)

// handoffs reads each worker's log for connect-init's "acquired startup
// lock" and Connect's "Herder started" and returns, in acquisition order,
// the gaps between one worker's herder start and the next acquisition.
// Both logs use the local time zone.
func handoffs(workers []*testbed.Worker) []float64 {
	type times struct{ acquired, started time.Time }
	var ts []times
	for _, w := range workers {
		var t times
		for _, l := range strings.Split(w.Log(), "\n") {
			if m := initTimeRe.FindStringSubmatch(l); m != nil && t.acquired.IsZero() {
				t.acquired, _ = time.Parse(time.RFC3339Nano, m[1])
			}
			if m := connectTimeRe.FindStringSubmatch(l); m != nil && t.started.IsZero() {
				t.started, _ = time.ParseInLocation("2006-01-02 15:04:05,000", m[1], time.Local)
			}
		}
		if t.acquired.IsZero() || t.started.IsZero() {
			return nil
		}
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].acquired.Before(ts[j].acquired) })
	var out []float64
	for i := 1; i < len(ts); i++ {
		out = append(out, ms(ts[i].acquired.Sub(ts[i-1].started)))
	}
	return out
}

// acquisitionGaps returns, in acquisition order, the gaps in seconds
// between one worker's "acquired startup lock" and the next one's: the
// part of the bring-up the lock serialises.
func acquisitionGaps(workers []*testbed.Worker) []float64 {
	var ts []time.Time
	for _, w := range workers {
		for _, l := range strings.Split(w.Log(), "\n") {
			if m := initTimeRe.FindStringSubmatch(l); m != nil {
				if at, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
					ts = append(ts, at)
				}
				break
			}
		}
	}
	if len(ts) != len(workers) {
		return nil
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	var out []float64
	for i := 1; i < len(ts); i++ {
		out = append(out, ts[i].Sub(ts[i-1]).Seconds())
	}
	return out
}

// pickScenarios keeps the scenarios -bringup-scenarios names by id or by
// name (all when it is empty), in their order.
func (o options) pickScenarios(scs []*scenario) []*scenario {
	if strings.TrimSpace(o.scenarios) == "" {
		return scs
	}
	want := map[string]bool{}
	for _, id := range strings.Split(o.scenarios, ",") {
		want[strings.TrimSpace(id)] = true
	}
	var out []*scenario
	for _, sc := range scs {
		if want[sc.id] || sc.name != "" && want[sc.name] {
			out = append(out, sc)
		}
	}
	return out
}

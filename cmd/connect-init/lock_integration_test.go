//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
	"github.com/connect-init/connect-init/lock"
)

// The startup lock on the real test bed (issue 6, part 4): real Connect
// workers launched through `connect-init run -- <java ...>` on the package's
// shared 3-broker cluster. Every test uses a fresh group.id and its own lock
// topic (CONNECT_INIT_LOCK_TOPIC), so tests share no lock state.
//
// Times: connect-init's slog lines carry time=<RFC 3339 with offset>; Connect
// logs "[2006-01-02 15:04:05,000]" in the JVM's default zone. Workers get
// TZ=UTC and -Duser.timezone=UTC, and the Connect stamps are parsed as UTC,
// so both come from the same host clock in the same zone.

// lockWorker is one worker started through connect-init run.
type lockWorker struct {
	name string
	spec *testbed.WorkerSpec
	env  []string
	argv []string
	w    *testbed.Worker
}

// identity is the worker's lock identity: its advertised REST URL in
// Connect's form (trailing slash).
func (lw *lockWorker) identity() string { return lw.spec.RESTURL + "/" }

// newLockWorker prepares (does not start) a worker of the group described
// by groupProps, in the mode users get by default where the provider jar
// is installed (as every target of the Dockerfile does): the jar on the
// JVM's classpath and CONNECT_INIT_LOCK_MODE unset, so that run (auto)
// waits in the worker. cmd replaces the worker command when non-nil (a
// stand-in such as sleep, which run cannot wire: auto then takes the lock
// before the exec). The worker reads its properties file
// (CONNECT_INIT_WORKER_CONFIG), which run copies with the wiring appended.
// newExecLockWorker is the variant.
func newLockWorker(t *testing.T, groupProps map[string]string, name string, cmd []string, env ...string) *lockWorker {
	t.Helper()
	props, err := cluster.WorkerProps(groupProps)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cluster.NewWorkerSpec(name, props, 256)
	if err != nil {
		t.Fatal(err)
	}
	full := append(baseEnv(), envFromProps(props)...)
	// The lock tests assert one join at a time, which is
	// CONNECT_INIT_LOCK_JOINS=each; a test of the default (first) passes
	// "CONNECT_INIT_LOCK_JOINS=" (empty is unset) in env, which comes after.
	full = append(full, "TZ=UTC", "CONNECT_INIT_TIMEOUT=3m", "CONNECT_INIT_LOCK_JOINS=each")
	if cmd == nil {
		jar := providerJar(t)
		spec.AddClasspath(jar)
		full = append(full, "CONNECT_INIT_LOCK_JAR="+jar, "CONNECT_INIT_WORKER_CONFIG="+spec.PropsFile)
		// The JVM's zone made explicit, so Connect's log stamps are UTC.
		cmd = append([]string{spec.Argv[0], "-Duser.timezone=UTC"}, spec.Argv[1:]...)
	}
	full = append(full, env...)
	return &lockWorker{name: name, spec: spec, env: full, argv: append([]string{binary, "run", "--"}, cmd...)}
}

// newExecLockWorker is newLockWorker in the variant mode: run takes the
// lock before it execs the worker (CONNECT_INIT_LOCK_MODE=exec), so that
// the whole JVM start waits.
func newExecLockWorker(t *testing.T, groupProps map[string]string, name string, cmd []string, env ...string) *lockWorker {
	t.Helper()
	return newLockWorker(t, groupProps, name, cmd, append([]string{"CONNECT_INIT_LOCK_MODE=exec"}, env...)...)
}

// startLockWorkers launches ws at the same instant (a barrier, then one
// fork/exec each) and stops them all when the test ends, logging the
// connect-init lines and a log tail of each if the test failed.
func startLockWorkers(t *testing.T, ws ...*lockWorker) {
	t.Helper()
	gate := make(chan struct{})
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i, lw := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			lw.w, errs[i] = cluster.StartWorkerCommand(lw.spec, lw.argv, lw.env)
		}()
	}
	close(gate)
	wg.Wait()
	t.Cleanup(func() { stopLockWorkers(t, ws) })
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start %s: %v", ws[i].name, err)
		}
	}
}

func stopLockWorkers(t *testing.T, ws []*lockWorker) {
	var wg sync.WaitGroup
	for _, lw := range ws {
		if lw.w == nil {
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); lw.w.Stop(20 * time.Second) }()
	}
	wg.Wait()
	if !t.Failed() {
		return
	}
	for _, lw := range ws {
		if lw.w == nil {
			continue
		}
		log := lw.w.Log()
		var own []string
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, "component=connect-init") || strings.Contains(l, "Joined group at generation") {
				own = append(own, l)
			}
		}
		t.Logf("=== %s (%s): connect-init lines and joins:\n%s\n--- log tail:\n%s", lw.name, lw.identity(),
			strings.Join(own, "\n"), logTail(log, 3000))
	}
}

// lockWaitFor polls cond every 200ms until it holds or ctx ends.
func lockWaitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	lockWaitEvery(ctx, t, 200*time.Millisecond, what, cond)
}

func lockWaitEvery(ctx context.Context, t *testing.T, every time.Duration, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s: %v", what, ctx.Err())
		case <-time.After(every):
		}
	}
}

// slogLine finds the first connect-init line whose msg is msg (and that
// contains every extra substring) and returns it with its time= stamp.
func slogLine(log, msg string, extra ...string) (string, time.Time, bool) {
	quoted := "msg=" + strconv.Quote(msg)
next:
	for _, l := range strings.Split(log, "\n") {
		if !strings.HasPrefix(l, "time=") || !strings.Contains(l, quoted) {
			continue
		}
		for _, e := range extra {
			if !strings.Contains(l, e) {
				continue next
			}
		}
		stamp, _, _ := strings.Cut(strings.TrimPrefix(l, "time="), " ")
		ts, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			return l, time.Time{}, false
		}
		return l, ts, true
	}
	return "", time.Time{}, false
}

var connectStampRE = regexp.MustCompile(`^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\]`)

// connectLines returns Connect's log lines containing substr with their
// stamps (UTC, see the file comment).
func connectLines(log, substr string) (lines []string, stamps []time.Time) {
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, substr) {
			continue
		}
		m := connectStampRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		ts, err := time.ParseInLocation("2006-01-02 15:04:05,000", m[1], time.UTC)
		if err != nil {
			continue
		}
		lines, stamps = append(lines, l), append(stamps, ts)
	}
	return lines, stamps
}

var generationRE = regexp.MustCompile(`Joined group at generation (\d+)`)

// lastGeneration is the generation of the worker's latest join, -1 if none.
func lastGeneration(log string) int {
	lines, _ := connectLines(log, "Joined group at generation")
	if len(lines) == 0 {
		return -1
	}
	m := generationRE.FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// lockTimeline is one worker's acquisition and first join.
type lockTimeline struct {
	lw       *lockWorker
	acquired time.Time
	joined   time.Time
}

// timelines reads every worker's acquisition and first join, sorted by
// acquisition.
func timelines(t *testing.T, ws []*lockWorker) []lockTimeline {
	t.Helper()
	var tl []lockTimeline
	for _, lw := range ws {
		log := lw.w.Log()
		line, acq, ok := slogLine(log, "acquired startup lock")
		if !ok {
			t.Fatalf("%s: no parsable \"acquired startup lock\" line (%q)", lw.name, line)
		}
		_, joins := connectLines(log, "Joined group at generation")
		if len(joins) == 0 {
			t.Fatalf("%s: no \"Joined group at generation\" line", lw.name)
		}
		tl = append(tl, lockTimeline{lw: lw, acquired: acq, joined: joins[0]})
	}
	sort.Slice(tl, func(i, j int) bool { return tl[i].acquired.Before(tl[j].acquired) })
	return tl
}

// checkOneAtATime asserts the order the lock promises: sorted by
// acquisition, first joins strictly increase, and each worker acquired
// only after the previous one had joined.
func checkOneAtATime(t *testing.T, tl []lockTimeline) {
	t.Helper()
	t0 := tl[0].acquired
	for i, e := range tl {
		t.Logf("%d. %s (%s): acquired +%s, first join +%s (%s after acquiring)", i+1, e.lw.name, e.lw.identity(),
			e.acquired.Sub(t0).Round(time.Millisecond), e.joined.Sub(t0).Round(time.Millisecond), e.joined.Sub(e.acquired).Round(time.Millisecond))
		if e.joined.Before(e.acquired) {
			t.Errorf("%s joined the group (%s) before it acquired the lock (%s)", e.lw.name, e.joined.Format(time.StampMilli), e.acquired.Format(time.StampMilli))
		}
		if i == 0 {
			continue
		}
		p := tl[i-1]
		if !e.joined.After(p.joined) {
			t.Errorf("join times not strictly ordered by acquisition: %s joined at %s, not after %s at %s",
				e.lw.name, e.joined.Format(time.StampMilli), p.lw.name, p.joined.Format(time.StampMilli))
		}
		// The previous holder counts as ready when the coordinator shows it
		// in the Stable group at its assignment's offset, which happens as
		// its JVM is about to log the join; under load that log line can
		// trail by a moment, hence the 1 s allowance. Its join is still
		// seconds after the previous acquisition (a JVM start).
		if !e.acquired.After(p.joined.Add(-time.Second)) {
			t.Errorf("%s acquired the lock at %s, before the previous holder %s joined at %s",
				e.lw.name, e.acquired.Format(time.StampMilli), p.lw.name, p.joined.Format(time.StampMilli))
		}
	}
}

// waitStableGeneration waits until the group is Stable with n members and
// every worker's latest join is at one generation; it returns it.
func waitStableGeneration(ctx context.Context, t *testing.T, group string, ws []*lockWorker) int {
	t.Helper()
	admin := newAdmin(t)
	var last string
	gen := -1
	for {
		descs, err := admin.DescribeConsumerGroups([]string{group})
		switch {
		case err != nil:
			last = err.Error()
		case len(descs) != 1:
			last = fmt.Sprintf("%d descriptions", len(descs))
		default:
			d := descs[0]
			gens := map[int]bool{}
			for _, lw := range ws {
				g := lastGeneration(lw.w.Log())
				gens[g] = true
				gen = g
			}
			last = fmt.Sprintf("state %s, protocol type %s, %d members, worker generations %v", d.State, d.ProtocolType, len(d.Members), gens)
			if d.State == "Stable" && len(d.Members) == len(ws) && len(gens) == 1 && gen > 0 {
				return gen
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s never Stable with %d members at one generation; last: %s", group, len(ws), last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// lockRecord is one record of a lock topic, decoded per lock/doc.go.
type lockRecord struct {
	Offset    int64
	Timestamp time.Time
	Key       struct {
		Scope    string `json:"scope"`
		Identity string `json:"identity"`
		Release  bool   `json:"release"`
	}
	Tombstone bool
	Value     struct {
		State       string `json:"state"`
		Ticket      int64  `json:"ticket"`
		Incarnation string `json:"incarnation"`
		Seq         uint64 `json:"seq"`
		HoldLeaseMS int64  `json:"hold_lease_ms"`
		HoldOffset  int64  `json:"hold_offset"`
		Reason      string `json:"reason"`
		By          string `json:"by"`
	}
}

func (r lockRecord) String() string {
	switch {
	case r.Tombstone:
		return fmt.Sprintf("@%d %s tombstone(%s release=%v)", r.Offset, r.Timestamp.Format(time.StampMilli), r.Key.Identity, r.Key.Release)
	case r.Key.Release:
		return fmt.Sprintf("@%d %s release(%s hold@%d %q by %s)", r.Offset, r.Timestamp.Format(time.StampMilli), r.Key.Identity, r.Value.HoldOffset, r.Value.Reason, r.Value.By)
	default:
		return fmt.Sprintf("@%d %s %s(%s ticket %d inc %s seq %d)", r.Offset, r.Timestamp.Format(time.StampMilli), r.Value.State, r.Key.Identity, r.Value.Ticket, r.Value.Incarnation, r.Value.Seq)
	}
}

// readLockTopic reads the whole lock topic and returns the records of scope.
func readLockTopic(ctx context.Context, t *testing.T, topic, scope string) []lockRecord {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	client, err := sarama.NewClient(strings.Split(cluster.Bootstrap(), ","), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	newest, err := client.GetOffset(topic, 0, sarama.OffsetNewest)
	if err != nil {
		t.Fatalf("end offset of %s: %v", topic, err)
	}
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatalf("consume %s: %v", topic, err)
	}
	defer pc.AsyncClose()
	var out []lockRecord
	for next := int64(0); next < newest; {
		select {
		case m := <-pc.Messages():
			next = m.Offset + 1
			r := lockRecord{Offset: m.Offset, Timestamp: m.Timestamp, Tombstone: m.Value == nil}
			if err := json.Unmarshal(m.Key, &r.Key); err != nil {
				t.Errorf("lock record @%d: bad key %q: %v", m.Offset, m.Key, err)
				continue
			}
			if m.Value != nil {
				if err := json.Unmarshal(m.Value, &r.Value); err != nil {
					t.Errorf("lock record @%d: bad value %q: %v", m.Offset, m.Value, err)
					continue
				}
			}
			if r.Key.Scope == scope {
				out = append(out, r)
			}
		case err := <-pc.Errors():
			t.Logf("reading %s: %v", topic, err)
		case <-ctx.Done():
			t.Fatalf("read %s up to %d: %v", topic, newest, ctx.Err())
		}
	}
	return out
}

// checkLockLog asserts, from the lock topic alone, that holds never
// overlapped (permits 1): the claims that stood (each member's last member
// record, in state holding; a claim that lost a race is superseded by a
// waiting record of its writer) follow each other only after a release
// naming the previous claim, or once the previous hold's lease ran out;
// wantReason, if set, is how each hold must have ended. It returns the
// identities of the standing claims in log order.
func checkLockLog(t *testing.T, recs []lockRecord, wantReason string) []string {
	t.Helper()
	lastMember := map[string]lockRecord{}
	var lost int
	for _, r := range recs {
		if r.Key.Release {
			continue
		}
		if prev, ok := lastMember[r.Key.Identity]; ok && !prev.Tombstone && prev.Value.State == "holding" {
			lost++
			t.Logf("a claim was superseded (lost a race): %s, then %s", prev, r)
		}
		lastMember[r.Key.Identity] = r
	}
	var claims []lockRecord
	for _, r := range lastMember {
		if !r.Tombstone && r.Value.State == "holding" {
			claims = append(claims, r)
		}
	}
	sort.Slice(claims, func(i, j int) bool { return claims[i].Offset < claims[j].Offset })
	var order []string
	for i, c := range claims {
		order = append(order, c.Key.Identity)
		if i == 0 {
			continue
		}
		p := claims[i-1]
		var rel *lockRecord
		for j := range recs {
			r := recs[j]
			if r.Offset < c.Offset && r.Key.Release && !r.Tombstone && r.Key.Identity == p.Key.Identity && r.Value.HoldOffset == p.Offset {
				rel = &r
				break
			}
		}
		if rel == nil {
			// Expiry is a rule, not a record: a hold ends once it is older
			// than its hold lease, whether or not a release was written.
			hold := time.Duration(p.Value.HoldLeaseMS) * time.Millisecond
			switch {
			case c.Timestamp.Sub(p.Timestamp) <= hold:
				t.Errorf("claim %s stood while the previous hold %s was neither released nor expired (hold lease %s)", c, p, hold)
			case wantReason != "" && wantReason != "hold lease expired":
				t.Errorf("hold %s ended by its hold lease (%s), not %q, before claim %s", p, hold, wantReason, c)
			}
			continue
		}
		if wantReason != "" && rel.Value.Reason != wantReason {
			t.Errorf("hold %s was released with reason %q, want %q: %s", p, rel.Value.Reason, wantReason, rel)
		}
	}
	t.Logf("lock topic: %d records in scope, %d standing claims, %d superseded claims", len(recs), len(claims), lost)
	return order
}

// lockQueue reads the scope's queue through the lock package's own reader.
func lockQueue(ctx context.Context, t *testing.T, topic, scope string) lock.Snapshot {
	t.Helper()
	l, err := lock.New(lock.Config{Brokers: strings.Split(cluster.Bootstrap(), ","), Topic: topic, Scope: scope, Identity: "lock-test-observer"})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := l.Queue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func lockTopicFor(group map[string]string) string { return "_connect-init-lock-" + group["group.id"] }

func waitAllHealthy(ctx context.Context, t *testing.T, ws []*lockWorker) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(ws))
	for i, lw := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = lw.w.WaitHealthy(ctx) }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestStartupLockFourWorkersJoinOneAtATime: 4 workers launched at the same
// instant join the group one at a time, in lock order, each after the
// previous one is ready; the group ends Stable with 4 members at one
// generation, and nobody forced a rebalance.
func TestStartupLockFourWorkersJoinOneAtATime(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "lock4")
	topic := lockTopicFor(group)
	var ws []*lockWorker
	for i := 1; i <= 4; i++ {
		ws = append(ws, newExecLockWorker(t, group, fmt.Sprintf("%s-%d", group["group.id"], i), nil,
			"CONNECT_INIT_LOCK_LEASE=2m", "CONNECT_INIT_LOCK_TOPIC="+topic))
	}
	startLockWorkers(t, ws...)
	waitAllHealthy(ctx, t, ws)
	t.Logf("all 4 workers healthy after %s", time.Since(start).Round(time.Millisecond))

	for _, lw := range ws {
		if n := lw.w.CountInLog(`msg="acquired startup lock"`); n != 1 {
			t.Errorf("%s logged \"acquired startup lock\" %d times, want 1", lw.name, n)
		}
	}
	tl := timelines(t, ws)
	checkOneAtATime(t, tl)
	checkReleasedByReadiness(ctx, t, ws, tl, group["group.id"], topic)
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// checkReleasedByReadiness asserts the rest of a healthy bring-up of ws
// through the startup lock, whichever mode took it: at least three workers
// waited, each let in because its predecessor was seen ready (never by a
// lease expiry); the group ends Stable with no forced rebalance; and the
// lock topic's claims are in tl's acquisition order. It returns the lock
// topic's records of the group and the claim order they show.
func checkReleasedByReadiness(ctx context.Context, t *testing.T, ws []*lockWorker, tl []lockTimeline, groupID, topic string) ([]lockRecord, []string) {
	t.Helper()
	waited := 0
	for _, lw := range ws {
		if _, _, ok := slogLine(lw.w.Log(), "waiting for startup lock"); ok {
			waited++
		}
		if line, _, ok := slogLine(lw.w.Log(), "releasing the startup lock holder", `reason="hold lease expired"`); ok {
			t.Errorf("%s released a holder by lease expiry: %s", lw.name, line)
		}
	}
	if waited < 3 {
		t.Errorf("%d workers logged \"waiting for startup lock\", want at least 3", waited)
	}

	gen := waitStableGeneration(ctx, t, groupID, ws)
	t.Logf("group %s Stable with %d members at generation %d", groupID, len(ws), gen)
	for _, lw := range ws {
		if n := lw.w.CountInLog("Forcing rebalance"); n > 0 {
			t.Errorf("%s logged \"Forcing rebalance\" %d times: %s", lw.name, n, firstLine(lw.w.Log(), "Forcing rebalance"))
		}
	}

	recs := readLockTopic(ctx, t, topic, groupID)
	order := checkLockLog(t, recs, "ready")
	for i, e := range tl {
		if i >= len(order) || order[i] != e.lw.identity() {
			t.Errorf("lock topic claim order %v differs from the logs' acquisition order at %d (%s)", order, i, e.lw.identity())
			break
		}
	}
	return recs, order
}

// TestStartupLockHolderKilledMidStart: the holder is killed -9 right after
// connect-init exec'd its JVM, before it could join. The next worker
// proceeds once the dead holder's hold lease (20s) has run out, and the
// queue goes on from there: the third worker is let in once the second is
// ready.
//
// Only the killed worker has the short lease: leases travel in each record,
// and B and C keep 2m so that a slow JVM start on a loaded machine cannot
// expire their holds and blur "C after B is ready".
func TestStartupLockHolderKilledMidStart(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const lease = 20 * time.Second
	group := uniqueGroup(t, "lockkill")
	topic := lockTopicFor(group)
	a := newExecLockWorker(t, group, group["group.id"]+"-a", nil, "CONNECT_INIT_LOCK_LEASE="+lease.String(), "CONNECT_INIT_LOCK_TOPIC="+topic)
	b := newExecLockWorker(t, group, group["group.id"]+"-b", nil, "CONNECT_INIT_LOCK_LEASE=2m", "CONNECT_INIT_LOCK_TOPIC="+topic)
	c := newExecLockWorker(t, group, group["group.id"]+"-c", nil, "CONNECT_INIT_LOCK_LEASE=2m", "CONNECT_INIT_LOCK_TOPIC="+topic)

	startLockWorkers(t, a)
	if err := a.w.WaitForLog(ctx, `msg="starting the worker"`); err != nil {
		t.Fatal(err)
	}
	a.w.Kill()
	killedAt := time.Now()
	_, aAcq, ok := slogLine(a.w.Log(), "acquired startup lock")
	if !ok {
		t.Fatalf("A exec'd without a parsable \"acquired startup lock\" line:\n%s", a.w.Log())
	}
	if strings.Contains(a.w.Log(), "Joined group at generation") {
		t.Fatalf("A joined the group before it was killed; the test needs it killed mid-start")
	}
	t.Logf("A acquired at %s and was killed %s later, before joining", aAcq.Format(time.StampMilli), killedAt.Sub(aAcq).Round(time.Millisecond))

	startLockWorkers(t, b)
	if err := b.w.WaitForLog(ctx, `msg="waiting for startup lock"`); err != nil {
		t.Fatal(err)
	}
	startLockWorkers(t, c) // after B queued: C's ticket is later
	if err := b.w.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.w.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("B and C healthy %s after A was killed", time.Since(killedAt).Round(time.Millisecond))

	// B went only once A's hold lease had run out.
	line, relAt, ok := slogLine(b.w.Log(), "releasing the startup lock holder", "holder="+a.identity(), `reason="hold lease expired"`)
	if !ok {
		line, relAt, ok = slogLine(c.w.Log(), "releasing the startup lock holder", "holder="+a.identity(), `reason="hold lease expired"`)
	}
	if !ok {
		t.Errorf("neither B nor C logged the release of A (%s) by hold lease expiry", a.identity())
	} else {
		t.Logf("A released %s after its acquisition: %s", relAt.Sub(aAcq).Round(time.Millisecond), line)
	}
	for _, lw := range []*lockWorker{b, c} {
		if line, _, ok := slogLine(lw.w.Log(), "releasing the startup lock holder", "holder="+a.identity(), "reason=ready"); ok {
			t.Errorf("%s saw the killed A as ready: %s", lw.name, line)
		}
	}
	_, bAcq, ok := slogLine(b.w.Log(), "acquired startup lock")
	if !ok {
		t.Fatal("B has no parsable \"acquired startup lock\" line")
	}
	const tolerance = time.Second
	if gap := bAcq.Sub(aAcq); gap < lease-tolerance {
		t.Errorf("B acquired %s after A, before A's hold lease %s ran out", gap.Round(time.Millisecond), lease)
	} else {
		t.Logf("B acquired %s after A (hold lease %s)", gap.Round(time.Millisecond), lease)
	}
	// The queue did not stall: C went once B was ready.
	tl := timelines(t, []*lockWorker{b, c})
	if tl[0].lw != b {
		t.Errorf("C acquired before B")
	}
	checkOneAtATime(t, tl)
	if _, _, ok := slogLine(c.w.Log(), "releasing the startup lock holder", "holder="+b.identity(), "reason=ready"); !ok {
		t.Errorf("C did not release B as ready")
	}

	snap := lockQueue(ctx, t, topic, group["group.id"])
	for _, e := range snap.Entries {
		t.Logf("queue: %s %s position %d ticket %d held_for %s release %q by %s", e.Identity, e.State, e.Position, e.Ticket, e.HeldFor.Round(time.Millisecond), e.ReleaseReason, e.ReleasedBy)
		if e.Identity == a.identity() && (e.State != lock.StateReleased || e.ReleaseReason != "hold lease expired") {
			t.Errorf("A's entry: %+v, want released by hold lease expiry", e)
		}
	}
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// TestStartupLockWithdrawOnSIGTERM: A holds (connect-init exec'd a process
// that never gets ready, so A holds for its whole lease), B waits; SIGTERM
// to B: it withdraws (a tombstone on its member key) and exits 143.
func TestStartupLockWithdrawOnSIGTERM(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "locksig")
	topic := lockTopicFor(group)
	env := []string{"CONNECT_INIT_LOCK_LEASE=2m", "CONNECT_INIT_LOCK_TOPIC=" + topic}
	a := newExecLockWorker(t, group, group["group.id"]+"-a", []string{"sleep", "600"}, env...)
	b := newExecLockWorker(t, group, group["group.id"]+"-b", nil, env...)

	startLockWorkers(t, a)
	if err := a.w.WaitForLog(ctx, `msg="starting the worker"`); err != nil {
		t.Fatal(err)
	}
	startLockWorkers(t, b)
	if err := b.w.WaitForLog(ctx, `msg="waiting for startup lock"`); err != nil {
		t.Fatal(err)
	}
	waitingLine := firstLine(b.w.Log(), `msg="waiting for startup lock"`)
	if !strings.Contains(waitingLine, "holder="+a.identity()) {
		t.Errorf("B's waiting line does not name A (%s) as the holder: %s", a.identity(), waitingLine)
	}
	sent := time.Now()
	if err := b.w.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, err := b.w.ExitCode(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("B exited %d %s after SIGTERM", code, time.Since(sent).Round(time.Millisecond))
	if code != 143 {
		t.Errorf("B exited %d, want 143 (128+SIGTERM)", code)
	}
	log := b.w.Log()
	for _, want := range []string{`msg="withdrew from the startup lock queue"`, `msg="stopped before the worker started"`} {
		if !strings.Contains(log, want) {
			t.Errorf("B's log lacks %s", want)
		}
	}
	for _, never := range []string{`msg="acquired startup lock"`, `msg="starting the worker"`} {
		if strings.Contains(log, never) {
			t.Errorf("B's log has %s", never)
		}
	}
	if t.Failed() {
		t.Logf("B's log:\n%s", log)
	}

	recs := readLockTopic(ctx, t, topic, group["group.id"])
	var lastB *lockRecord
	for i, r := range recs {
		if r.Key.Identity == b.identity() && !r.Key.Release {
			lastB = &recs[i]
		}
	}
	switch {
	case lastB == nil:
		t.Errorf("no record of B (%s) in %s", b.identity(), topic)
	case !lastB.Tombstone:
		t.Errorf("B's last member record is not a tombstone: %s", lastB)
	default:
		t.Logf("B's last member record: %s", lastB)
	}
	snap := lockQueue(ctx, t, topic, group["group.id"])
	for _, e := range snap.Entries {
		t.Logf("queue: %s %s ticket %d", e.Identity, e.State, e.Ticket)
		if e.Identity == b.identity() {
			t.Errorf("B is still in the queue: %+v", e)
		}
	}
	if len(snap.Entries) != 1 || snap.Entries[0].Identity != a.identity() || snap.Entries[0].State != lock.StateHolding {
		t.Errorf("queue after the withdrawal: %+v, want A holding alone", snap.Entries)
	}
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

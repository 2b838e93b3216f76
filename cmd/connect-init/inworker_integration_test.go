//go:build integration

package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
	"github.com/connect-init/connect-init/lock"
)

// The in-worker startup lock (issue 14) on the real test bed: real Connect
// workers launched through `connect-init run -- <java ...>` with
// connect-init's config provider on their classpath, so run execs at once
// and each JVM waits for its turn in the provider, after its plugin scan.

// providerLine is what the provider logs when it starts waiting.
const providerLine = "Waiting for this worker's turn to join the group"

// providerJar is testbed.ProviderJar, failing the test when the build does.
func providerJar(t *testing.T) string {
	t.Helper()
	jar, err := testbed.ProviderJar()
	if err != nil {
		t.Fatal(err)
	}
	return jar
}

// sleepingHolder starts a worker in exec mode whose "worker" is sleep: it
// takes the lock first and holds it for its whole lease, never ready.
func sleepingHolder(ctx context.Context, t *testing.T, group map[string]string, lease time.Duration, topic string) *lockWorker {
	t.Helper()
	a := newLockWorker(t, group, group["group.id"]+"-a", []string{"sleep", "600"},
		"CONNECT_INIT_LOCK_MODE=exec", "CONNECT_INIT_LOCK_LEASE="+lease.String(), "CONNECT_INIT_LOCK_TOPIC="+topic)
	startLockWorkers(t, a)
	if err := a.w.WaitForLog(ctx, `msg="starting the worker"`); err != nil {
		t.Fatal(err)
	}
	return a
}

// lastMemberRecord returns identity's last member record and its last
// waiting record before it.
func lastMemberRecord(recs []lockRecord, identity string) (last, lastWaiting *lockRecord) {
	for i, r := range recs {
		if r.Key.Identity != identity || r.Key.Release {
			continue
		}
		last = &recs[i]
		if !r.Tombstone && r.Value.State == "waiting" {
			lastWaiting = &recs[i]
		}
	}
	return last, lastWaiting
}

// TestInWorkerLockFourWorkersJoinOneAtATime: 4 workers launched at the same
// instant all start their JVMs at once (run does not wait), and join the
// group one at a time in ticket order, each after the previous one is
// ready; the group ends Stable with 4 members at one generation and nobody
// forced a rebalance.
func TestInWorkerLockFourWorkersJoinOneAtATime(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "inworker4")
	topic := lockTopicFor(group)
	var ws []*lockWorker
	for i := 1; i <= 4; i++ {
		ws = append(ws, newLockWorker(t, group, fmt.Sprintf("%s-%d", group["group.id"], i), nil,
			"CONNECT_INIT_LOCK_LEASE=2m", "CONNECT_INIT_LOCK_TOPIC="+topic))
	}
	launched := time.Now()
	startLockWorkers(t, ws...)
	waitAllHealthy(ctx, t, ws)
	t.Logf("all 4 workers healthy after %s", time.Since(start).Round(time.Millisecond))

	for _, lw := range ws {
		log := lw.w.Log()
		if line, _, ok := slogLine(log, "startup lock mode"); !ok || !strings.Contains(line, "mode=worker") {
			t.Errorf("%s: run did not choose the in-worker lock: %q", lw.name, line)
		}
		if strings.Contains(log, `msg="waiting for startup lock"`) && strings.Index(log, `msg="waiting for startup lock"`) < strings.Index(log, providerLine) {
			t.Errorf("%s waited for the lock before its JVM reached the provider", lw.name)
		}
		if !strings.Contains(log, providerLine) {
			t.Errorf("%s: the provider never logged %q", lw.name, providerLine)
		}
		if n := lw.w.CountInLog(`msg="acquired startup lock"`); n != 1 {
			t.Errorf("%s logged \"acquired startup lock\" %d times, want 1", lw.name, n)
		}
	}
	tl := timelines(t, ws)
	checkOneAtATime(t, tl)
	for _, e := range tl { // the timeline, from the launch
		_, inits := connectLines(e.lw.w.Log(), "Kafka Connect worker initializing")
		_, waits := connectLines(e.lw.w.Log(), providerLine)
		if len(inits) > 0 && len(waits) > 0 {
			t.Logf("timeline %s: JVM up +%s, plugins scanned and waiting in the provider +%s, acquired +%s, joined +%s", e.lw.name,
				inits[0].Sub(launched).Round(100*time.Millisecond), waits[0].Sub(launched).Round(100*time.Millisecond),
				e.acquired.Sub(launched).Round(100*time.Millisecond), e.joined.Sub(launched).Round(100*time.Millisecond))
		}
	}
	// The JVM starts were not serialised: every JVM was up (it logged its
	// initialisation) before the first holder joined the group, which with
	// today's lock no waiter's JVM is.
	for _, lw := range ws {
		_, inits := connectLines(lw.w.Log(), "Kafka Connect worker initializing")
		if len(inits) == 0 {
			t.Errorf("%s: no \"Kafka Connect worker initializing\" line", lw.name)
			continue
		}
		if !inits[0].Before(tl[0].joined) {
			t.Errorf("%s's JVM started at %s, after the first holder joined at %s: JVM starts were serialised",
				lw.name, inits[0].Format(time.StampMilli), tl[0].joined.Format(time.StampMilli))
		}
	}
	recs, order := checkReleasedByReadiness(ctx, t, ws, tl, group["group.id"], topic)
	// Ticket order: each claim's ticket is larger than the previous one's.
	tickets := map[string]int64{}
	for _, r := range recs {
		if !r.Key.Release && !r.Tombstone && r.Value.State == "holding" {
			tickets[r.Key.Identity] = r.Value.Ticket
		}
	}
	for i := 1; i < len(order); i++ {
		if tickets[order[i]] <= tickets[order[i-1]] {
			t.Errorf("claims not in ticket order: %s (ticket %d) after %s (ticket %d)", order[i], tickets[order[i]], order[i-1], tickets[order[i-1]])
		}
	}
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// TestInWorkerLockKilledWhileBlocked: A holds the lock (a sleep that never
// gets ready, 45 s hold lease); B's and C's JVMs wait in the provider, B
// first. B's JVM alone is killed -9: its `lock acquire` child sees its
// stdin end and withdraws B's request (a tombstone, written well within B's
// waiter lease, in broker time). When A's hold lease runs out, C gets the
// lock: nobody waits for the dead B.
func TestInWorkerLockKilledWhileBlocked(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "inworkerkill")
	topic := lockTopicFor(group)
	a := sleepingHolder(ctx, t, group, 45*time.Second, topic)
	b := newLockWorker(t, group, group["group.id"]+"-b", nil, "CONNECT_INIT_LOCK_LEASE=2m", "CONNECT_INIT_LOCK_TOPIC="+topic)
	c := newLockWorker(t, group, group["group.id"]+"-c", nil, "CONNECT_INIT_LOCK_LEASE=2m", "CONNECT_INIT_LOCK_TOPIC="+topic)
	startLockWorkers(t, b)
	if err := b.w.WaitForLog(ctx, `msg="waiting for startup lock"`); err != nil {
		t.Fatal(err)
	}
	startLockWorkers(t, c) // after B queued: C's ticket is later
	if err := c.w.WaitForLog(ctx, `msg="waiting for startup lock"`); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.w.Log(), `msg="acquired startup lock"`) {
		t.Fatalf("B acquired before it was killed; the test needs it blocked in the provider")
	}
	if err := syscall.Kill(b.w.Pid(), syscall.SIGKILL); err != nil { // the JVM only, not its child
		t.Fatal(err)
	}
	<-b.w.Done()
	killedAt := time.Now()
	lockWaitFor(ctx, t, "B's child to log its withdrawal", func() bool {
		return strings.Contains(b.w.Log(), `msg="withdrew from the startup lock queue"`)
	})
	t.Logf("B's child withdrew %s after B's JVM was killed", time.Since(killedAt).Round(time.Millisecond))

	recs := readLockTopic(ctx, t, topic, group["group.id"])
	last, lastWaiting := lastMemberRecord(recs, b.identity())
	switch {
	case last == nil || lastWaiting == nil:
		t.Fatalf("no waiting record of B (%s) in %s", b.identity(), topic)
	case !last.Tombstone:
		t.Errorf("B's last member record is not a tombstone: %s", last)
	default:
		// Broker time: the request ended before it could have gone silent.
		if gap := last.Timestamp.Sub(lastWaiting.Timestamp); gap >= lock.DefaultLease {
			t.Errorf("B's withdrawal came %s after its last heartbeat, not within its lease %s", gap, lock.DefaultLease)
		} else {
			t.Logf("B withdrew %s (broker time) after its last heartbeat: %s", gap.Round(time.Millisecond), last)
		}
	}
	for _, e := range lockQueue(ctx, t, topic, group["group.id"]).Entries {
		if e.Identity == b.identity() {
			t.Errorf("B is still in the queue: %+v", e)
		}
	}

	if err := c.w.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	_, cAcq, ok := slogLine(c.w.Log(), "acquired startup lock")
	if !ok {
		t.Fatal("C has no parsable \"acquired startup lock\" line")
	}
	_, aAcq, _ := slogLine(a.w.Log(), "acquired startup lock")
	t.Logf("C acquired %s after A (A's hold lease 45s)", cAcq.Sub(aAcq).Round(time.Millisecond))
	if line, _, ok := slogLine(c.w.Log(), "releasing the startup lock holder", "holder="+a.identity(), `reason="hold lease expired"`); !ok {
		t.Errorf("C did not release A by its hold lease: %q", line)
	}
	for _, l := range strings.Split(c.w.Log(), "\n") {
		if strings.Contains(l, `msg="waiting for startup lock"`) && strings.Contains(l, "holder="+b.identity()) {
			t.Errorf("C waited behind the killed B: %s", l)
		}
	}
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// TestInWorkerLockWithdrawOnSIGTERM: A holds; B's JVM waits in the
// provider; SIGTERM to B's JVM alone (as `docker stop` sends it to PID 1):
// the provider's shutdown hook stops the child, which withdraws B's request
// (a tombstone), and the JVM exits 143 without joining.
func TestInWorkerLockWithdrawOnSIGTERM(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "inworkersig")
	topic := lockTopicFor(group)
	a := sleepingHolder(ctx, t, group, 2*time.Minute, topic)
	b := newLockWorker(t, group, group["group.id"]+"-b", nil, "CONNECT_INIT_LOCK_LEASE=2m", "CONNECT_INIT_LOCK_TOPIC="+topic)
	startLockWorkers(t, b)
	if err := b.w.WaitForLog(ctx, `msg="waiting for startup lock"`); err != nil {
		t.Fatal(err)
	}
	if line := firstLine(b.w.Log(), `msg="waiting for startup lock"`); !strings.Contains(line, "holder="+a.identity()) {
		t.Errorf("B's waiting line does not name A (%s) as the holder: %s", a.identity(), line)
	}
	sent := time.Now()
	if err := syscall.Kill(b.w.Pid(), syscall.SIGTERM); err != nil { // the JVM only
		t.Fatal(err)
	}
	code, err := b.w.ExitCode(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("B's JVM exited %d %s after SIGTERM", code, time.Since(sent).Round(time.Millisecond))
	if code != 143 {
		t.Errorf("B exited %d, want 143 (128+SIGTERM)", code)
	}
	log := b.w.Log()
	if !strings.Contains(log, `msg="withdrew from the startup lock queue"`) {
		t.Errorf("B's log lacks the withdrawal")
	}
	for _, never := range []string{`msg="acquired startup lock"`, "Joined group at generation"} {
		if strings.Contains(log, never) {
			t.Errorf("B's log has %s", never)
		}
	}
	if t.Failed() {
		t.Logf("B's log:\n%s", logTail(log, 6000))
	}
	recs := readLockTopic(ctx, t, topic, group["group.id"])
	if last, _ := lastMemberRecord(recs, b.identity()); last == nil || !last.Tombstone {
		t.Errorf("B's last member record is not a tombstone: %v", last)
	}
	snap := lockQueue(ctx, t, topic, group["group.id"])
	if len(snap.Entries) != 1 || snap.Entries[0].Identity != a.identity() || snap.Entries[0].State != lock.StateHolding {
		t.Errorf("queue after the withdrawal: %+v, want A holding alone", snap.Entries)
	}
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

//go:build integration

package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/lock"
	"github.com/connect-init/connect-init/startup"
)

// TestInWorkerLockDefaultFirstJoinsAloneThenTheRest is the default bring-up
// (issue 39, CONNECT_INIT_LOCK_JOINS=first) on real Connect workers: 4
// workers launched at the same instant through `connect-init run`, in-worker
// lock. The first worker takes the lock and joins alone; the other three
// stop waiting as soon as the group is open (Stable, its member proven
// ours) and join together: at most 3 distinct generations (bare's 2 + 1),
// no "Forcing rebalance", all /health 200, one Stable generation of 4.
func TestInWorkerLockDefaultFirstJoinsAloneThenTheRest(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "joins4")
	topic := lockTopicFor(group)
	var ws []*lockWorker
	for i := 1; i <= 4; i++ {
		// "CONNECT_INIT_LOCK_JOINS=" unsets the helpers' each: the default.
		ws = append(ws, newLockWorker(t, group, fmt.Sprintf("%s-%d", group["group.id"], i), nil,
			"CONNECT_INIT_LOCK_LEASE=2m", "CONNECT_INIT_LOCK_TOPIC="+topic, "CONNECT_INIT_LOCK_JOINS="))
	}
	startLockWorkers(t, ws...)
	waitAllHealthy(ctx, t, ws)
	t.Logf("all 4 workers healthy after %s", time.Since(start).Round(time.Millisecond))

	var first *lockWorker
	var opened []*lockWorker
	for _, lw := range ws {
		log := lw.w.Log()
		if line, _, ok := slogLine(log, "startup lock mode"); !ok || !strings.Contains(line, "mode=worker") {
			t.Errorf("%s: run did not choose the in-worker lock: %q", lw.name, line)
		}
		_, _, acquired := slogLine(log, "acquired startup lock")
		openLine, _, open := slogLine(log, startup.MsgGroupOpen)
		switch {
		case acquired && open:
			t.Errorf("%s both acquired the lock and found the group open", lw.name)
		case acquired:
			first = lw
		case open:
			opened = append(opened, lw)
			if !strings.Contains(openLine, "members=") || !strings.Contains(openLine, "CONNECT_INIT_LOCK_JOINS=first") {
				t.Errorf("%s: the open line lacks its reason: %s", lw.name, openLine)
			}
			if p, _, ok := slogLine(log, startup.ProfileMessage, `where="in-worker lock"`); !ok || !strings.Contains(p, "lock_open_ms=") {
				t.Errorf("%s: no start-up profile line with lock_open_ms: %q", lw.name, p)
			}
		default:
			t.Errorf("%s neither acquired the lock nor found the group open", lw.name)
		}
	}
	if first == nil || len(opened) != 3 {
		t.Fatalf("want one worker through the lock and three through the open group; got first %v, %d opened", first != nil, len(opened))
	}
	// The first worker joined alone: its first join comes before anyone
	// else's, and every other worker found the group open only after it.
	_, firstJoins := connectLines(first.w.Log(), "Joined group at generation")
	if len(firstJoins) == 0 {
		t.Fatalf("%s: no \"Joined group at generation\" line", first.name)
	}
	for _, lw := range opened {
		_, at, _ := slogLine(lw.w.Log(), startup.MsgGroupOpen)
		_, joins := connectLines(lw.w.Log(), "Joined group at generation")
		if len(joins) == 0 {
			t.Errorf("%s: no \"Joined group at generation\" line", lw.name)
			continue
		}
		if !joins[0].After(firstJoins[0]) || at.Before(firstJoins[0].Add(-time.Second)) {
			t.Errorf("%s found the group open at %s and joined at %s; the first worker %s joined at %s: it did not join alone",
				lw.name, at.Format(time.StampMilli), joins[0].Format(time.StampMilli), first.name, firstJoins[0].Format(time.StampMilli))
		}
	}
	// The first worker's hold was released as ready by the waiters that
	// left through the open group; left held, it would keep its permit for
	// its hold lease against a redeploy's new identities.
	for _, e := range lockQueue(ctx, t, topic, group["group.id"]).Entries {
		if e.State == lock.StateHolding {
			t.Errorf("%s still holds the startup lock after the bring-up (held for %s): nobody released it as ready", e.Identity, e.HeldFor)
		}
		if e.Identity == first.identity() && (e.State != lock.StateReleased || e.ReleaseReason != "ready") {
			t.Errorf("the first worker's entry after the bring-up: %+v, want released as ready", e)
		}
	}
	gens := map[string]bool{}
	for _, lw := range ws {
		for _, l := range strings.Split(lw.w.Log(), "\n") {
			if m := generationRE.FindStringSubmatch(l); m != nil {
				gens[m[1]] = true
			}
		}
	}
	gen := waitStableGeneration(ctx, t, group["group.id"], ws)
	t.Logf("group Stable with 4 members at generation %d; %d distinct generations joined", gen, len(gens))
	if len(gens) > 3 {
		t.Errorf("%d distinct generations joined, want at most 3 (bare's 2 + 1)", len(gens))
	}
	for _, lw := range ws {
		if n := lw.w.CountInLog("Forcing rebalance"); n > 0 {
			t.Errorf("%s logged \"Forcing rebalance\" %d times: %s", lw.name, n, firstLine(lw.w.Log(), "Forcing rebalance"))
		}
	}
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// TestExecLockIntoAnOpenGroupReadsTheGroupOnce: a worker started in the exec
// lock mode (the lock before the JVM) beside a running group of ours finds
// the group open at the lock's first look and goes to the peers step with
// the group step's report: the group gate runs once ("worker group checked"
// once). Before issue 49 the lock step always counted as a wait, and the
// peers step ran the whole group gate again (its window, the end offsets,
// the registry, our config and status topics).
func TestExecLockIntoAnOpenGroupReadsTheGroupOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "execopen")
	topic := lockTopicFor(group)
	env := []string{"CONNECT_INIT_LOCK_LEASE=2m", "CONNECT_INIT_LOCK_TOPIC=" + topic, "CONNECT_INIT_LOCK_JOINS="}
	first := newExecLockWorker(t, group, group["group.id"]+"-1", nil, env...)
	startLockWorkers(t, first)
	waitAllHealthy(ctx, t, []*lockWorker{first})
	second := newExecLockWorker(t, group, group["group.id"]+"-2", nil, env...)
	startLockWorkers(t, second)
	waitAllHealthy(ctx, t, []*lockWorker{second})
	log := second.w.Log()
	openLine, _, open := slogLine(log, startup.MsgGroupOpen)
	if !open {
		t.Fatalf("the second worker did not find the group open at the lock step:\n%s", log)
	}
	t.Logf("open line: %s", openLine)
	if n := strings.Count(log, `msg="worker group checked"`); n != 1 {
		t.Errorf("the group gate ran %d times in the second worker's start, want once (the peers step reuses the group step's report when the lock did not wait):\n%s", n, log)
	}
}

//go:build integration && long

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/lock"
)

// Real Connect workers through a lock leader's kill -9: kept out of CI's run
// (make long runs it) because the fault harness's first-deployment round,
// which CI runs, kills the lock leader under eight contenders and measures
// the queue's stall, and make chaos does it in every other round.

// TestStartupLockSurvivesLeaderFailover: 3 workers launched at once; when
// the first holder has joined the group (the two others wait), the lock topic's
// partition leader is killed -9. The queue goes on after the failover, one
// holder at a time, each released as ready (not by its hold lease).
func TestStartupLockSurvivesLeaderFailover(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	group := uniqueGroup(t, "lockfail")
	topic := lockTopicFor(group)
	var ws []*lockWorker
	for i := 1; i <= 3; i++ {
		ws = append(ws, newExecLockWorker(t, group, fmt.Sprintf("%s-%d", group["group.id"], i), nil,
			"CONNECT_INIT_LOCK_LEASE=2m", "CONNECT_INIT_LOCK_PERMITS=1", "CONNECT_INIT_LOCK_TOPIC="+topic))
	}
	startLockWorkers(t, ws...)

	// The kill comes at the worst moment: the first holder has just joined
	// the group, and the next waiter is about to write its release, which
	// must make it across the failover. The window is short (the next
	// waiter polls readiness every second), so the logs are followed
	// incrementally every 20ms rather than re-read.
	followers := make([]*logFollower, len(ws))
	for i, lw := range ws {
		followers[i] = &logFollower{path: lw.w.LogPath}
	}
	lockWaitEvery(ctx, t, 20*time.Millisecond, "a holder's first join", func() bool {
		for i, f := range followers {
			if ws[i].w.Exited() {
				t.Fatalf("%s exited:\n%s", ws[i].name, logTail(ws[i].w.Log(), 4000))
			}
			if f.seen("Joined group at generation") {
				return true
			}
		}
		return false
	})

	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	client, err := sarama.NewClient(strings.Split(cluster.Bootstrap(), ","), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := client.RefreshMetadata(topic); err != nil {
		t.Fatal(err)
	}
	leader, err := client.Leader(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	id := int(leader.ID())
	defer func() {
		rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer rcancel()
		if err := cluster.Start(id); err != nil {
			t.Errorf("restart broker %d: %v", id, err)
			return
		}
		if err := cluster.WaitStarted(rctx, id); err != nil {
			t.Errorf("broker %d did not come back: %v", id, err)
		}
	}()
	cluster.Kill(id)
	killedAt := time.Now()
	t.Logf("killed broker %d, the leader of %s, %s after the start", id, topic, killedAt.Sub(start).Round(time.Millisecond))

	// The new leader, for the record.
	lockWaitFor(ctx, t, "a new leader of "+topic, func() bool {
		if err := client.RefreshMetadata(topic); err != nil {
			return false
		}
		l, err := client.Leader(topic, 0)
		return err == nil && int(l.ID()) != id
	})
	nl, _ := client.Leader(topic, 0)
	t.Logf("broker %d leads %s %s after the kill", nl.ID(), topic, time.Since(killedAt).Round(time.Millisecond))

	waitAllHealthy(ctx, t, ws)
	t.Logf("all 3 workers healthy %s after the kill", time.Since(killedAt).Round(time.Millisecond))

	tl := timelines(t, ws)
	checkOneAtATime(t, tl)
	after := 0
	for _, e := range tl {
		if e.acquired.After(killedAt) {
			after++
		}
		if n := e.lw.w.CountInLog(`msg="acquired startup lock"`); n != 1 {
			t.Errorf("%s logged \"acquired startup lock\" %d times", e.lw.name, n)
		}
	}
	if after == 0 {
		t.Errorf("every worker acquired before the kill: the failover was not exercised")
	}
	t.Logf("%d of 3 acquisitions after the kill", after)
	for _, lw := range ws {
		for _, l := range strings.Split(lw.w.Log(), "\n") {
			if strings.Contains(l, "component=connect-init") && (strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR")) {
				t.Logf("%s: %s", lw.name, l)
			}
		}
		if line, _, ok := slogLine(lw.w.Log(), "releasing the startup lock holder", `reason="hold lease expired"`); ok {
			t.Errorf("%s released a holder by lease expiry after the failover (a ready release was lost?): %s", lw.name, line)
		}
	}

	recs := readLockTopic(ctx, t, topic, group["group.id"])
	order := checkLockLog(t, recs, "ready")
	if len(order) != 3 {
		t.Errorf("lock topic has %d standing claims, want 3: %v", len(order), order)
	}
	for i, e := range tl {
		if i < len(order) && order[i] != e.lw.identity() {
			t.Errorf("lock topic claim order %v differs from the logs' acquisition order at %d (%s)", order, i, e.lw.identity())
		}
	}
	snap := lockQueue(ctx, t, topic, group["group.id"])
	holding := 0
	for _, e := range snap.Entries {
		t.Logf("queue: %s %s ticket %d held_for %s release %q by %s", e.Identity, e.State, e.Ticket, e.HeldFor.Round(time.Millisecond), e.ReleaseReason, e.ReleasedBy)
		if e.State == lock.StateHolding {
			holding++
		}
		if e.State == lock.StateWaiting || e.State == lock.StateDead {
			t.Errorf("entry still queued after all started: %+v", e)
		}
	}
	if holding > 1 {
		t.Errorf("%d holders in the queue, want at most 1", holding)
	}
	if t.Failed() {
		for _, r := range recs {
			t.Logf("record %s", r)
		}
	}
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

// logFollower reads a growing log file incrementally, so that it can be
// polled often without re-reading what it has seen.
type logFollower struct {
	path  string
	off   int64
	carry string // the end of what was read, for matches across reads
	found bool
}

// seen reports whether substr has appeared in the log (sticky).
func (f *logFollower) seen(substr string) bool {
	if f.found {
		return true
	}
	fh, err := os.Open(f.path)
	if err != nil {
		return false
	}
	defer fh.Close()
	b, _ := io.ReadAll(io.NewSectionReader(fh, f.off, 1<<40))
	f.off += int64(len(b))
	text := f.carry + string(b)
	if strings.Contains(text, substr) {
		f.found = true
		return true
	}
	if len(text) > len(substr) {
		text = text[len(text)-len(substr):]
	}
	f.carry = text
	return false
}

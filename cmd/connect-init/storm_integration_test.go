//go:build integration && long

package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/gate"
)

// TestRebalanceStormInProgress is the foreign-member loop while it runs: our
// cluster P runs one bare worker; a bare worker of cluster Q, with the same
// group.id and its own config topic, joins. The two directions loop
// differently, as Kafka 4.3.1 shows:
//
//   - Q's config topic shorter than ours: Q logs "does not match group
//     assignment ... Forcing rebalance" thousands of times, but rejoins
//     with the same metadata, so the coordinator answers with the same
//     generation and every DescribeGroups shows one unchanging Stable
//     group in which Q reports an offset behind the assignment. There is
//     no storm to count; Q is proven foreign by RuleStuckBehind (behind
//     records of our config topic that make every reader rejoin).
//   - Q's config topic longer: the leader P is behind, every assignment
//     is error=1 (CONFIG_MISMATCH), and the generation climbs by thousands
//     a minute: doctor says group-rebalance-storm first, and Q is foreign
//     by its offset ahead of our topic.
//
// Either way doctor exits 1 naming Q, a worker of ours through
// connect-init run refuses naming Q, and once Q's worker stops, doctor and
// prepare see the group healthy.
func TestRebalanceStormInProgress(t *testing.T) {
	for _, c := range []struct {
		name       string
		ours, q    int // connectors in each cluster's config topic
		foreignWhy string
		storm      bool
	}{
		{"foreign config topic shorter", 5, 1, gate.RuleStuckBehind, false},
		{"foreign config topic longer", 1, 5, "config-offset-ahead", true},
	} {
		t.Run(c.name, func(t *testing.T) { stormScenario(t, c.ours, c.q, c.foreignWhy, c.storm) })
	}
}

func stormScenario(t *testing.T, oursN, qN int, foreignWhy string, storm bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	g := uniqueGroup(t, "storm")["group.id"]
	ours, q := clusterTopics(g, "p"), clusterTopics(g, "q")
	seedConfigTopic(ctx, t, "q", q, "q-src", qN)
	pw := startForeign(ctx, t, "p", ours, oursN, false, nil, anyOffset)
	qProps, err := cluster.WorkerProps(q)
	if err != nil {
		t.Fatal(err)
	}
	qw := startTestWorker(t, g+"-q", qProps)
	deadline := time.Now().Add(2 * time.Minute)
	looping := func() int {
		return qw.CountInLog("Forcing rebalance") + pw.CountInLog("Forcing rebalance") + qw.CountInLog("Assignment{error=1") + pw.CountInLog("Assignment{error=1")
	}
	for looping() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("no rebalance loop after 2 min; Q's log:\n%s", logTail(qw.Log(), 4000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	pProps, err := cluster.WorkerProps(ours)
	if err != nil {
		t.Fatal(err)
	}
	env := connectInitEnv(pProps)

	start := time.Now()
	res, doc := doctorJSON(ctx, t, env)
	took := time.Since(start)
	t.Logf("doctor took %s; the group: %d looks, window %+v", took.Round(time.Millisecond), doc.Cluster.Group.Snapshots, doc.Cluster.Group.Window)
	if res.code != 1 || len(doc.Findings) == 0 {
		t.Fatalf("doctor exited %d; want 1; findings %+v", res.code, doc.Findings)
	}
	if storm {
		if f := doc.Findings[0]; f.ID != checks.IDGroupRebalanceStorm {
			t.Fatalf("doctor's first finding is %s, want %s; findings %+v", f.ID, checks.IDGroupRebalanceStorm, doc.Findings)
		}
		f := doc.Findings[0]
		t.Logf("doctor: [%s] %s; evidence: %s; fix: %s", f.ID, f.Summary, f.Evidence, f.Fix)
	}
	var foreign *checks.Result
	for i, f := range findingsByID(doc)[checks.IDForeignGroupMember] {
		if strings.Contains(f.Summary, qw.Spec.RESTURL) {
			foreign = &findingsByID(doc)[checks.IDForeignGroupMember][i]
		} else {
			t.Errorf("a member other than Q's is called foreign: %s", f.Summary)
		}
	}
	if foreign == nil || !strings.Contains(foreign.Evidence, foreignWhy) {
		t.Fatalf("no foreign-group-member finding naming Q (%s) by %s: %+v", qw.Spec.RESTURL, foreignWhy, doc.Findings)
	}
	t.Logf("doctor: [%s] %s; evidence: %s", foreign.ID, foreign.Summary, foreign.Evidence)
	text := runCLI(ctx, t, env, "doctor")
	stormAt, brokersAt := strings.Index(text.stdout, "["+checks.IDGroupRebalanceStorm+"]"), strings.Index(text.stdout, "\nBrokers ")
	if text.code != 1 || !strings.Contains(text.stdout, "["+checks.IDForeignGroupMember+"]") || storm && (stormAt < 0 || stormAt > brokersAt) {
		t.Errorf("doctor (text) exited %d; want 1, the foreign member named and, in a storm, the storm above every section:\n%s", text.code, text.stdout)
	}

	code, log, _ := runOurs(ctx, t, "p2", ours, "run")
	msg := assertRefused(t, code, log, qw.Spec.RESTURL, foreignWhy)
	t.Logf("connect-init run: %s", msg)

	w := startWatch(ctx, t, env)
	w.waitFirst(t, checks.IDForeignGroupMember, 60*time.Second)
	qw.Stop(20 * time.Second)
	w.waitCleared(t, checks.IDForeignGroupMember, 90*time.Second)
	w.stop(t)
	healthy := false
	for end := time.Now().Add(90 * time.Second); time.Now().Before(end) && !healthy; {
		res, doc = doctorJSON(ctx, t, env)
		healthy = res.code == 0 && !slices.ContainsFunc(doc.Findings, func(f checks.Result) bool { return f.ID == checks.IDGroupRebalanceStorm })
		if !healthy {
			time.Sleep(time.Second)
		}
	}
	if !healthy {
		t.Fatalf("after Q stopped, doctor still exits %d: %+v", res.code, doc.Findings)
	}
	if code, log, _ := runOurs(ctx, t, "p3", ours, "prepare"); code != 0 {
		t.Fatalf("after Q stopped, prepare exited %d:\n%s", code, logTail(log, 4000))
	}
}

// waitCleared reads documents until one says finding id cleared.
func (w *doctorWatch) waitCleared(t *testing.T, id string, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	n := 0
	for {
		select {
		case d, ok := <-w.docs:
			if !ok {
				t.Fatalf("doctor --watch ended after %d documents; stderr:\n%s", n, logTail(w.stderr.String(), 3000))
			}
			n++
			t.Logf("doctor --watch document %d: exit %d, %d findings, changes %+v", n, d.ExitCode, len(d.Findings), d.Changes)
			if d.Changes == nil {
				t.Fatalf("doctor --watch document %d has no changes", n)
			}
			for _, f := range d.Changes.Cleared {
				if f.ID == id {
					t.Logf("doctor --watch: document %d clears %s; joined %v, left %v, state %s -> %s", n, id, d.Changes.Joined, d.Changes.Left, d.Changes.StateFrom, d.Changes.StateTo)
					return
				}
			}
		case <-deadline:
			t.Fatalf("doctor --watch did not clear %s within %s (%d documents); stderr:\n%s", id, within, n, logTail(w.stderr.String(), 6000))
		}
	}
}

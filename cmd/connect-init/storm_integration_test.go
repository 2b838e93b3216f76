//go:build integration

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
// group.id and its own config topic, joins and the group rebalances in a
// loop. With Q's config topic shorter than ours, Q reports the same offset
// behind our assignment in every generation (one snapshot calls it
// unverified at most); with it longer, Q is ahead. Either way, while the
// loop runs:
//
//   - doctor exits 1 and says group-rebalance-storm first, naming Q's
//     member as foreign within its window;
//   - a worker of ours through connect-init run refuses, naming Q;
//
// and once Q's worker stops, doctor and prepare see the group healthy.
func TestRebalanceStormInProgress(t *testing.T) {
	for _, c := range []struct {
		name       string
		ours, q    int // connectors in each cluster's config topic
		foreignWhy string
	}{
		{"foreign config topic shorter", 5, 1, gate.RuleStuckBehind},
		{"foreign config topic longer", 1, 5, "config-offset-ahead"},
	} {
		t.Run(c.name, func(t *testing.T) { stormScenario(t, c.ours, c.q, c.foreignWhy) })
	}
}

func stormScenario(t *testing.T, oursN, qN int, foreignWhy string) {
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
	for qw.CountInLog("Forcing rebalance")+pw.CountInLog("Forcing rebalance") < 3 {
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
	if res.code != 1 || len(doc.Findings) == 0 || doc.Findings[0].ID != checks.IDGroupRebalanceStorm {
		t.Fatalf("doctor exited %d in %s; want 1 with %s first; findings %+v", res.code, took.Round(time.Millisecond), checks.IDGroupRebalanceStorm, doc.Findings)
	}
	storm := doc.Findings[0]
	t.Logf("doctor (%s): [%s] %s; evidence: %s; fix: %s", took.Round(time.Millisecond), storm.ID, storm.Summary, storm.Evidence, storm.Fix)
	var foreign *checks.Result
	for i, f := range findingsByID(doc)[checks.IDForeignGroupMember] {
		if strings.Contains(f.Summary, qw.Spec.RESTURL) {
			foreign = &findingsByID(doc)[checks.IDForeignGroupMember][i]
		}
	}
	if foreign == nil || !strings.Contains(foreign.Evidence, foreignWhy) {
		t.Fatalf("no foreign-group-member finding naming Q (%s) by %s: %+v", qw.Spec.RESTURL, foreignWhy, doc.Findings)
	}
	if foreignWhy == gate.RuleStuckBehind && !strings.Contains(storm.Evidence, qw.Spec.RESTURL) {
		t.Errorf("the storm's evidence does not name Q's member, whose offset forces it: %s", storm.Evidence)
	}
	text := runCLI(ctx, t, env, "doctor")
	if first := firstLine(text.stdout, "["); text.code != 1 || !strings.Contains(first, checks.IDGroupRebalanceStorm) {
		t.Errorf("doctor (text) exited %d, first finding %q:\n%s", text.code, first, text.stdout)
	}

	code, log, _ := runOurs(ctx, t, "p2", ours, "run")
	msg := assertRefused(t, code, log, qw.Spec.RESTURL, foreignWhy)
	t.Logf("connect-init run: %s", msg)

	qw.Stop(20 * time.Second)
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

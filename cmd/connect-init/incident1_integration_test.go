//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/gate"
)

// TestIncident1ForeignGroupMember reproduces the first incident on real
// Kafka and real Connect: cluster B (one worker, group.id X, config topic
// X-b-configs, a few connectors, so its config offset is well above 0)
// runs; cluster A's worker comes up with the same group.id but its own
// config topic X-a-configs.
//
//   - Without connect-init, A's worker loops on "Forcing rebalance".
//   - With connect-init run, A's worker never starts: exit 1, and the
//     message names B's member and URL.
//   - connect-init doctor reports foreign-group-member with that evidence.
func TestIncident1ForeignGroupMember(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	base := uniqueGroup(t, "inc1")
	x := base["group.id"]
	topics := func(cl string) map[string]string {
		return map[string]string{
			"group.id":             x,
			"config.storage.topic": x + "-" + cl + "-configs",
			"offset.storage.topic": x + "-" + cl + "-offsets",
			"status.storage.topic": x + "-" + cl + "-status",
		}
	}

	// Cluster B.
	bProps, err := cluster.WorkerProps(topics("b"))
	if err != nil {
		t.Fatal(err)
	}
	bWorker := startTestWorker(t, x+"-b", bProps)
	bSpec := bWorker.Spec
	if err := bWorker.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("b-source-%d", i)
		input := filepath.Join(bSpec.Dir, name+".txt")
		if err := os.WriteFile(input, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		putConnector(ctx, t, bSpec.RESTURL, name, map[string]string{
			"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
			"tasks.max":       "1", "file": input, "topic": x + "-lines",
		})
		waitConnectorRunning(ctx, t, bSpec.RESTURL, name)
	}
	bMember := waitStableMember(ctx, t, x, bProps["config.storage.topic"], bSpec.RESTURL)
	bOffset := *bMember.ConfigOffset
	t.Logf("cluster B: member %s, URL %s, reported config offset %d, config topic %s", bMember.MemberID, bMember.URL, bOffset, bProps["config.storage.topic"])
	if bOffset < 5 {
		t.Fatalf("cluster B's config offset %d is not well above 0", bOffset)
	}

	aProps := topics("a")
	t.Run("without connect-init the worker loops", func(t *testing.T) {
		props, err := cluster.WorkerProps(aProps)
		if err != nil {
			t.Fatal(err)
		}
		w := startTestWorker(t, x+"-a-raw", props)
		start := time.Now()
		const want = 3
		var firstAt time.Duration
		deadline := time.After(90 * time.Second)
		for w.CountInLog("Forcing rebalance") < want {
			if firstAt == 0 && w.CountInLog("Forcing rebalance") > 0 {
				firstAt = time.Since(start)
			}
			select {
			case <-deadline:
				t.Fatalf("A's worker logged \"Forcing rebalance\" %d times in 90s, want >= %d; log tail:\n%s",
					w.CountInLog("Forcing rebalance"), want, logTail(w.Log(), 6000))
			case <-w.Done():
				t.Fatalf("A's worker exited; log tail:\n%s", logTail(w.Log(), 6000))
			case <-time.After(200 * time.Millisecond):
			}
		}
		reached := time.Since(start)
		// Observe a little longer to report the loop's rate.
		time.Sleep(10 * time.Second)
		total, window := w.CountInLog("Forcing rebalance"), time.Since(start)
		t.Logf("A's worker: first \"Forcing rebalance\" after %s, %d after %s, %d after %s",
			firstAt.Round(time.Millisecond), want, reached.Round(time.Millisecond), total, window.Round(time.Second))
		for _, pat := range []string{"got assignment: Assignment{", "is behind group assignment", "does not match group assignment"} {
			if line := firstLine(w.Log(), pat); line != "" {
				t.Logf("A's log: %s", line)
			}
		}
		assignment := firstLine(w.Log(), "got assignment: Assignment{")
		if !strings.Contains(assignment, "leaderUrl='"+bSpec.RESTURL) {
			t.Errorf("A's assignment does not come from B's leader %s: %s", bSpec.RESTURL, assignment)
		}
		if mismatch := firstLine(w.Log(), "does not match group assignment"); !strings.Contains(mismatch, "Current config state offset -1 does not match group assignment") {
			t.Errorf("unexpected mismatch line: %s", mismatch)
		}

		// doctor from A's side while the loop runs: informative only, the
		// group is rarely Stable then.
		res, doc := doctorJSON(ctx, t, connectInitEnv(props))
		var ids []string
		for _, f := range doc.Findings {
			ids = append(ids, string(f.Severity)+":"+f.ID)
		}
		state := ""
		if doc.Cluster.Group != nil {
			state = fmt.Sprintf("%s (stable seen %v, %d looks)", doc.Cluster.Group.State, doc.Cluster.Group.StableSeen, doc.Cluster.Group.Snapshots)
		}
		t.Logf("doctor during the loop: exit %d, group %s, findings %v", res.code, state, ids)
	})

	t.Run("connect-init run refuses to start the worker", func(t *testing.T) {
		props, err := cluster.WorkerProps(aProps)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := cluster.NewWorkerSpec(x+"-a-init", props, 0)
		if err != nil {
			t.Fatal(err)
		}
		argv := append([]string{binary, "run", "--"}, spec.Argv...)
		start := time.Now()
		w, err := cluster.StartWorkerCommand(spec, argv, connectInitEnv(props))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Kill()
		code, err := w.ExitCode(ctx)
		if err != nil {
			t.Fatal(err)
		}
		log := w.Log()
		t.Logf("connect-init run exited %d after %s", code, time.Since(start).Round(time.Millisecond))
		if code != 1 {
			t.Fatalf("connect-init run exited %d, want 1; log:\n%s", code, log)
		}
		// The JVM never started: connect-init did not exec, and nothing
		// Connect writes at startup is in the log.
		for _, never := range []string{"starting the worker", "Kafka Connect worker initializ", "ConnectDistributed", "Kafka version"} {
			if strings.Contains(log, never) {
				t.Errorf("the worker started (log has %q):\n%s", never, log)
			}
		}
		member := waitStableMember(ctx, t, x, bProps["config.storage.topic"], bSpec.RESTURL)
		msg := firstLine(log, "group gate")
		t.Logf("connect-init's refusal: %s", msg)
		for _, want := range []string{member.MemberID, member.URL, member.ClientHost, fmt.Sprintf("reported config offset %d", *member.ConfigOffset),
			"our config topic's end offset 0", "CONNECT_GROUP_ID"} {
			if !strings.Contains(msg, want) {
				t.Errorf("the refusal lacks %q: %s", want, msg)
			}
		}
	})

	t.Run("doctor reports the foreign member", func(t *testing.T) {
		props, err := cluster.WorkerProps(aProps)
		if err != nil {
			t.Fatal(err)
		}
		env := connectInitEnv(props)
		member := waitStableMember(ctx, t, x, bProps["config.storage.topic"], bSpec.RESTURL)
		res, doc := doctorJSON(ctx, t, env)
		if res.code != 1 || doc.ExitCode != 1 {
			t.Errorf("doctor --json exited %d (document %d), want 1", res.code, doc.ExitCode)
		}
		fs := findingsByID(doc)[checks.IDForeignGroupMember]
		if len(fs) != 1 {
			t.Fatalf("want one foreign-group-member finding, got %+v (all: %+v)", fs, doc.Findings)
		}
		t.Logf("doctor --json output:\n%s", res.stdout)
		f := fs[0]
		t.Logf("doctor finding: [%s] %s\n  evidence: %s\n  fix: %s", f.ID, f.Summary, f.Evidence, f.Fix)
		if f.Severity != checks.Error || f.Subject != member.MemberID {
			t.Errorf("finding: %+v", f)
		}
		for _, want := range []string{member.MemberID, member.URL, member.ClientHost, fmt.Sprintf("reported config offset %d vs our config topic's end offset 0", *member.ConfigOffset)} {
			if !strings.Contains(f.Evidence, want) {
				t.Errorf("evidence lacks %q: %s", want, f.Evidence)
			}
		}
		g := doc.Cluster.Group
		if g == nil || len(g.Foreign) != 1 || g.Foreign[0].MemberID != member.MemberID || g.ConfigEndOffset != 0 || g.LeaderURL != member.URL ||
			g.AssignmentOffset == nil || *g.AssignmentOffset != *member.ConfigOffset {
			t.Errorf("group in the document: %+v", g)
		}

		text := runCLI(ctx, t, env, "doctor")
		if text.code != 1 || !strings.Contains(text.stdout, "[foreign-group-member]") || !strings.Contains(text.stdout, member.MemberID) ||
			!strings.Contains(text.stdout, member.URL) {
			t.Errorf("doctor (text) exited %d:\n%s", text.code, text.stdout)
		}
		t.Logf("doctor text output:\n%s", text.stdout)
	})
}

// putConnector creates or updates a connector through the REST API.
func putConnector(ctx context.Context, t *testing.T, base, name string, config map[string]string) {
	t.Helper()
	body, _ := json.Marshal(config)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base+"/connectors/"+name+"/config", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT connector %s: HTTP %d", name, resp.StatusCode)
	}
}

// waitStableMember waits for a Stable snapshot of the group with a member
// advertising urlPrefix and returns that member, as the group gate sees it
// with configTopic as "our" config topic.
func waitStableMember(ctx context.Context, t *testing.T, groupID, configTopic, urlPrefix string) gate.GroupMember {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	client, err := sarama.NewClient(strings.Split(cluster.Bootstrap(), ","), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate.GroupGate{Client: client, Admin: admin, GroupID: groupID, ConfigTopic: configTopic, StableWait: 20 * time.Second}
	var last *gate.GroupReport
	for ctx.Err() == nil {
		rep, err := g.Check(ctx)
		if err == nil && rep.StableSeen {
			last = rep
			for _, m := range rep.Members {
				if strings.HasPrefix(m.URL, urlPrefix) && m.ConfigOffset != nil {
					return m
				}
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("no Stable snapshot of group %s with a member at %s; last: %+v", groupID, urlPrefix, last)
	return gate.GroupMember{}
}

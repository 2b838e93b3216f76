//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	diag "github.com/connect-init/connect-init/doctor"
	"github.com/connect-init/connect-init/gate"
)

// cliResult is one run of the connect-init binary.
type cliResult struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// runCLI runs the built connect-init with env and args and waits for it.
func runCLI(ctx context.Context, t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	res := cliResult{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		t.Fatalf("run connect-init %v: %v", args, err)
	}
	return res
}

// doctorJSON runs `connect-init doctor --json` and decodes its document.
func doctorJSON(ctx context.Context, t *testing.T, env []string) (cliResult, diag.Document) {
	t.Helper()
	res := runCLI(ctx, t, env, "doctor", "--json")
	var wrapped struct {
		Result diag.Document `json:"result"`
	}
	err := json.Unmarshal([]byte(res.stdout), &wrapped)
	doc := wrapped.Result
	if verr := validate(schemaFor(t, "doctor"), res.stdout); verr != nil {
		t.Errorf("doctor --json on a real cluster does not validate against docs/schemas/doctor.json: %v", verr)
	}
	if err != nil {
		t.Fatalf("doctor --json printed no valid JSON (%v); exit %d\nstdout:\n%s\nstderr:\n%s", err, res.code, res.stdout, res.stderr)
	}
	return res, doc
}

func findingsByID(doc diag.Document) map[string][]checks.Result {
	m := map[string][]checks.Result{}
	for _, f := range doc.Findings {
		m[f.ID] = append(m[f.ID], f)
	}
	return m
}

// connectInitEnv is the environment of connect-init for a worker with props.
func connectInitEnv(props map[string]string, extra ...string) []string {
	env := append(baseEnv(), envFromProps(props)...)
	env = append(env, "CONNECT_INIT_LOCK=false", "CONNECT_INIT_TIMEOUT=2m")
	return append(env, extra...)
}

// TestDoctorHealthyCluster: topics prepared by `connect-init prepare`, one
// running worker: doctor finds no error, exits 0, and its JSON describes
// the group.
func TestDoctorHealthyCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	props, err := cluster.WorkerProps(uniqueGroup(t, "doc-healthy"))
	if err != nil {
		t.Fatal(err)
	}
	env := connectInitEnv(props)
	if res := runCLI(ctx, t, env, "prepare"); res.code != 0 {
		t.Fatalf("prepare exited %d:\n%s", res.code, res.stderr)
	}
	w := startTestWorker(t, props["group.id"], props)
	spec := w.Spec
	if err := w.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}

	res, doc := doctorJSON(ctx, t, env)
	t.Logf("doctor --json took %s, exit %d, counts %+v", res.took.Round(time.Millisecond), res.code, doc.Counts)
	for _, f := range doc.Findings {
		t.Logf("finding %s [%s] %s: %s", f.Severity, f.ID, f.Summary, f.Evidence)
		if f.Severity == checks.Error {
			t.Errorf("error finding on a healthy cluster: %+v", f)
		}
	}
	if res.code != 0 || doc.ExitCode != 0 {
		t.Fatalf("doctor exited %d (document says %d)\nstderr:\n%s", res.code, doc.ExitCode, res.stderr)
	}
	if doc.SchemaVersion != diag.SchemaVersion || doc.GroupID != props["group.id"] {
		t.Errorf("document header: %+v", doc)
	}
	c := doc.Cluster
	if c.Brokers == nil || c.Brokers.Reachable != 3 || len(c.Topics) != 3 || c.Coordinator == nil || c.Group == nil {
		t.Fatalf("cluster summary incomplete: %+v", c)
	}
	if c.Brokers.Mode != "kraft" {
		t.Errorf("doctor says the cluster's mode is %q, want kraft", c.Brokers.Mode)
	}
	if q := c.Brokers.Quorum; q == nil || q.Lost || q.LeaderID < 0 || len(q.Voters) == 0 {
		t.Errorf("doctor's controller quorum on a healthy cluster: %+v", q)
	}
	for _, tp := range c.Topics {
		if !tp.Exists || tp.CleanupPolicy != "compact" {
			t.Errorf("topic %+v", tp)
		}
	}
	g := c.Group
	if g.State != gate.GroupStable || g.ProtocolType != "connect" || len(g.Members) != 1 || !g.Members[0].Leader ||
		!strings.HasPrefix(g.Members[0].URL, spec.RESTURL) || len(g.Foreign) != 0 {
		t.Errorf("group: %+v", g)
	}
	if g.ConfigEndOffset < 1 || g.ConfigStableOffset != g.ConfigEndOffset {
		t.Errorf("config offsets: end %d, stable %d", g.ConfigEndOffset, g.ConfigStableOffset)
	}
	if len(c.Peers) != 1 || !c.Peers[0].Reachable || !c.Peers[0].Leader {
		t.Errorf("peers: %+v", c.Peers)
	}

	text := runCLI(ctx, t, env, "doctor")
	if text.code != 0 || !strings.Contains(text.stdout, "Group        Stable") || !strings.Contains(text.stdout, "Findings: 0 error(s)") {
		t.Errorf("doctor (text) exited %d:\n%s", text.code, text.stdout)
	}
	t.Logf("doctor text output:\n%s", text.stdout)
}

// TestDoctorWrongTopicLayout: a config topic with 3 partitions and a status
// topic with cleanup.policy=delete, created beforehand by someone else.
func TestDoctorWrongTopicLayout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	props, err := cluster.WorkerProps(uniqueGroup(t, "doc-layout"))
	if err != nil {
		t.Fatal(err)
	}
	admin := newAdmin(t)
	del := "delete"
	compact := "compact"
	if err := admin.CreateTopic(props["config.storage.topic"], &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: 3,
		ConfigEntries: map[string]*string{"cleanup.policy": &compact}}, false); err != nil {
		t.Fatal(err)
	}
	if err := admin.CreateTopic(props["status.storage.topic"], &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 3,
		ConfigEntries: map[string]*string{"cleanup.policy": &del}}, false); err != nil {
		t.Fatal(err)
	}
	env := connectInitEnv(props)

	var (
		res cliResult
		doc diag.Document
	)
	// Topic creation is asynchronous: wait until doctor sees both topics.
	for {
		res, doc = doctorJSON(ctx, t, env)
		if len(findingsByID(doc)[checks.IDConfigTopicPartitions]) > 0 && len(findingsByID(doc)[checks.IDTopicNotCompacted]) > 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("doctor never reported the layout: %+v", doc.Findings)
		}
		time.Sleep(time.Second)
	}
	byID := findingsByID(doc)
	if f := byID[checks.IDConfigTopicPartitions][0]; f.Severity != checks.Error || f.Subject != props["config.storage.topic"] ||
		!strings.Contains(f.Evidence, "3 partitions") {
		t.Errorf("config-topic-partitions: %+v", f)
	}
	if f := byID[checks.IDTopicNotCompacted][0]; f.Severity != checks.Error || f.Subject != props["status.storage.topic"] ||
		!strings.Contains(f.Evidence, "cleanup.policy=delete") {
		t.Errorf("topic-not-compacted: %+v", f)
	}
	if len(byID[checks.IDTopicNotCompacted]) != 1 {
		t.Errorf("only the status topic is not compacted: %+v", byID[checks.IDTopicNotCompacted])
	}
	if f := byID[checks.IDInternalTopicMissing]; len(f) != 1 || f[0].Severity != checks.Warning || f[0].Subject != props["offset.storage.topic"] {
		t.Errorf("internal-topic-missing: %+v", f)
	}
	if res.code != 1 || doc.ExitCode != 1 {
		t.Errorf("doctor exited %d (document %d), want 1", res.code, doc.ExitCode)
	}
	// doctor created nothing.
	mds, err := admin.DescribeTopics([]string{props["offset.storage.topic"]})
	if err != nil || len(mds) != 1 || !errors.Is(mds[0].Err, sarama.ErrUnknownTopicOrPartition) {
		t.Errorf("doctor must not create the offset topic: %v %+v", err, mds)
	}

	text := runCLI(ctx, t, env, "doctor")
	for _, want := range []string{"[config-topic-partitions]", "[topic-not-compacted]", "ERROR", "WARNING"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("doctor text lacks %q:\n%s", want, text.stdout)
		}
	}
	if text.code != 1 {
		t.Errorf("doctor (text) exited %d, want 1", text.code)
	}
	t.Logf("doctor text output:\n%s", text.stdout)
}

// TestDoctorBadConfiguration: bad settings exit 2 before any look; with
// --json stdout is still one document, its errors naming the setting
// (issue 29: it used to be empty).
func TestDoctorBadConfiguration(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := runCLI(ctx, t, append(baseEnv(), "CONNECT_GROUP_ID=x"), "doctor", "--json")
	var doc struct {
		ExitCode int `json:"exit_code"`
		Errors   []struct {
			Setting string `json:"setting"`
		} `json:"errors"`
	}
	err := json.Unmarshal([]byte(res.stdout), &doc)
	// Every missing required setting is one entry, and one event on stderr.
	if res.code != 2 || !strings.Contains(res.stderr, "CONNECT_BOOTSTRAP_SERVERS") || err != nil || doc.ExitCode != 2 ||
		len(doc.Errors) == 0 || doc.Errors[0].Setting != "CONNECT_BOOTSTRAP_SERVERS" || len(doc.Errors) != strings.Count(res.stderr, `msg="bad configuration"`) {
		t.Errorf("exit %d, stdout %q (%v), stderr:\n%s", res.code, res.stdout, err, res.stderr)
	}
}

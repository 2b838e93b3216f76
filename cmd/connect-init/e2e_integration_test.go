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

	"github.com/connect-init/connect-init/internal/testbed"
)

// envFromProps and baseEnv are shorthands for the test bed's helpers.
func envFromProps(props map[string]string) []string { return testbed.EnvFromProps(props) }

func baseEnv() []string { return testbed.BaseEnv() }

// uniqueGroup returns worker properties for a fresh Connect cluster name.
func uniqueGroup(t *testing.T, name string) map[string]string {
	id := fmt.Sprintf("%s-%d", name, time.Now().UnixNano()%1e9)
	return map[string]string{
		"group.id":             id,
		"config.storage.topic": id + "-configs",
		"offset.storage.topic": id + "-offsets",
		"status.storage.topic": id + "-status",
	}
}

// TestE2EWorkerStartsThroughConnectInit is the walking skeleton: a real
// Connect worker launched through `connect-init run -- <java ...>` on a
// new cluster starts with the same PID, without connect-init's variables,
// and a FileStreamSource connector created through REST moves records.
func TestE2EWorkerStartsThroughConnectInit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	props, err := cluster.WorkerProps(uniqueGroup(t, "e2e"))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cluster.NewWorkerSpec("e2e", props, 0)
	if err != nil {
		t.Fatal(err)
	}
	env := append(baseEnv(), envFromProps(props)...)
	env = append(env, "CONNECT_INIT_LOCK=false", "CONNECT_INIT_TIMEOUT=2m", "CONNECT_INIT_LOCK_TOPIC=must-not-reach-the-worker")
	argv := append([]string{binary, "run", "--"}, spec.Argv...)
	w, err := cluster.StartWorkerCommand(spec, argv, env)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop(20 * time.Second)
	if err := w.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}

	// connect-init exec'd: the process we started is now the JVM.
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", w.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(cmdline, []byte("org.apache.kafka.connect.cli.ConnectDistributed")) {
		t.Fatalf("pid %d is not the Connect worker: %q", w.Pid(), cmdline)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", w.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(environ, []byte("CONNECT_INIT_")) {
		t.Fatalf("the worker's environment still has CONNECT_INIT_* variables")
	}
	if !bytes.Contains(environ, []byte("CONNECT_GROUP_ID="+props["group.id"])) {
		t.Fatalf("the worker's environment lost CONNECT_GROUP_ID")
	}
	for _, want := range []string{"all brokers up", "created internal topic", "starting the worker"} {
		if !strings.Contains(w.Log(), want) {
			t.Errorf("connect-init did not log %q", want)
		}
	}

	// The internal topics connect-init created have the right layout.
	admin := newAdmin(t)
	mds, err := admin.DescribeTopics([]string{props["config.storage.topic"], props["offset.storage.topic"], props["status.storage.topic"]})
	if err != nil {
		t.Fatal(err)
	}
	wantParts := map[string]int{props["config.storage.topic"]: 1, props["offset.storage.topic"]: 5, props["status.storage.topic"]: 2}
	for _, md := range mds {
		if len(md.Partitions) != wantParts[md.Name] {
			t.Errorf("topic %s has %d partitions, want %d", md.Name, len(md.Partitions), wantParts[md.Name])
		}
		assertCompacted(t, admin, md.Name)
	}

	// A FileStreamSource connector reaches RUNNING and moves records.
	input := filepath.Join(spec.Dir, "input.txt")
	lines := []string{"alpha", "beta", "gamma"}
	if err := os.WriteFile(input, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	topic := props["group.id"] + "-lines"
	body, _ := json.Marshal(map[string]any{"name": "file-source", "config": map[string]string{
		"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
		"tasks.max":       "1", "file": input, "topic": topic,
	}})
	resp, err := http.Post(spec.RESTURL+"/connectors", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create connector: HTTP %d", resp.StatusCode)
	}
	waitConnectorRunning(ctx, t, spec.RESTURL, "file-source")
	got := consumeValues(ctx, t, topic, len(lines))
	for i, l := range lines {
		if got[i] != `"`+l+`"` {
			t.Fatalf("record %d = %s, want %q (all: %v)", i, got[i], l, got)
		}
	}
}

func newAdmin(t *testing.T) sarama.ClusterAdmin {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	admin, err := sarama.NewClusterAdmin(strings.Split(cluster.Bootstrap(), ","), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	return admin
}

func assertCompacted(t *testing.T, admin sarama.ClusterAdmin, topic string) {
	t.Helper()
	res, err := admin.DescribeConfigs([]*sarama.ConfigResource{{Type: sarama.TopicResource, Name: topic, ConfigNames: []string{"cleanup.policy"}}}, sarama.DescribeConfigsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		for _, e := range r.Configs {
			if e.Name == "cleanup.policy" && e.Value != "compact" {
				t.Errorf("topic %s has cleanup.policy=%s", topic, e.Value)
			}
		}
	}
}

func waitConnectorRunning(ctx context.Context, t *testing.T, base, name string) {
	t.Helper()
	var last string
	for {
		resp, err := http.Get(base + "/connectors/" + name + "/status")
		if err == nil {
			var st struct {
				Connector struct{ State string }   `json:"connector"`
				Tasks     []struct{ State string } `json:"tasks"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			last = fmt.Sprintf("%+v", st)
			if st.Connector.State == "RUNNING" && len(st.Tasks) > 0 && st.Tasks[0].State == "RUNNING" {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("connector %s not RUNNING: %s", name, last)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

func consumeValues(ctx context.Context, t *testing.T, topic string, n int) []string {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	consumer, err := sarama.NewConsumer(strings.Split(cluster.Bootstrap(), ","), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var pc sarama.PartitionConsumer
	for {
		pc, err = consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("consume %s: %v", topic, err)
		case <-time.After(300 * time.Millisecond):
		}
	}
	defer pc.Close()
	var out []string
	for len(out) < n {
		select {
		case m := <-pc.Messages():
			out = append(out, string(m.Value))
		case <-ctx.Done():
			t.Fatalf("got %d of %d records from %s: %v", len(out), n, topic, out)
		}
	}
	return out
}

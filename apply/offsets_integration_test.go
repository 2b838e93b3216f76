//go:build integration

package apply_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/apply"
	"github.com/connect-init/connect-init/internal/testbed"
)

// offsetsRun runs `connect-init offsets` against the package's worker.
func offsetsRun(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, out, err := testbed.Run(ctx, binary, append([]string{"offsets"}, append(args, "--url", worker.Spec.RESTURL)...), testbed.BaseEnv())
	if err != nil {
		t.Fatalf("connect-init offsets %v: %v\n%s", args, err, out)
	}
	return code, out
}

func readOffsets(t *testing.T, file string) *apply.Offsets {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	o, err := apply.ParseOffsets(b)
	if err != nil {
		t.Fatalf("%s: %v\n%s", file, err, b)
	}
	return o
}

// topicValues reads every record value of topic's partition 0.
func topicValues(t *testing.T, topic string) []string {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	c, err := sarama.NewConsumer([]string{cluster.Bootstrap()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := topicRecords(t, topic)
	pc, err := c.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var out []string
	for int64(len(out)) < n {
		select {
		case m := <-pc.Messages():
			out = append(out, string(m.Value))
		case <-time.After(time.Minute):
			t.Fatalf("read %d of %d records of %s", len(out), n, topic)
		}
	}
	return out
}

// TestOffsetsRoundTripAndRename: a real FileStreamSource and a real
// FileStreamSink, stopped by their files' state, have their offsets
// exported to files, reset (none left), and applied from the files (equal
// to the export; applied again: nothing to write). Then the rename recipe
// of docs/apply.md: the source's definition is renamed, with the exported
// offsets as its "offsets", and applied with --prune; lines appended to
// its file reach the topic once, after the old ones, none read twice.
func TestOffsetsRoundTripAndRename(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "connectors")
	input := filepath.Join(t.TempDir(), "ofs-input.txt")
	const topic = "ofs-topic"
	var lines strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&lines, "ofs line %d\n", i)
	}
	os.WriteFile(input, []byte(lines.String()), 0o644)
	source := func(name, state, offsets string) string {
		s := fmt.Sprintf(`{"name": %q, "state": %q, "config": {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": %q, "topic": %q, "tasks.max": "1"}`, name, state, input, topic)
		if offsets != "" {
			s += `, "offsets": ` + offsets
		}
		return s + "}\n"
	}
	sinkOut := filepath.Join(t.TempDir(), "ofs-sink.txt")
	sink := func(state string) string {
		return strings.Replace(sinkJSON("ofs-sink", topic, sinkOut, ""), `"config"`, `"state": "`+state+`", "config"`, 1)
	}
	writeFile(t, dir, "ofs-source.json", source("ofs-source", "running", ""))
	writeFile(t, dir, "ofs-sink.json", sink("running"))
	if code, out := applyRun(t, "--dir", dir, "--wait=1m"); code != 0 {
		t.Fatalf("create: exit %d\n%s", code, out)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		b, _ := os.ReadFile(sinkOut)
		if strings.Count(string(b), "ofs line") >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sink wrote %q", b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Stopped (a stopped task commits its offsets), then exported.
	writeFile(t, dir, "ofs-source.json", source("ofs-source", "stopped", ""))
	writeFile(t, dir, "ofs-sink.json", sink("stopped"))
	if code, out := applyRun(t, "--dir", dir, "--wait=1m"); code != 0 {
		t.Fatalf("stop: exit %d\n%s", code, out)
	}
	files := map[string]string{"ofs-source": filepath.Join(t.TempDir(), "src.json"), "ofs-sink": filepath.Join(t.TempDir(), "sink.json")}
	exported := map[string]*apply.Offsets{}
	for name, f := range files {
		if code, out := offsetsRun(t, "export", "--connector", name, "--file", f); code != 0 {
			t.Fatalf("export %s: exit %d\n%s", name, code, out)
		}
		exported[name] = readOffsets(t, f)
		if len(exported[name].Offsets) == 0 {
			t.Fatalf("%s exported no offsets", name)
		}
	}
	t.Logf("exported: source %v, sink %v", exported["ofs-source"].Offsets, exported["ofs-sink"].Offsets)
	for name, f := range files {
		if code, out := offsetsRun(t, "reset", "--connector", name); code != 0 || !strings.Contains(out, "offsets written and read back") {
			t.Fatalf("reset %s: exit %d\n%s", name, code, out)
		}
		empty := filepath.Join(t.TempDir(), name+"-empty.json")
		if code, out := offsetsRun(t, "export", "--connector", name, "--file", empty); code != 0 || len(readOffsets(t, empty).Offsets) != 0 {
			t.Fatalf("%s after the reset: exit %d %v\n%s", name, code, readOffsets(t, empty).Offsets, out)
		}
		if code, out := offsetsRun(t, "apply", "--connector", name, "--file", f); code != 0 || !strings.Contains(out, "offsets written and read back") {
			t.Fatalf("apply %s: exit %d\n%s", name, code, out)
		}
		back := filepath.Join(t.TempDir(), name+"-back.json")
		offsetsRun(t, "export", "--connector", name, "--file", back)
		if got := readOffsets(t, back); !apply.Holds(got, exported[name]) || !apply.Holds(exported[name], got) {
			t.Errorf("%s: imported %v, exported %v", name, got.Offsets, exported[name].Offsets)
		}
		if code, out := offsetsRun(t, "apply", "--connector", name, "--file", f); code != 0 || !strings.Contains(out, "nothing to write") {
			t.Errorf("apply %s again: exit %d\n%s", name, code, out)
		}
	}

	// The rename recipe: the new name with the old one's offsets.
	srcOffsets, _ := os.ReadFile(files["ofs-source"])
	os.Remove(filepath.Join(dir, "ofs-source.json"))
	writeFile(t, dir, "ofs-renamed.json", source("ofs-renamed", "running", string(srcOffsets)))
	code, out := applyRun(t, "--dir", dir, "--prune", "--wait=1m")
	if code != 0 || !strings.Contains(out, "created ofs-renamed in state STOPPED (initial_state)") || !strings.Contains(out, "ofs-renamed: offsets set (1 partitions, read back)") || !strings.Contains(out, "deleted ofs-source") {
		t.Fatalf("rename: exit %d\n%s", code, out)
	}
	f, _ := os.OpenFile(input, os.O_APPEND|os.O_WRONLY, 0)
	for i := 6; i <= 8; i++ {
		fmt.Fprintf(f, "ofs line %d\n", i)
	}
	f.Close()
	deadline = time.Now().Add(time.Minute)
	for topicRecords(t, topic) < 8 {
		if time.Now().After(deadline) {
			t.Fatalf("%d records in %s, want 8", topicRecords(t, topic), topic)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// FileStreamSource reads in order: a renamed connector that started
	// over would have sent lines 1-5 again before line 8.
	vals := topicValues(t, topic)
	for i := 1; i <= 8; i++ {
		if n := strings.Count(strings.Join(vals, "\n"), fmt.Sprintf("ofs line %d\"", i)); n != 1 {
			t.Errorf("line %d is in %s %d times: %q", i, topic, n, vals)
		}
	}
	t.Logf("%s after the rename: %q", topic, vals)
}

package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/restclient"
)

// A typo of "config" is an unknown field with its line, not a bare config
// whose key "confg" holds an object.
func TestTypoOfConfigIsUnknownField(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "typo.json", "{\n  \"name\": \"a\",\n  \"confg\": {\"connector.class\": \"C\"}\n}\n")
	_, _, err := Load(dir)
	var fe *FileError
	if !errors.As(err, &fe) || fe.File != p || fe.Line != 3 || !strings.Contains(fe.Problem, `unknown field "confg"`) || !strings.Contains(fe.Problem, `did you mean "config"?`) {
		t.Fatalf("Load = %v", err)
	}
	// Without "name" too: the object value alone marks the wrapped form.
	os.Remove(p)
	write(t, dir, "typo2.json", "{\"confg\": {\"connector.class\": \"C\"}}")
	if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), `unknown field "confg"`) {
		t.Fatalf("Load = %v", err)
	}
	// A bare config is still one.
	os.Remove(filepath.Join(dir, "typo2.json"))
	write(t, dir, "bare.json", `{"connector.class": "C", "tasks.max": 1}`)
	if conns, _, err := Load(dir); err != nil || len(conns) != 1 || conns[0].Name != "bare" {
		t.Fatalf("bare: %v %v", conns, err)
	}
}

func TestSuspectsAndPruneRefusal(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "jdbc.yaml", "name: jdbc\nconfig:\n  connector.class: X\n")
	write(t, dir, "saved.txt", "  {\"name\": \"x\"}")
	write(t, dir, "old.conf", "connector.class=Y\n")
	write(t, dir, "README.md", "how to write definitions")
	conns, skipped, err := Load(dir)
	if err != nil || len(conns) != 0 {
		t.Fatal(conns, err)
	}
	sus := Suspects(dir, skipped)
	var names []string
	for _, s := range sus {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "jdbc.yaml,old.conf,saved.txt" {
		t.Fatalf("suspects %v", sus)
	}
	err = CheckPrune(dir, conns, sus, true, false)
	var pe *PruneError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "would delete every connector") || !strings.Contains(err.Error(), "jdbc.yaml") || !strings.Contains(pe.Fix(), "--allow-empty-prune") {
		t.Fatalf("CheckPrune = %v", err)
	}
	if CheckPrune(dir, conns, sus, true, true) != nil || CheckPrune(dir, conns, sus, false, false) != nil {
		t.Error("allowed or unpruned runs refused")
	}
}

// Run refuses a prune of nothing before it reads or writes anything.
func TestRunRefusesEmptyPrune(t *testing.T) {
	f := &fakeConnect{configs: map[string]map[string]string{"a": {"name": "a", "connector.class": "C"}}, status: running}
	w := startFake(t, f)
	var out bytes.Buffer
	res := Run(context.Background(), &API{REST: &restclient.Client{}, Target: w.t}, nil, Options{Out: &out, Prune: true, Source: "/d"})
	if res.Code != exitcode.Config || f.lists != 0 || f.deleted != 0 || !strings.Contains(out.String(), "refused") {
		t.Fatalf("code %d, %d listings, %d deletes: %s", res.Code, f.lists, f.deleted, out.String())
	}
}

// The dry run's JSON plan names keys, never values, and
// DetailedExitCode turns pending changes into exit 3.
func TestDryRunJSONPlan(t *testing.T) {
	const secret = "s3cr3t-value"
	f := &fakeConnect{configs: map[string]map[string]string{
		"upd":  {"name": "upd", "connector.class": "C", "topic": "old", "gone": "x", "db.password": "old-" + secret},
		"same": {"name": "same", "connector.class": "C"},
		"orph": {"name": "orph", "connector.class": "C"},
	}, status: running}
	w := startFake(t, f)
	desired := []Connector{
		conn("new", StateStopped, "connector.class", "C"),
		conn("upd", "", "connector.class", "C", "topic", "new-topic-value", "db.password", secret),
		conn("same", "", "connector.class", "C"),
	}
	var out bytes.Buffer
	res := Run(context.Background(), &API{REST: &restclient.Client{}, Target: w.t}, desired,
		Options{Out: &out, DryRun: true, JSON: true, DetailedExitCode: true, Prune: true, Source: "/d"})
	if res.Code != exitcode.ChangesPending {
		t.Fatalf("code %d\n%s", res.Code, out.String())
	}
	if strings.Contains(out.String(), secret) || strings.Contains(out.String(), "topic-value") {
		t.Fatalf("a value was printed:\n%s", out.String())
	}
	var d PlanDoc
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil || dec.More() {
		t.Fatalf("not one JSON document: %v\n%s", err, out.String())
	}
	if !d.ChangesPending || d.Summary[Create] != 1 || d.Summary[Update] != 1 || d.Summary[Unchanged] != 1 || d.Summary[Delete] != 1 || len(d.Connectors) != 4 {
		t.Fatalf("plan %+v", d)
	}
	by := map[string]ConnectorDoc{}
	for _, c := range d.Connectors {
		by[c.Name] = c
	}
	if u := by["upd"]; u.Action != Update || strings.Join(u.Changed, ",") != "db.password,topic" || strings.Join(u.Removed, ",") != "gone" {
		t.Errorf("update %+v", u)
	}
	if n := by["new"]; n.Action != Create || n.State == nil || n.State.To != "STOPPED" || n.State.Request != "stop" {
		t.Errorf("create %+v", n)
	}
	if by["orph"].Action != Delete || by["same"].Action != Unchanged {
		t.Errorf("%+v", d.Connectors)
	}
	if f.puts != 0 || f.deleted != 0 {
		t.Errorf("a dry run wrote: %d puts, %d deletes", f.puts, f.deleted)
	}
	// Nothing pending: exit 0, changes_pending false.
	out.Reset()
	res = Run(context.Background(), &API{REST: &restclient.Client{}, Target: w.t}, desired[2:],
		Options{Out: &out, DryRun: true, JSON: true, DetailedExitCode: true, Source: "/d"})
	if res.Code != exitcode.OK || !strings.Contains(out.String(), `"changes_pending": false`) {
		t.Fatalf("no-op: code %d\n%s", res.Code, out.String())
	}
}

// initial_state on >= 3.7 (and Confluent's 7.7.0-ccs), create-then-stop
// before.
func TestCreateInDeclaredState(t *testing.T) {
	for _, c := range []struct {
		version string
		initial bool
	}{{"4.3.1", true}, {"3.7.0", true}, {"7.7.0-ccs", true}, {"3.6.2", false}, {"7.6.0-ccs", false}} {
		stopped := func(string) *Status {
			st := running("x")
			st.Connector.State, st.Tasks = "STOPPED", nil
			return st
		}
		f := &fakeConnect{configs: map[string]map[string]string{}, status: stopped, version: c.version}
		res, out, _ := runFake(t, f, []Connector{conn("x", StateStopped, "connector.class", "C")}, time.Minute)
		if c.initial {
			if f.created["x"] != "STOPPED" || f.puts != 0 || !strings.Contains(out, "created x in state STOPPED (initial_state)") || strings.Contains(out, "stop requested") {
				t.Errorf("%s: created %v, %d puts\n%s", c.version, f.created, f.puts, out)
			}
		} else if f.created != nil || f.puts != 1 || !strings.Contains(out, "x: stop requested") {
			t.Errorf("%s: created %v, %d puts\n%s", c.version, f.created, f.puts, out)
		}
		if res.Code != exitcode.OK {
			t.Errorf("%s: code %d\n%s", c.version, res.Code, out)
		}
	}
}

func TestKafkaVersion(t *testing.T) {
	for v, want := range map[string][2]int{"4.3.1": {4, 3}, "3.7.0-SNAPSHOT": {3, 7}, "7.6.0-ccs": {3, 6}, "6.2.1-ce": {2, 8}, "8.0.0-ccs": {4, 0}} {
		ma, mi, ok := KafkaVersion(v)
		if !ok || ma != want[0] || mi != want[1] {
			t.Errorf("%s: %d.%d %v", v, ma, mi, ok)
		}
	}
	if _, _, ok := KafkaVersion("unknown"); ok {
		t.Error("unknown read as a version")
	}
}

// A watcher with --prune whose directory empties (a lost mount) deletes
// nothing and says why at every look; one that cannot read it the same.
func TestWatchLostMountDeletesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conns")
	os.Mkdir(dir, 0o755)
	a := conn("a", "", "connector.class", "C")
	f := &fakeConnect{configs: map[string]map[string]string{"a": a.Config, "other": {"name": "other", "connector.class": "C"}}, status: running}
	// The directory is empty from the first look: prune must not run.
	logs, _ := watchFake(t, f, []Connector{a}, WatchOptions{Options: Options{Prune: true}, Interval: time.Second, Dir: dir},
		func(l string) bool { return strings.Count(l, "defines no connector") >= 3 })
	f.mu.Lock()
	deleted := f.deleted
	f.mu.Unlock()
	if deleted != 0 || strings.Contains(logs, "watch: drift") {
		t.Fatalf("%d deletes\n%s", deleted, logs)
	}
	os.Remove(dir)
	logs, _ = watchFake(t, f, []Connector{a}, WatchOptions{Options: Options{Prune: true}, Interval: time.Second, Dir: dir},
		func(l string) bool { return strings.Count(l, "cannot read the connector definitions") >= 3 })
	f.mu.Lock()
	deleted = f.deleted
	f.mu.Unlock()
	if deleted != 0 || !strings.Contains(logs, "nothing is deleted") {
		t.Fatalf("%d deletes\n%s", deleted, logs)
	}
	// The mount back with a's file: other is pruned.
	os.Mkdir(dir, 0o755)
	write(t, dir, "a.json", `{"name": "a", "config": {"connector.class": "C"}}`)
	watchFake(t, f, []Connector{a}, WatchOptions{Options: Options{Prune: true}, Interval: time.Second, Dir: dir},
		func(l string) bool { return strings.Contains(l, `msg="watch: put back" connector=other action=delete`) })
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.deleted != 1 || f.configs["other"] != nil || f.configs["a"] == nil {
		t.Fatalf("after the mount came back: %d deletes, %v", f.deleted, f.configs)
	}
}

// A watcher given no definitions and no directory, with Prune, deletes
// nothing either.
func TestWatchWithoutDefinitionsPrunesNothing(t *testing.T) {
	f := &fakeConnect{configs: map[string]map[string]string{"other": {"name": "other", "connector.class": "C"}}, status: running}
	logs, _ := watchFake(t, f, nil, WatchOptions{Options: Options{Prune: true}, Interval: time.Second},
		func(l string) bool { return strings.Count(l, "no connector definitions; nothing is deleted") >= 2 })
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.deleted != 0 {
		t.Fatalf("%d deletes\n%s", f.deleted, logs)
	}
}

package apply

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/restclient"
)

const sinkOffsets = `{"offsets": [{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 5}}]}`

func TestParseOffsetsAndHolds(t *testing.T) {
	doc, err := ParseOffsets([]byte(sinkOffsets))
	if err != nil || len(doc.Offsets) != 1 {
		t.Fatal(doc, err)
	}
	list, err := ParseOffsets([]byte(`[{"offset": {"kafka_offset": 5}, "partition": {"kafka_partition": 0, "kafka_topic": "t"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if !Holds(doc, list) || !Holds(list, doc) {
		t.Error("the same offsets in another key order do not hold")
	}
	moved, _ := ParseOffsets([]byte(`[{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": {"kafka_offset": 6}}]`))
	if Holds(doc, moved) {
		t.Error("offset 5 holds offset 6")
	}
	erase, _ := ParseOffsets([]byte(`[{"partition": {"kafka_topic": "t", "kafka_partition": 0}, "offset": null}]`))
	if Holds(doc, erase) || !Holds(&Offsets{}, erase) {
		t.Error("a null offset is judged wrong")
	}
	for _, bad := range []string{`{"offset": []}`, `[{"offset": {"x": 1}}]`, `{"offsets": [], "extra": 1}`, `nope`} {
		if _, err := ParseOffsets([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func offsetsAPI(t *testing.T, f *fakeConnect) *API {
	w := startFake(t, f)
	return &API{REST: &restclient.Client{Random: func() float64 { return 0.5 }}, Target: w.t}
}

// SetOffsets stops a running connector, writes, reads back and resumes
// it; the same offsets again write nothing; a worker before 3.6 is
// refused before anything is written.
func TestSetOffsets(t *testing.T) {
	want, _ := ParseOffsets([]byte(sinkOffsets))
	f := &fakeConnect{configs: map[string]map[string]string{"s": {"name": "s"}}, version: "3.6.0"}
	api := offsetsAPI(t, f)
	until := time.Now().Add(time.Minute)
	res, err := api.SetOffsets(context.Background(), "s", want, until)
	if err != nil || !res.Changed || res.Was != "RUNNING" || strings.Join(f.states, ",") != "stop,resume" || f.offsetWrites != 1 {
		t.Fatalf("first: %+v %v, states %v, %d writes", res, err, f.states, f.offsetWrites)
	}
	res, err = api.SetOffsets(context.Background(), "s", want, until)
	if err != nil || res.Changed || len(f.states) != 2 || f.offsetWrites != 1 {
		t.Fatalf("second: %+v %v, states %v, %d writes", res, err, f.states, f.offsetWrites)
	}
	// A reset of a paused connector: stopped, DELETE, paused again.
	f.state["s"] = "PAUSED"
	if res, err = api.SetOffsets(context.Background(), "s", nil, until); err != nil || !res.Changed || f.offsets["s"] != nil || f.states[len(f.states)-1] != "pause" {
		t.Fatalf("reset: %+v %v, states %v", res, err, f.states)
	}
	old := &fakeConnect{configs: map[string]map[string]string{"s": {"name": "s"}}, version: "3.5.1"}
	if _, err := offsetsAPI(t, old).SetOffsets(context.Background(), "s", want, until); err == nil || !strings.Contains(err.Error(), "from Kafka 3.6 on") || len(old.states) != 0 {
		t.Fatalf("3.5: %v, states %v", err, old.states)
	}
}

// A definition's offsets are set when it is created: created STOPPED,
// written, read back, then resumed; a worker before 3.6 refuses the
// definition before anything is written (exit 2).
func TestCreateWithOffsets(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "s.json", `{"name": "s", "config": {"connector.class": "C"},
 "offsets": `+sinkOffsets+`}`)
	conns, _, err := Load(dir)
	if err != nil || conns[0].Offsets == nil || conns[0].Lines["offsets"] != 2 {
		t.Fatal(conns, err)
	}
	f := &fakeConnect{configs: map[string]map[string]string{}, status: running, version: "4.3.1"}
	res, out, _ := runFake(t, f, conns, 0)
	if res.Code != exitcode.OK || f.created["s"] != "STOPPED" || f.offsetWrites != 1 || strings.Join(f.states, ",") != "resume" || !strings.Contains(out, "s: offsets set (1 partitions, read back)") {
		t.Fatalf("code %d, created %v, %d writes, states %v\n%s", res.Code, f.created, f.offsetWrites, f.states, out)
	}
	old := &fakeConnect{configs: map[string]map[string]string{}, status: running, version: "3.5.0"}
	res, out, _ = runFake(t, old, conns, 0)
	if res.Code != exitcode.Config || old.puts != 0 || old.created != nil || !strings.Contains(out, ":2: offsets: cannot be set") {
		t.Fatalf("3.5: code %d, %d puts\n%s", res.Code, old.puts, out)
	}
}

package apply

import (
	"reflect"
	"testing"
)

func conn(name, state string, kv ...string) Connector {
	c := Connector{Name: name, State: state, Config: map[string]string{"name": name}, File: name + ".json"}
	for i := 0; i+1 < len(kv); i += 2 {
		c.Config[kv[i]] = kv[i+1]
	}
	return c
}

func TestCompute(t *testing.T) {
	desired := []Connector{
		conn("new", "", "connector.class", "C"),
		conn("same", "", "connector.class", "C", "topic", "t"),
		conn("changed", "", "connector.class", "C", "topic", "t2", "added", "1"),
		conn("pause-me", StatePaused, "connector.class", "C"),
		conn("resume-me", StateRunning, "connector.class", "C"),
		conn("keep-paused", "", "connector.class", "C"),
	}
	current := map[string]Current{
		"same":        {Config: map[string]string{"name": "same", "connector.class": "C", "topic": "t"}, State: "RUNNING"},
		"changed":     {Config: map[string]string{"name": "changed", "connector.class": "C", "topic": "t", "gone": "x"}, State: "RUNNING"},
		"pause-me":    {Config: map[string]string{"name": "pause-me", "connector.class": "C"}, State: "RUNNING"},
		"resume-me":   {Config: map[string]string{"name": "resume-me", "connector.class": "C"}, State: "STOPPED"},
		"keep-paused": {Config: map[string]string{"name": "keep-paused", "connector.class": "C"}, State: "PAUSED"},
		"orphan":      {Config: map[string]string{"name": "orphan"}, State: "RUNNING"},
	}
	p := Compute(desired, current, false)
	got := map[string]Step{}
	for _, s := range p.Steps {
		got[s.Name] = s
	}
	if got["new"].Kind != Create || !got["new"].WritesConfig() || got["new"].Expect != "RUNNING" {
		t.Errorf("new: %+v", got["new"])
	}
	if s := got["same"]; s.Kind != Unchanged || s.WritesConfig() || s.StateCall != "" {
		t.Errorf("same: %+v", s)
	}
	want := []Change{{Key: "added", Op: Added, New: "1"}, {Key: "gone", Op: Removed, Old: "x"}, {Key: "topic", Op: Changed, Old: "t", New: "t2"}}
	if s := got["changed"]; s.Kind != Update || !reflect.DeepEqual(s.Changes, want) {
		t.Errorf("changed: %+v", s.Changes)
	}
	if s := got["pause-me"]; s.Kind != Update || s.WritesConfig() || s.StateCall != "pause" || s.Expect != "PAUSED" {
		t.Errorf("pause-me: %+v", s)
	}
	if s := got["resume-me"]; s.StateCall != "resume" || s.Expect != "RUNNING" {
		t.Errorf("resume-me: %+v", s)
	}
	if s := got["keep-paused"]; s.Kind != Unchanged || s.Expect != "PAUSED" {
		t.Errorf("keep-paused (no state in the file): %+v", s)
	}
	if _, ok := got["orphan"]; ok || !reflect.DeepEqual(p.Kept, []string{"orphan"}) {
		t.Errorf("without prune the orphan is kept: %+v", p)
	}
	p = Compute(desired, current, true)
	if p.Count(Delete) != 1 || len(p.Kept) != 0 {
		t.Errorf("with prune: %+v", p)
	}
}

func TestComputeCreateWithState(t *testing.T) {
	p := Compute([]Connector{conn("s", StateStopped, "connector.class", "C")}, nil, false)
	if s := p.Steps[0]; s.Kind != Create || s.StateCall != "stop" || s.Expect != "STOPPED" {
		t.Errorf("%+v", s)
	}
}

package apply

import (
	"sort"
	"strings"
)

// Kind is what a plan does with one connector.
type Kind string

// The kinds of a plan step.
const (
	Create    Kind = "create"
	Update    Kind = "update"
	Unchanged Kind = "unchanged"
	Delete    Kind = "delete"
)

// Op is what happens to one config key in an update.
type Op string

// The ops of a change.
const (
	Added   Op = "+"
	Changed Op = "~"
	Removed Op = "-"
)

// Change is one config key whose value differs.
type Change struct {
	Key string
	Op  Op
	// Old and New are the raw values; print them only through a Redactor.
	Old, New string
}

// Current is what the cluster runs for one connector (GET
// /connectors?expand=info&expand=status).
type Current struct {
	Config map[string]string
	// State is the connector's runtime state: RUNNING, PAUSED, STOPPED,
	// FAILED, UNASSIGNED, RESTARTING ("" when unknown).
	State string
}

// Step is the plan for one connector.
type Step struct {
	Name string
	Kind Kind
	// File is the definition's file (empty for a delete).
	File string
	// Changes are the changed keys of an update, sorted by key; a create
	// lists every key as Added.
	Changes []Change
	// StateCall is the state request to make after the config: "pause",
	// "stop", "resume", or "" for none.
	StateCall string
	// Expect is the runtime state to wait for: RUNNING, PAUSED or STOPPED
	// ("" for a delete).
	Expect string
	// Desired is the definition (nil for a delete).
	Desired *Connector
	// From is the connector's runtime state in the cluster ("" for a
	// create).
	From string
}

// WritesConfig reports whether the step PUTs the configuration.
func (s Step) WritesConfig() bool { return s.Kind == Create || s.Kind == Update && len(s.Changes) > 0 }

// Plan is what apply will do, in name order; Kept are connectors the
// cluster runs that no file defines, left alone without pruning.
type Plan struct {
	Steps []Step
	Kept  []string
	// KeptRefusal, when set, is why --prune would refuse to delete Kept
	// (the worker is unproven and the cluster holds none of the
	// directory's connectors): the plan then does not promise that
	// --prune deletes them.
	KeptRefusal string
}

// Count returns how many steps are of kind k.
func (p Plan) Count(k Kind) int {
	n := 0
	for _, s := range p.Steps {
		if s.Kind == k {
			n++
		}
	}
	return n
}

// Compute is the plan from the definitions and the cluster's connectors,
// without any I/O: a connector no definition names is deleted only with
// prune; a definition whose config and state match the cluster is
// Unchanged, so a second apply writes nothing.
func Compute(desired []Connector, current map[string]Current, prune bool) Plan {
	var p Plan
	names := map[string]bool{}
	for i := range desired {
		d := &desired[i]
		names[d.Name] = true
		cur, exists := current[d.Name]
		st := Step{Name: d.Name, File: d.File, Desired: d}
		if !exists {
			st.Kind = Create
			for _, k := range sortedKeys(d.Config) {
				st.Changes = append(st.Changes, Change{Key: k, Op: Added, New: d.Config[k]})
			}
			switch d.State {
			case StatePaused:
				st.StateCall, st.Expect = "pause", "PAUSED"
			case StateStopped:
				st.StateCall, st.Expect = "stop", "STOPPED"
			default:
				st.Expect = "RUNNING"
			}
		} else {
			st.Changes = diff(cur.Config, d.Config)
			st.From = strings.ToUpper(cur.State)
			st.StateCall, st.Expect = stateCall(d.State, st.From)
			st.Kind = Unchanged
			if len(st.Changes) > 0 || st.StateCall != "" {
				st.Kind = Update
			}
		}
		p.Steps = append(p.Steps, st)
	}
	for _, name := range sortedKeys(current) {
		if names[name] {
			continue
		}
		if prune {
			p.Steps = append(p.Steps, Step{Name: name, Kind: Delete, From: strings.ToUpper(current[name].State)})
		} else {
			p.Kept = append(p.Kept, name)
		}
	}
	sort.SliceStable(p.Steps, func(i, j int) bool { return p.Steps[i].Name < p.Steps[j].Name })
	return p
}

// stateCall is the request that takes a connector in runtime state cur to
// the desired state, and the state to wait for. A missing desired state
// keeps a paused or stopped connector as it is.
func stateCall(desired, cur string) (call, expect string) {
	switch desired {
	case StatePaused:
		if cur != "PAUSED" {
			return "pause", "PAUSED"
		}
		return "", "PAUSED"
	case StateStopped:
		if cur != "STOPPED" {
			return "stop", "STOPPED"
		}
		return "", "STOPPED"
	case StateRunning:
		if cur == "PAUSED" || cur == "STOPPED" {
			return "resume", "RUNNING"
		}
		return "", "RUNNING"
	}
	if cur == "PAUSED" || cur == "STOPPED" {
		return "", cur
	}
	return "", "RUNNING"
}

// diff lists the keys whose values differ, sorted: PUT config replaces the
// whole configuration, so a key the file no longer has is Removed.
func diff(old, new map[string]string) []Change {
	var out []Change
	for _, k := range sortedKeys(new) {
		ov, ok := old[k]
		switch {
		case !ok:
			out = append(out, Change{Key: k, Op: Added, New: new[k]})
		case ov != new[k]:
			out = append(out, Change{Key: k, Op: Changed, Old: ov, New: new[k]})
		}
	}
	for _, k := range sortedKeys(old) {
		if _, ok := new[k]; !ok {
			out = append(out, Change{Key: k, Op: Removed, Old: old[k]})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Writes reports whether the plan writes anything: a config, a state, a
// deletion.
func (p Plan) Writes() bool {
	for _, s := range p.Steps {
		if s.Kind != Unchanged {
			return true
		}
	}
	return false
}

package apply

import (
	"encoding/json"
)

// notPlanned is a PlanDoc without a plan: what it would have been made
// against and why not, never a changes_pending a pipeline could read as
// "nothing changes".
type notPlanned struct {
	Planned bool   `json:"planned"`
	Target  string `json:"target"`
	Source  string `json:"source,omitempty"`
	Error   string `json:"error,omitempty"`
}

// PlanDoc is a dry run's plan as one JSON document (apply --dry-run
// --json), for a pipeline to gate a merge on: what each connector would
// get, with the names of the changed keys and never a value (a value may
// be a secret, and a key name is what a reviewer needs).
type PlanDoc struct {
	// Planned is false when there is no plan (the cluster could not be
	// read, a definition could not be validated, the input was bad): then
	// only Target, Source and Error are printed, never changes_pending.
	Planned bool `json:"planned"`
	// Target is the worker's REST URL; Source the definitions' directory.
	Target string `json:"target"`
	Source string `json:"source,omitempty"`
	// ChangesPending is true when applying would write anything: the
	// condition of --detailed-exitcode's exit 3.
	ChangesPending bool           `json:"changes_pending"`
	Summary        map[Kind]int   `json:"summary"`
	Connectors     []ConnectorDoc `json:"connectors"`
	// Kept are the cluster's connectors no file defines, left alone
	// without --prune.
	Kept []string `json:"kept"`
	// KeptRefusal, when set, is why --prune would refuse to delete Kept
	// (Plan.KeptRefusal): the plan does not promise that it deletes them.
	KeptRefusal string `json:"kept_refusal,omitempty"`
	// Refused are the definitions Connect's validation refused (exit 2).
	Refused []RefusedDoc `json:"refused,omitempty"`
	// Error is why there is no plan (Planned false, exit 1), "" when there
	// is one.
	Error string `json:"error,omitempty"`
}

// MarshalJSON prints a PlanDoc without a plan as notPlanned.
func (d PlanDoc) MarshalJSON() ([]byte, error) {
	if !d.Planned {
		return json.Marshal(notPlanned{Target: d.Target, Source: d.Source, Error: d.Error})
	}
	type plain PlanDoc
	return json.Marshal(plain(d))
}

// ConnectorDoc is one connector's step.
type ConnectorDoc struct {
	Name   string `json:"name"`
	Action Kind   `json:"action"`
	File   string `json:"file,omitempty"`
	// Added, Changed and Removed are config key names: for a create every
	// key is Added.
	Added   []string `json:"added,omitempty"`
	Changed []string `json:"changed,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// State is the runtime state change, when there is one.
	State *StateDoc `json:"state,omitempty"`
	// Offsets is how many partitions' offsets a create sets before the
	// connector first runs (its definition's "offsets").
	Offsets int `json:"offsets,omitempty"`
}

// StateDoc is a state change: from the cluster's runtime state (empty for
// a create) to the one the definition asks for, by the request named.
type StateDoc struct {
	From    string `json:"from,omitempty"`
	To      string `json:"to"`
	Request string `json:"request"`
}

// RefusedDoc is a definition Connect's validation refused: per key, where
// it is in the file and Connect's messages (scrubbed of secret values).
type RefusedDoc struct {
	Name   string     `json:"name"`
	File   string     `json:"file"`
	Errors []FieldDoc `json:"errors"`
}

// FieldDoc is one refused key.
type FieldDoc struct {
	Key      string   `json:"key"`
	Where    string   `json:"where"`
	Messages []string `json:"messages"`
}

// Doc is the plan as a PlanDoc.
func (p Plan) Doc(target, source string) PlanDoc {
	d := PlanDoc{Planned: true, Target: target, Source: source, ChangesPending: p.Writes(), Connectors: []ConnectorDoc{}, Kept: p.Kept,
		Summary: map[Kind]int{Create: p.Count(Create), Update: p.Count(Update), Unchanged: p.Count(Unchanged), Delete: p.Count(Delete)}}
	if d.Kept == nil {
		d.Kept = []string{}
	}
	if len(p.Kept) > 0 {
		d.KeptRefusal = p.KeptRefusal
	}
	for _, s := range p.Steps {
		c := ConnectorDoc{Name: s.Name, Action: s.Kind, File: s.File}
		for _, ch := range s.Changes {
			switch ch.Op {
			case Added:
				c.Added = append(c.Added, ch.Key)
			case Changed:
				c.Changed = append(c.Changed, ch.Key)
			case Removed:
				c.Removed = append(c.Removed, ch.Key)
			}
		}
		if s.Kind == Create && s.Desired.Offsets != nil {
			c.Offsets = len(s.Desired.Offsets.Offsets)
		}
		if s.StateCall != "" {
			c.State = &StateDoc{From: s.From, To: s.Expect, Request: s.StateCall}
		}
		d.Connectors = append(d.Connectors, c)
	}
	return d
}

// planJSON prints the plan document when Options.JSON asks for it: the
// plan, the refused definitions, or why there is no plan.
func (r *runner) planJSON(plan Plan, invalid map[string][]FieldError, cause error) {
	if !r.o.JSON {
		return
	}
	d := plan.Doc(r.api.Target.Raw, r.o.Source)
	if cause != nil {
		d.Planned, d.Error = false, r.red.Scrub(cause.Error())
	}
	for _, s := range plan.Steps {
		errs, bad := invalid[s.Name]
		if !bad {
			continue
		}
		rd := RefusedDoc{Name: s.Name, File: s.File}
		for _, fe := range errs {
			fd := FieldDoc{Key: fe.Key, Where: s.Desired.Where(fe.Key)}
			for _, m := range fe.Messages {
				fd.Messages = append(fd.Messages, r.red.Scrub(m))
			}
			rd.Errors = append(rd.Errors, fd)
		}
		d.Refused = append(d.Refused, rd)
	}
	b, _ := json.MarshalIndent(d, "", "  ")
	_, _ = r.o.Out.Write(append(b, '\n'))
}

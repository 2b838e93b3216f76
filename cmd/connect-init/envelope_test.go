package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// envelopeDoc is the envelope as a reader decodes it, the result kept raw.
type envelopeDoc struct {
	SchemaVersion int             `json:"schema_version"`
	Command       string          `json:"command"`
	Version       string          `json:"version"`
	ExitCode      int             `json:"exit_code"`
	Errors        []errorEntry    `json:"errors"`
	Result        json.RawMessage `json:"result"`
}

// decodeEnvelope reads stdout as exactly one envelope, its result into
// result (unless nil or the result is null), and fails the test otherwise.
func decodeEnvelope(t *testing.T, stdout string, result any) envelopeDoc {
	t.Helper()
	var env envelopeDoc
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON envelope (%v):\n%s", err, stdout)
	}
	if env.SchemaVersion != jsonSchemaVersion || env.Command == "" || env.Errors == nil {
		t.Fatalf("envelope header %+v:\n%s", env, stdout)
	}
	if result != nil && string(env.Result) != "null" {
		if err := json.Unmarshal(env.Result, result); err != nil {
			t.Fatalf("result: %v\n%s", err, stdout)
		}
	}
	return env
}

// TestWantsJSON: which command lines print an envelope.
func TestWantsJSON(t *testing.T) {
	for args, want := range map[string][2]bool{
		"--json": {true, false}, "--dry-run --json": {true, false}, "-json": {true, false}, "--json=true": {true, false}, "--json=false": {false, false},
		"--json -h": {false, false}, "--json --watch": {true, true}, "--watch=false --json": {true, false}, "--watch": {false, false},
		"--dir json": {false, false}, "-- --json": {false, false}, "": {false, false},
	} {
		if json, stream := wantsJSON(strings.Fields(args)); json != want[0] || stream != want[1] {
			t.Errorf("wantsJSON(%q) = %v, %v; want %v", args, json, stream, want)
		}
	}
}

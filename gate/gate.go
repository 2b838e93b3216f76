// Package gate holds the cluster gates that run before a Kafka Connect
// worker starts: every broker up, internal topics right, the worker
// group's coordinator safe, no foreign member in the group. Each gate
// returns a typed report so that run, prepare and doctor share one
// implementation; package startup runs them in order.
package gate

import (
	"sort"
)

// GateError is a gate that failed or timed out: exit 1.
type GateError struct {
	Gate string // "brokers", "topics", "coordinator", "group", "lock", "peers"
	Err  error
	Fix  string
}

// Error names the gate, what failed and the fix.
func (e *GateError) Error() string {
	msg := e.Gate + " gate: " + e.Err.Error()
	if e.Fix != "" {
		msg += "; fix: " + e.Fix
	}
	return msg
}

// Unwrap exposes the cause, so errors.Is/As see through the gate.
func (e *GateError) Unwrap() error { return e.Err }

// sortedKeys is a helper for stable output.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

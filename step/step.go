// Package step names the start-up's steps: the one list of their names,
// which the gates put in their errors, every log line puts in its "gate"
// attribute, and package startup runs in order (startupSteps). Names, not
// numbers: a step is never numbered.
package step

// The steps, in the order package startup runs them.
const (
	Settings    = "settings"
	Brokers     = "brokers"
	Topics      = "topics"
	Coordinator = "coordinator"
	Group       = "group"
	Plugins     = "plugins"
	Lock        = "lock"
	Peers       = "peers"
	Exec        = "exec"
)

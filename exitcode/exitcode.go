// Package exitcode is the one home of connect-init's exit codes, the
// external contract every command follows (README, docs/exit-codes.md):
// 0 success, 1 a gate or the command's work failed (its answer not written
// on stdout included), 2 bad configuration or
// usage (nothing touched), 128+signal when a signal stopped it
// (entrypoint.SignalError.ExitCode). Each command's own table (Tables) is
// here too, so that a machine reading an exit code (Docker's HEALTHCHECK,
// a pipeline gating on apply --dry-run --detailed-exitcode) has one place
// to look, and the docs are generated from it (TestDocsTables).
package exitcode

import (
	"strconv"
	"strings"
)

const (
	// OK: the command did what it was asked.
	OK = 0
	// Failed: a gate failed or timed out, or the command's work failed.
	Failed = 1
	// Config: bad configuration or usage; nothing was touched.
	Config = 2
	// ChangesPending: a dry run (apply --dry-run --detailed-exitcode)
	// found writes to make. It is 3, not terraform plan
	// -detailed-exitcode's 2, because 2 is bad input for every command
	// here: a pipeline must never read a typo as "changes pending".
	ChangesPending = 3
	// Unhealthy is healthcheck's 1: Docker's HEALTHCHECK knows only 0
	// (healthy) and 1 (unhealthy) and reserves 2, so healthcheck reports
	// bad input as unhealthy too, with the reason in its one line.
	Unhealthy = 1
	// SignalBase plus the signal's number is the code of a command a
	// signal stopped (SIGTERM: 143).
	SignalBase = 128
)

// Code is one row of a command's table: the code and when a command
// exits with it.
type Code struct {
	Code int
	// Means says when the command exits with Code.
	Means string
}

// Table is one command's exit codes.
type Table struct {
	// Command is the command as typed after connect-init ("lock acquire").
	Command string
	Codes   []Code
}

// Meaning is what code means for the command ("" when the table has no
// such row).
func (t Table) Meaning(code int) string {
	for _, c := range t.Codes {
		if c.Code == code {
			return c.Means
		}
	}
	return ""
}

// Has reports whether code is in the command's table.
func (t Table) Has(code int) bool { return t.Meaning(code) != "" }

// signal is the 128+signal row of the commands a signal stops cleanly.
const signal = SignalBase

var (
	badInput = Code{Config, "bad configuration or usage (a setting, a flag, a file), every problem named with its fix; nothing was touched"}
	stopped  = Code{signal, "SIGTERM or SIGINT stopped it (143, 130)"}
)

// Tables is every command's exit codes, in help's order.
func Tables() []Table {
	return []Table{
		{"run", []Code{
			{OK, "never seen: on success the worker replaces connect-init (exec) and exits with its own code"},
			{Failed, "a gate failed or timed out"},
			badInput,
			{signal, "stopped by a signal before the exec, after withdrawing from the lock queue"},
		}},
		{"prepare", []Code{
			{OK, "every gate from settings to group passed"},
			{Failed, "a gate failed or timed out"},
			badInput,
			stopped,
		}},
		{"doctor", []Code{
			{OK, "no finding of severity error (warnings may be reported)"},
			{Failed, "a finding of severity error, or the cluster could not be read, or the report could not be written on stdout (closed, disk full; --watch never exits for a finding)"},
			badInput,
			stopped,
		}},
		{"config", []Code{
			{OK, "the worker configuration and connect-init's settings are valid"},
			{Failed, "the report (text or the JSON document) could not be written on stdout (closed, disk full)"},
			badInput,
		}},
		{"healthcheck", []Code{
			{OK, "the local worker has joined its group and serves requests"},
			{Unhealthy, "not healthy, or the settings or flags are bad (Docker reserves 2), or its one line could not be written: the one line says why"},
		}},
		{"apply", []Code{
			{OK, "everything applied and in the desired state; a dry run: nothing to write, or without --detailed-exitcode the plan shown"},
			{Failed, "a connector or task failed, a write failed, no worker of the group answered, the worker stopped answering, or the wait timed out; a dry run: no plan could be made; or the plan or the JSON document could not be written on stdout (closed, disk full), a dry run's 3 included"},
			{Config, "a bad file or flag, a definition Connect's validation refused, a prune of a directory that defines nothing, or, through the REST API alone, a prune of a cluster that holds none of the directory's connectors; nothing was written"},
			{ChangesPending, "a dry run with --detailed-exitcode found writes to make (terraform's 2 is bad input here)"},
			stopped,
		}},
		{"offsets", []Code{
			{OK, "done, or nothing to write"},
			{Failed, "Connect refused, or a step failed (the connector may be left STOPPED: the log says how to resume it), or the export could not be written whole (stdout or --file closed or full)"},
			{Config, "bad flags, subcommand or file; nothing was written"},
			stopped,
		}},
		{"repair", []Code{
			{OK, "the plan printed (without --execute), or the reassignment done and verified"},
			{Failed, "the cluster could not be read, or the reassignment failed or timed out, or the plan could not be written on stdout (closed, disk full)"},
			badInput,
			stopped,
		}},
		{"lock acquire", []Code{
			{OK, "this worker's turn: it may join its group"},
			{Failed, "a gate failed or the wait timed out"},
			badInput,
			{signal, "stopped by a signal (or the worker died), after withdrawing from the queue"},
		}},
		{"version", []Code{
			{OK, "the version printed"},
			{Failed, "the version could not be written on stdout (closed, disk full)"},
			{Config, "bad usage: a flag other than --json, or an argument, was given"},
		}},
		{"completion", []Code{
			{OK, "the script printed"},
			{Failed, "the script could not be written on stdout (closed, disk full)"},
			{Config, "bad usage: a shell other than bash, zsh or fish"},
		}},
		{"help", []Code{
			{OK, "the help printed"},
			{Failed, "the help could not be written on stdout (closed, disk full)"},
			{Config, "bad usage: an unknown command was asked for"},
		}},
	}
}

// For is cmd's table; cmd as typed ("lock acquire", or "lock").
func For(cmd string) (Table, bool) {
	for _, t := range Tables() {
		if t.Command == cmd || strings.HasPrefix(t.Command, cmd+" ") {
			return t, true
		}
	}
	return Table{}, false
}

// Markdown is the tables as the docs show them (docs/exit-codes.md).
func Markdown() string {
	var b strings.Builder
	for _, t := range Tables() {
		b.WriteString("### `connect-init " + t.Command + "`\n\n| Exit | Means |\n|---|---|\n")
		for _, c := range t.Codes {
			code := strconv.Itoa(c.Code)
			if c.Code == signal {
				code = "128+signal"
			}
			b.WriteString("| " + code + " | " + c.Means + " |\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

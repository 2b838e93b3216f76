// Package exitcode is the one home of connect-init's exit codes, the
// external contract every command follows (README, docs/startup.md):
// 0 success, 1 a gate or the command's work failed, 2 bad configuration or
// usage (nothing touched), 128+signal when a signal stopped it
// (entrypoint.SignalError.ExitCode).
package exitcode

const (
	// OK: the command did what it was asked.
	OK = 0
	// Failed: a gate failed or timed out, or the command's work failed.
	Failed = 1
	// Config: bad configuration or usage; nothing was touched.
	Config = 2
	// ChangesPending: a dry run (apply --dry-run --detailed-exitcode)
	// found writes to make; terraform plan -detailed-exitcode's 2 is taken
	// by bad input here.
	ChangesPending = 3
)

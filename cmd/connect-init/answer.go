package main

import (
	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/settings"
)

// answerWriter is the command's stdout, which remembers the first write
// that failed (stdout closed, a full disk, a reader gone): an answer that
// was not written is not an answer, and a pipeline that reads
// `apply --dry-run --json` or `offsets export` must not take exit 0 for
// a document it never got (issue 48).
type answerWriter struct {
	w   interface{ Write([]byte) (int, error) }
	err error
}

func (a *answerWriter) Write(b []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	n, err := a.w.Write(b)
	if err != nil {
		a.err = err
	}
	return n, err
}

// answered is the command's exit code once its answer is out: a success
// (0, or a dry run's 3) whose stdout could not be written becomes 1, with
// an event saying so on stderr. A failure keeps its own code, which
// already says why there is no answer.
func (c *cli) answered(out *answerWriter, code int) int {
	if out.err == nil || (code != exitcode.OK && code != exitcode.ChangesPending) {
		return code
	}
	c.earlyLogger(settings.Read(c.env), nil).Error("cannot write the answer on stdout", "error", out.err.Error(), "exit", exitcode.Failed,
		"fix", "give the command a stdout it can write to (not closed, not on a full disk) and run it again")
	return exitcode.Failed
}

// failingWriter is a stdout every write to which fails with err: the
// stdout that was closed when the process started (main).
type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

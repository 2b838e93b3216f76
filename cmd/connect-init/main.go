// Command connect-init runs in front of a Kafka Connect worker: it waits
// until the Kafka cluster is really ready, makes Connect's internal topics
// right, checks the worker group, takes a startup lock so workers join one
// at a time, and then execs the worker. See README.md.
package main

import (
	"context"
	"flag"
	"io"
	"os"

	"github.com/connect-init/connect-init/buildinfo"
	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/metrics"
	"github.com/connect-init/connect-init/settings"
)

// version is stamped at build time: -ldflags "-X main.version=v1.2.3".
// Without a stamp it becomes the module version the toolchain recorded
// (init below), so that a plain `go build` or `go install ...@v1.2.3`
// reports what it is rather than "dev". The watchers' connect_init_build_info
// serves the same (metrics.SetBuild).
var version = "dev"

func init() { version = stampBuild(version) }

// stampBuild resolves the build's version from its -ldflags stamp
// (buildinfo.Read) and hands it, with the revision, to the watchers'
// connect_init_build_info: one source for the command and the scrape.
func stampBuild(stamp string) string {
	info := buildinfo.Read(stamp)
	metrics.SetBuild(info.Version, info.Revision)
	return info.Version
}

// cli is one invocation of connect-init: its streams, its environment and
// the process's seams, which tests replace field by field (a command is a
// value, never a global).
type cli struct {
	env            []string
	stdout, stderr io.Writer
	// stdin is what `lock acquire --watch-stdin` watches.
	stdin io.Reader
	// options stand for the image's file system and this machine's
	// addresses (settings.Options); tests play an image with them.
	options settings.Options
	// exec replaces the process with the worker.
	exec func(*entrypoint.Command) error
	// executable is connect-init's own path, which the in-worker lock's
	// provider and the apply child run.
	executable func() (string, error)
	// clock paces the gates and apply's waits.
	clock clock.Clock
	// envelope, for a command run with --json, collects the document it
	// prints whatever the outcome (runJSON); nil otherwise.
	envelope *envelope
	// flagSpy, when set, receives a command's flags instead of its -h
	// (completion.go reads every command's flags so).
	flagSpy func(fs *flag.FlagSet, cmd command)
}

// newCLI is the real process's cli.
func newCLI(env []string, stdout, stderr io.Writer) *cli {
	return &cli{env: env, stdout: stdout, stderr: stderr, stdin: os.Stdin,
		exec: (*entrypoint.Command).Exec, executable: os.Executable, clock: clock.System{}}
}

func main() {
	ctx, stop := entrypoint.NotifyContext(context.Background())
	var stdout io.Writer = os.Stdout
	if stdoutClosedAtStart() {
		stdout = failingWriter{errStdoutClosed}
	}
	code := newCLI(os.Environ(), stdout, os.Stderr).run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// Package entrypoint hands the container over to the real Connect process:
// it resolves the command before any gate runs (a typo must not cost a
// five-minute wait), filters connect-init's own variables out of the
// environment, and replaces connect-init with execve so the worker keeps
// PID 1 and receives the container's signals directly. Until then it turns
// SIGTERM/SIGINT into a context cancellation so the gates can withdraw
// cleanly and exit 128+signal.
package entrypoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/connect-init/connect-init/workerconfig"
)

// DefaultCommand is the Confluent image's own launcher, a new slice at
// each call so that no caller can change it for the others.
func DefaultCommand() []string { return []string{"/etc/confluent/docker/run"} }

// Command is a resolved program to exec.
type Command struct {
	// Path is the absolute path of the executable.
	Path string
	// Argv is the full argument vector, Argv[0] as given.
	Argv []string
	// Env is the environment the program gets.
	Env []string
}

// Error is a command that cannot be run: exit 2, before any gate.
type Error struct {
	Command string
	Problem string
}

// Error names the command and how to give the right one.
func (e *Error) Error() string {
	return fmt.Sprintf("command %q %s: give the worker's start command after --, e.g. connect-init run -- /etc/confluent/docker/run", e.Command, e.Problem)
}

// Resolve finds argv[0] (default DefaultCommand) on PATH as environ
// defines it, checks that it is an executable regular file, and prepares
// the filtered environment.
func Resolve(argv, environ []string) (*Command, error) {
	if len(argv) == 0 {
		argv = DefaultCommand()
	}
	name := argv[0]
	if name == "" {
		return nil, &Error{Command: name, Problem: "is empty"}
	}
	path, err := lookPath(name, pathOf(environ))
	if err != nil {
		return nil, &Error{Command: name, Problem: err.Error()}
	}
	return &Command{Path: path, Argv: append([]string(nil), argv...), Env: workerconfig.WithoutOwn(environ)}, nil
}

func pathOf(environ []string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(environ[i], "PATH="); ok {
			return v
		}
	}
	return "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
}

func lookPath(name, path string) (string, error) {
	if strings.Contains(name, "/") {
		return checkExecutable(name)
	}
	var firstErr error
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p, err := checkExecutable(filepath.Join(dir, name))
		if err == nil {
			return p, nil
		}
		if firstErr == nil && !errors.Is(err, os.ErrNotExist) {
			firstErr = err
		}
	}
	if firstErr != nil {
		return "", firstErr
	}
	return "", fmt.Errorf("is not found on PATH (%s)", path)
}

func checkExecutable(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("does not exist: %w", os.ErrNotExist)
		}
		return "", fmt.Errorf("cannot be inspected: %v", err)
	}
	if fi.IsDir() {
		return "", errors.New("is a directory")
	}
	if fi.Mode()&0o111 == 0 {
		return "", errors.New("is not executable (chmod +x it)")
	}
	if err := syscall.Access(p, 0x1); err != nil {
		return "", fmt.Errorf("is not executable by this user: %v", err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return abs, nil
}

// Exec replaces the current process with c. It returns only on failure.
func (c *Command) Exec() error {
	signal.Reset(syscall.SIGTERM, syscall.SIGINT)
	if err := syscall.Exec(c.Path, c.Argv, c.Env); err != nil {
		return fmt.Errorf("exec %s: %w", c.Path, err)
	}
	return nil
}

// SignalError is the cancellation cause when a signal stopped the gates.
type SignalError struct{ Signal syscall.Signal }

// Error names the signal.
func (e *SignalError) Error() string { return "interrupted by " + e.Signal.String() }

// ExitCode is the shell convention for death by signal: 128+signal.
func (e *SignalError) ExitCode() int { return 128 + int(e.Signal) }

// NotifyContext returns a context cancelled, with a *SignalError cause, by
// the first SIGTERM or SIGINT; stop releases the signal handler.
func NotifyContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			cancel(&SignalError{Signal: s.(syscall.Signal)})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(context.Canceled)
	}
}

// Interrupted returns the signal that cancelled ctx, if any.
func Interrupted(ctx context.Context) (*SignalError, bool) {
	var se *SignalError
	if errors.As(context.Cause(ctx), &se) {
		return se, true
	}
	return nil, false
}

// Command rusage runs a command and reports its wall time and peak RSS:
//
//	rusage -o RESULT -- CMD ARGS...
//
// It writes "<wall ns> <maxrss KiB> <exit code> <user ns> <system ns>" to
// RESULT; the command's
// output goes to rusage's stdout and stderr. The benchmark runs every timed
// command through it because a child's rusage maxrss includes the RSS of
// the process that forked it (Linux accounts the parent's memory map, which
// a vfork-style child uses until exec, to the child): forking from this
// small program instead of the benchmark keeps that floor at a few MiB,
// below what any measured command uses.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	out := flag.String("o", "", "file to write the result to")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: rusage -o RESULT -- CMD ARGS...")
		os.Exit(2)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, "rusage:", err)
		os.Exit(127)
	}
	var maxrss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		maxrss = ru.Maxrss
	}
	// The CPU time, user and system, of the command and the children it
	// waited for: what waiting costs (row 9).
	res := fmt.Sprintf("%d %d %d %d %d\n", wall.Nanoseconds(), maxrss, cmd.ProcessState.ExitCode(),
		cmd.ProcessState.UserTime().Nanoseconds(), cmd.ProcessState.SystemTime().Nanoseconds())
	if err := os.WriteFile(*out, []byte(res), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "rusage:", err)
		os.Exit(127)
	}
}

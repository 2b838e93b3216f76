//go:build !linux

package main

import "errors"

var errStdoutClosed = errors.New("stdout was closed when connect-init started")

// stdoutClosedAtStart is Linux's check (stdout_linux.go); elsewhere a
// closed stdout is seen only when a write fails.
func stdoutClosedAtStart() bool { return false }

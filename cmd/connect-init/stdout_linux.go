package main

import (
	"errors"
	"syscall"
)

// errStdoutClosed is the write error of a stdout that was closed when the
// process started (`connect-init config >&-`).
var errStdoutClosed = errors.New("stdout was closed when connect-init started")

// stdoutClosedAtStart reports whether stdout was closed when the process
// started. The Go runtime opens /dev/null read-write in place of a closed
// standard descriptor (runtime.checkfds), so that writes to it succeed and
// the answer is lost without a word; a shell's `>/dev/null` opens it
// write-only. A parent that hands over /dev/null opened read-write (as
// daemon(3) does) is taken for a closed stdout: give such a command
// `>/dev/null` instead.
func stdoutClosedAtStart() bool {
	var st syscall.Stat_t
	if err := syscall.Fstat(1, &st); err != nil {
		return true
	}
	const devNull = 1<<8 | 3 // major 1, minor 3
	if st.Mode&syscall.S_IFMT != syscall.S_IFCHR || st.Rdev != devNull {
		return false
	}
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, 1, syscall.F_GETFL, 0)
	return errno == 0 && flags&syscall.O_ACCMODE == syscall.O_RDWR
}

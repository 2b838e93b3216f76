package testbed

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a child process whose output goes to a log file, kept for
// assertions after it exits.
type Process struct {
	Name    string
	LogPath string

	cmd  *exec.Cmd
	done chan struct{}
	err  error // exit error, valid after done is closed
}

var (
	registryMu sync.Mutex
	registry   = map[*Process]struct{}{}
)

// StartProcess starts argv with env (nil = inherit) in dir, stdout and
// stderr appended to logPath. The process gets its own process group and
// dies with the test binary (PDEATHSIG), and KillAll reaches it.
func StartProcess(name string, argv, env []string, dir, logPath string) (*Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("testbed: empty command")
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("testbed: open log of %s: %w", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("testbed: start %s: %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	registryMu.Lock()
	registry[p] = struct{}{}
	registryMu.Unlock()
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		registryMu.Lock()
		delete(registry, p)
		registryMu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitCode waits for the process to exit (or ctx) and returns its exit code;
// -1 with a signal death.
func (p *Process) ExitCode(ctx context.Context) (int, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return 0, fmt.Errorf("testbed: %s did not exit: %w", p.Name, ctx.Err())
	}
	if p.err == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, p.err
}

// Signal sends sig to the process group.
func (p *Process) Signal(sig syscall.Signal) error {
	if p.Exited() {
		return nil
	}
	return syscall.Kill(-p.cmd.Process.Pid, sig)
}

// Kill sends SIGKILL to the whole process group and waits for the exit.
func (p *Process) Kill() {
	_ = p.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop asks the process to stop (SIGTERM) and kills it after grace.
func (p *Process) Stop(grace time.Duration) {
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Kill()
	}
}

// Log returns everything the process has written so far.
func (p *Process) Log() string {
	b, _ := os.ReadFile(p.LogPath)
	return string(b)
}

// CountInLog counts lines of the log containing substr.
func (p *Process) CountInLog(substr string) int {
	n := 0
	for _, line := range strings.Split(p.Log(), "\n") {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

// WaitForLog polls the log until it contains substr, the process exits or
// ctx ends.
func (p *Process) WaitForLog(ctx context.Context, substr string) error {
	for {
		if strings.Contains(p.Log(), substr) {
			return nil
		}
		select {
		case <-p.done:
			if strings.Contains(p.Log(), substr) {
				return nil
			}
			err := fmt.Errorf("testbed: %s exited before logging %q; log tail:\n%s", p.Name, substr, tail(p.Log(), 4000))
			if strings.Contains(p.Log(), "Address already in use") {
				// The bind exception is logged long before the shutdown
				// that follows it, out of the tail: say it apart, so that
				// StartCluster retries with fresh ports.
				return fmt.Errorf("%w: %w", ErrPortTaken, err)
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("testbed: %s did not log %q: %w; log tail:\n%s", p.Name, substr, ctx.Err(), tail(p.Log(), 4000))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// KillAll kills every process this package started and that still runs.
// TestMain functions defer it.
func KillAll() {
	registryMu.Lock()
	procs := make([]*Process, 0, len(registry))
	for p := range registry {
		procs = append(procs, p)
	}
	registryMu.Unlock()
	for _, p := range procs {
		p.Kill()
	}
}

// portsGiven are the ports FreePort handed out in this process.
var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// ErrPortTaken marks a process that exited because a port it was given was
// taken by another one between FreePort and its bind.
const ErrPortTaken = constError("testbed: Address already in use")

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago. It is
// picked at random below Linux's ephemeral range (32768-60999): a port the
// OS chose for a listener is one it may also hand to any outgoing connection
// (a client, the KDC, Maven) before the broker binds it, which is how the
// clean-clone CI run lost a broker of the cmd/connect-init cluster.
//
// A port is never handed out twice by one test process: two contenders of
// the fault harness were once given the same port before either bound it,
// and the lock rightly refused the second as a duplicate identity.
func FreePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 200 {
		port := 10000 + rand.IntN(32768-10000)
		if portsGiven[port] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		l.Close()
		portsGiven[port] = true
		return port, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WaitForPort polls until addr accepts TCP connections or ctx ends.
func WaitForPort(ctx context.Context, addr string) error {
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testbed: %s does not accept connections: %w", addr, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// constError is an error that is a constant, so that no importer can
// replace a sentinel that errors.Is compares against.
type constError string

func (e constError) Error() string { return string(e) }

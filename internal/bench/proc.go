package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// buildStatic builds pkg into dir as a static, stripped binary, the way the
// Makefile's build target does.
func buildStatic(root, dir, pkg, name, ldflags string) (string, error) {
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", strings.TrimSpace("-s -w "+ldflags), "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", pkg, err, msg)
	}
	return out, nil
}

// oneShot is the outcome of a process run to completion.
type oneShot struct {
	wall   time.Duration
	maxRSS int64 // KiB, from rusage
	// user and sys are the CPU time the process (and the children it
	// waited for) used.
	user, sys time.Duration
	code      int
	out       string
}

// timeRun runs argv with env to completion through the rusage helper and
// returns its wall time (fork to reap, measured by the helper) and peak RSS.
func timeRun(ctx context.Context, argv, env []string) (oneShot, error) {
	if rusageHelper == "" {
		return oneShot{}, errors.New("rusage helper not built")
	}
	resFile, err := os.CreateTemp("", "bench-rusage-")
	if err != nil {
		return oneShot{}, err
	}
	resFile.Close()
	defer os.Remove(resFile.Name())
	cmd := exec.CommandContext(ctx, rusageHelper, append([]string{"-o", resFile.Name(), "--"}, argv...)...)
	cmd.Env = env
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = cmd.Run()
	r := oneShot{out: buf.String()}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return r, err
	}
	data, rerr := os.ReadFile(resFile.Name())
	var wallNS int64
	if rerr != nil || len(data) == 0 {
		return r, fmt.Errorf("rusage helper failed (%v):\n%s", err, tailString(r.out, 2000))
	}
	var userNS, sysNS int64
	if _, err := fmt.Sscanf(string(data), "%d %d %d %d %d", &wallNS, &r.maxRSS, &r.code, &userNS, &sysNS); err != nil {
		return r, fmt.Errorf("rusage helper result %q: %w", data, err)
	}
	r.wall, r.user, r.sys = time.Duration(wallNS), time.Duration(userNS), time.Duration(sysNS)
	return r, nil
}

// rusageHelper is the path of the built rusage helper.
var rusageHelper string

// line is one line of a live process's output with its time of receipt.
type line struct {
	at   time.Time
	text string
}

// liveProc is a process whose stderr (and stdout) is read through a pipe,
// each line timestamped when it is received.
type liveProc struct {
	name  string
	cmd   *exec.Cmd
	start time.Time
	done  chan struct{}
	log   *os.File

	mu    sync.Mutex
	lines []line
	subs  []sub
	err   error
}

type sub struct {
	substr string
	ch     chan line
}

var (
	startedMu sync.Mutex
	started   = map[*liveProc]struct{}{}
)

// startLive starts argv with env, its output piped and copied to logPath.
// It gets its own process group and dies with the benchmark.
func startLive(name string, argv, env []string, logPath string) (*liveProc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	pr, pw, err := os.Pipe()
	if err != nil {
		f.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p := &liveProc{name: name, cmd: cmd, done: make(chan struct{}), log: f}
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		f.Close()
		return nil, err
	}
	pw.Close()
	startedMu.Lock()
	started[p] = struct{}{}
	startedMu.Unlock()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		p.read(pr)
	}()
	go func() {
		err := cmd.Wait()
		<-readDone
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		f.Close()
		startedMu.Lock()
		delete(started, p)
		startedMu.Unlock()
		close(p.done)
	}()
	return p, nil
}

func (p *liveProc) read(r io.ReadCloser) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		l := line{at: time.Now(), text: sc.Text()}
		p.mu.Lock()
		p.lines = append(p.lines, l)
		kept := p.subs[:0]
		for _, s := range p.subs {
			if strings.Contains(l.text, s.substr) {
				s.ch <- l
				continue
			}
			kept = append(kept, s)
		}
		p.subs = kept
		p.mu.Unlock()
		fmt.Fprintln(p.log, l.at.Format("15:04:05.000000"), l.text)
	}
}

// waitLine returns the first line containing substr (already received or
// still to come), or an error when the process exits or ctx ends first.
func (p *liveProc) waitLine(ctx context.Context, substr string) (line, error) {
	ch := make(chan line, 1)
	p.mu.Lock()
	for _, l := range p.lines {
		if strings.Contains(l.text, substr) {
			p.mu.Unlock()
			return l, nil
		}
	}
	p.subs = append(p.subs, sub{substr: substr, ch: ch})
	p.mu.Unlock()
	select {
	case l := <-ch:
		return l, nil
	case <-p.done:
		select {
		case l := <-ch:
			return l, nil
		default:
		}
		return line{}, fmt.Errorf("%s exited (%v) before logging %q; output tail:\n%s", p.name, p.exitErr(), substr, p.tail(3000))
	case <-ctx.Done():
		return line{}, fmt.Errorf("%s did not log %q: %w; output tail:\n%s", p.name, substr, ctx.Err(), p.tail(3000))
	}
}

func (p *liveProc) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// find returns the first line received containing substr.
func (p *liveProc) find(substr string) (line, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.lines {
		if strings.Contains(l.text, substr) {
			return l, true
		}
	}
	return line{}, false
}

func (p *liveProc) tail(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	for _, l := range p.lines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	s := b.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

func (p *liveProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill kills the process group and waits for the exit.
func (p *liveProc) kill() {
	if !p.exited() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-p.done
}

// killStarted kills every live process the benchmark started and that
// still runs.
func killStarted() {
	startedMu.Lock()
	ps := make([]*liveProc, 0, len(started))
	for p := range started {
		ps = append(ps, p)
	}
	startedMu.Unlock()
	for _, p := range ps {
		p.kill()
	}
}

// procStatus reads the Name and VmHWM (KiB) of pid from /proc.
func procStatus(pid int) (name string, hwmKB int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Name":
			name = v
		case "VmHWM":
			hwmKB, _ = strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
		}
	}
	return name, hwmKB, nil
}

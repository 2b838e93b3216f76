package startup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/step"
)

// Secrets leave no trace (issue 48): after each failure path of run in the
// in-worker mode with CONNECT_INIT_CONNECTORS_DIR set, the hand-over base
// directory holds no hand-over, and the apply child's /proc/<pid>/environ
// holds no REST secret.

const fpPassword = "handover-pw-7e1"

// execOnlyGates are the real exec step after gates that all passed (the
// state is set up as they would leave it); failAt makes one of them fail.
type execOnlyGates struct {
	realGates
	failAt string
}

func (g execOnlyGates) pass(name string) error {
	if name == g.failAt {
		return &gate.GateError{Gate: name, Err: errors.New("failed (test)")}
	}
	return nil
}
func (g execOnlyGates) settings(context.Context, *state) error    { return g.pass(step.Settings) }
func (g execOnlyGates) brokers(context.Context, *state) error     { return g.pass(step.Brokers) }
func (g execOnlyGates) topics(context.Context, *state) error      { return g.pass(step.Topics) }
func (g execOnlyGates) coordinator(context.Context, *state) error { return g.pass(step.Coordinator) }
func (g execOnlyGates) group(context.Context, *state) error       { return g.pass(step.Group) }
func (g execOnlyGates) plugins(context.Context, *state) error     { return g.pass(step.Plugins) }
func (g execOnlyGates) lock(context.Context, *state) error        { return g.pass(step.Lock) }
func (g execOnlyGates) peers(context.Context, *state) error       { return g.pass(step.Peers) }

// pidsHandler records the pid attribute of every log record, and each
// record as a line of text.
type pidsHandler struct {
	mu    sync.Mutex
	pids  []int
	lines strings.Builder
}

func (h *pidsHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *pidsHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		h.lines.WriteString(" " + a.String())
		if a.Key == "pid" {
			h.pids = append(h.pids, int(a.Value.Int64()))
		}
		return true
	})
	h.lines.WriteString("\n")
	return nil
}

// text is every record logged so far.
func (h *pidsHandler) text() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lines.String()
}
func (h *pidsHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *pidsHandler) WithGroup(string) slog.Handler      { return h }

// handoverBed is one start of run: a base directory for the hand-overs,
// an apply child that sleeps (a script standing for connect-init apply),
// the worker's settings with a plain REST password.
type handoverBed struct {
	t      *testing.T
	base   string
	script string
	pids   *pidsHandler
}

func newHandoverBed(t *testing.T) *handoverBed {
	base := t.TempDir()
	old := handoverBases
	handoverBases = func() []string { return []string{base} }
	t.Cleanup(func() { handoverBases = old })
	script := filepath.Join(t.TempDir(), "connect-init")
	// The shell stays the child (no exec of its own): while a process
	// execs, its /proc/<pid>/environ reads empty for a moment, and
	// children() read it then in one run of twenty under -race.
	if err := os.WriteFile(script, []byte("#!/bin/sh\nwhile :; do /bin/sleep 1; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &handoverBed{t: t, base: base, script: script, pids: &pidsHandler{}}
}

// run runs the start-up's steps once: propertiesFile wires through the
// worker's properties file (removed before the exec when vanish is set),
// exec is the exec's outcome, failAt a step that fails.
func (b *handoverBed) run(propertiesFile, vanish bool, execErr error, failAt string) int {
	t := b.t
	env := append(append([]string(nil), workerEnv...), "CONNECT_INIT_LOCK_JAR="+testJar(t),
		"CONNECT_INIT_REST_USERNAME=admin", "CONNECT_INIT_REST_PASSWORD="+fpPassword, "CONNECT_INIT_CONNECTORS_DIR="+t.TempDir())
	cmd := &entrypoint.Command{Path: "/etc/confluent/docker/run", Argv: []string{"run"}, Env: append([]string(nil), workerEnv...)}
	var file string
	if propertiesFile {
		file = filepath.Join(t.TempDir(), "worker.properties")
		if err := os.WriteFile(file, []byte("plugin.path=/x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		env = append(env, "CONNECT_INIT_WORKER_CONFIG="+file)
		cmd = &entrypoint.Command{Path: "/opt/kafka/bin/connect-distributed.sh", Argv: []string{"connect-distributed.sh", file}, Env: append([]string(nil), workerEnv...)}
	}
	cfg := loadTestConfig(t, env)
	executable := func() (string, error) { return b.script, nil }
	log := slog.New(b.pids)
	plan, err := planStartupLock(cfg, cmd, executable, log)
	if err != nil || plan == nil {
		t.Fatalf("planStartupLock = %v, %v", plan, err)
	}
	if vanish {
		if err := os.Remove(file); err != nil {
			t.Fatal(err)
		}
	}
	st := &state{argv: []string{"connect-init", "run"}, env: env, settings: cfg.Settings, withExec: true, cfg: cfg,
		clients: &kafka.Clients{}, command: cmd, inWorker: plan, profile: NewProfile(nil)}
	g := execOnlyGates{realGates: realGates{log: log, clock: clock.System{}, executable: executable,
		execWorker: func(*entrypoint.Command) error { return execErr }}, failAt: failAt}
	return runStartup(context.Background(), g, st, log)
}

// left lists what the base directory holds.
func (b *handoverBed) left() []string {
	var out []string
	_ = filepath.WalkDir(b.base, func(path string, d os.DirEntry, err error) error {
		if path != b.base {
			out = append(out, strings.TrimPrefix(path, b.base+"/"))
		}
		return nil
	})
	return out
}

// children checks every apply child started so far: its environment
// holds no secret, then it is killed (each is this test's own process).
func (b *handoverBed) children() int {
	t := b.t
	b.pids.mu.Lock()
	pids := append([]int(nil), b.pids.pids...)
	b.pids.pids = nil
	b.pids.mu.Unlock()
	for _, pid := range pids {
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			t.Errorf("apply child %d: %v", pid, err)
			continue
		}
		for _, kv := range strings.Split(string(environ), "\x00") {
			k, v, _ := strings.Cut(kv, "=")
			if strings.Contains(v, fpPassword) || k == "CONNECT_INIT_REST_PASSWORD" || k == "CONNECT_INIT_REST_TOKEN" {
				t.Errorf("apply child %d carries the secret in %s", pid, k)
			}
		}
		// The password reaches the child as an open file without a name,
		// which its _FILE setting names through /proc/self/fd.
		if !strings.Contains(string(environ), "CONNECT_INIT_REST_PASSWORD_FILE=/proc/self/fd/3\x00") {
			t.Errorf("apply child %d has no CONNECT_INIT_REST_PASSWORD_FILE=/proc/self/fd/3: it cannot reach an authenticated worker", pid)
		} else if body, err := os.ReadFile(fmt.Sprintf("/proc/%d/fd/3", pid)); err != nil || string(body) != fpPassword {
			t.Errorf("apply child %d: fd 3 does not hold the password (%v)", pid, err)
		}
		p, err := os.FindProcess(pid)
		if err == nil {
			_ = p.Signal(syscall.SIGKILL)
			_, _ = p.Wait()
		}
	}
	return len(pids)
}

func TestHandoverExecFails(t *testing.T) {
	b := newHandoverBed(t)
	if code := b.run(false, false, errors.New("exec /etc/confluent/docker/run: no such file or directory"), ""); code == exitcode.OK {
		t.Fatal("run succeeded with a failing exec")
	}
	if left := b.left(); len(left) > 0 {
		t.Errorf("after a failed exec the hand-over base holds %v", left)
	}
	if n := b.children(); n != 1 {
		t.Errorf("%d apply children, want 1 (started before the exec)", n)
	}
}

// The worker's properties file vanishes between the plan and the wiring:
// the wiring fails after the secrets were written.
func TestHandoverWiringFails(t *testing.T) {
	b := newHandoverBed(t)
	if code := b.run(true, true, nil, ""); code == exitcode.OK {
		t.Fatal("run succeeded with a vanished worker properties file")
	}
	if left := b.left(); len(left) > 0 {
		t.Errorf("after a failed wiring the hand-over base holds %v", left)
	}
	if n := b.children(); n != 0 {
		t.Errorf("%d apply children, want none (the wiring failed first)", n)
	}
}

// A step fails before the exec: nothing was written, nothing is left.
func TestHandoverStepFails(t *testing.T) {
	b := newHandoverBed(t)
	if code := b.run(false, false, nil, step.Peers); code == exitcode.OK {
		t.Fatal("run succeeded with a failing step")
	}
	if left := b.left(); len(left) > 0 {
		t.Errorf("after a failed step the hand-over base holds %v", left)
	}
}

// The exec succeeds and the worker (the JVM) dies before its provider
// reads the lock's hand-over, and the apply child is killed: the apply
// child's secret has no file left by then (it was opened and removed
// before the child started); the next start of this process (its PID, as
// in a container) removes the lock's hand-over before any step. Of the
// others, a live process's stays, a dead one's goes, the old form goes,
// and one of another PID namespace (another container sharing the
// directory, or this container's earlier incarnation) goes only once it
// is older than handoverMaxAge.
func TestHandoverStaleRemovedAtStart(t *testing.T) {
	b := newHandoverBed(t)
	if code := b.run(false, false, nil, ""); code != exitcode.OK {
		t.Fatalf("run = %d", code)
	}
	left := b.left()
	own := fmt.Sprintf("connect-init-lock-n%d-p%d-", pidNamespace(), os.Getpid())
	if len(left) != 2 || !strings.HasPrefix(left[0], own) || left[1] != left[0]+"/"+childSecretsName {
		t.Fatalf("after a started worker the base holds %v, want the lock's hand-over %s* only", left, own)
	}
	if info, err := os.Lstat(filepath.Join(b.base, left[1])); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, %v; want mode 0600", left[1], info, err)
	}
	if n := b.children(); n != 1 { // checked, then killed
		t.Errorf("%d apply children, want 1", n)
	}
	ns := pidNamespace()
	dirs := map[string]bool{ // name: kept
		fmt.Sprintf("connect-init-lock-n%d-p%d-1", ns, os.Getppid()): true,  // a live process here
		fmt.Sprintf("connect-init-lock-n%d-p2147483646-1", ns):       false, // a dead one
		"connect-init-lock-123456":                                   false, // the old form
		"connect-init-lock-n1-p1-young":                              true,  // another namespace, young
		"connect-init-lock-n1-p1-old":                                false, // another namespace, 2 h old
		"someone-else-p1":                                            true,
	}
	for d := range dirs {
		dir := filepath.Join(b.base, d)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, childSecretsName), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(d, "-old") {
			old := time.Now().Add(-2 * time.Hour)
			if err := os.Chtimes(dir, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if code := b.run(false, false, nil, step.Brokers); code == exitcode.OK {
		t.Fatal("run succeeded with a failing brokers step")
	}
	var want []string
	for d, kept := range dirs {
		if kept {
			want = append(want, d, d+"/"+childSecretsName)
		}
	}
	if got := b.left(); strings.Join(got, " ") != strings.Join(slices.Sorted(slices.Values(want)), " ") {
		t.Errorf("after the restart the base holds %v, want only %v", got, slices.Sorted(slices.Values(want)))
	}
}

// The hand-over file is never written through a link, nor over a file
// already there: O_NOFOLLOW and O_EXCL; a failed write leaves nothing.
func TestHandoverWriteRefusesLinks(t *testing.T) {
	newHandoverBed(t)
	h, err := newHandover("lock")
	if err != nil {
		t.Fatal(err)
	}
	defer h.remove()
	target := filepath.Join(t.TempDir(), "target")
	if err := os.Symlink(target, filepath.Join(h.dir, childSecretsName)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.write(childSecretsName, []byte("secret")); err == nil {
		t.Fatal("write through a planted link succeeded")
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link's target was written: %v", err)
	}
	if st, err := os.Stat(h.dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("hand-over directory %v, %v; want 0700", st, err)
	}
}

// The exec fails after the wiring wrote the copy of the worker's
// properties file (which may hold its passwords) into $TMPDIR: run
// removes the copy with the hand-over, since no worker reads it.
func TestHandoverExecFailsRemovesThePropertiesCopy(t *testing.T) {
	b := newHandoverBed(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if code := b.run(true, false, errors.New("exec /opt/kafka/bin/connect-distributed.sh: no such file or directory"), ""); code == exitcode.OK {
		t.Fatal("run succeeded with a failing exec")
	}
	if left := b.left(); len(left) > 0 {
		t.Errorf("after a failed exec the hand-over base holds %v", left)
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), handoverPrefix) {
			t.Errorf("after a failed exec $TMPDIR holds %s, the copy of the worker's properties", e.Name())
		}
	}
	b.children()
}

//go:build integration

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// Secrets leave no trace (issue 48, "a JVM killed before the provider"):
// in the in-worker lock mode run writes the REST secrets hand-over
// (startup/handover.go) and execs the worker; the provider's `lock
// acquire` child reads and removes it. A JVM that dies before its provider
// runs leaves it; the next start of this user in this PID namespace
// removes it (the PID in its name is no process), and no process of
// either start carries the REST password in its environment.

// jdwpHold makes a JVM wait before its main method until a debugger
// attaches, which none does: a real worker JVM whose start is held, so
// that it is killed before its config provider runs, deterministically.
const jdwpHold = "-agentlib:jdwp=transport=dt_socket,server=y,suspend=y,address=127.0.0.1:0"

// handoverDirs are the hand-over directories of the process pid in the
// bases run uses (/dev/shm first, then $TMPDIR): their names carry the
// PID run had, which the worker keeps after the exec.
func handoverDirs(t *testing.T, pid int) []string {
	t.Helper()
	var out []string
	for _, base := range []string{"/dev/shm", os.TempDir()} {
		entries, err := os.ReadDir(base)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), "connect-init-lock-n") && strings.Contains(e.Name(), fmt.Sprintf("-p%d-", pid)) {
				out = append(out, filepath.Join(base, e.Name()))
			}
		}
	}
	return out
}

// processTree is pid and every process descending from it now.
func processTree(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at the last ')'.
		rest := string(b[bytes.LastIndexByte(b, ')')+1:])
		if f := strings.Fields(rest); len(f) > 1 {
			parent[p], _ = strconv.Atoi(f[1])
		}
	}
	tree := []int{pid}
	for grew := true; grew; {
		grew = false
		for p, pp := range parent {
			if slices.Contains(tree, pp) && !slices.Contains(tree, p) {
				tree = append(tree, p)
				grew = true
			}
		}
	}
	return tree
}

// environsHoldNoSecret fails t when the environment of pid or of any of
// its descendants holds secret or a CONNECT_INIT_REST_ secret variable;
// it returns how many environments it read.
func environsHoldNoSecret(t *testing.T, who string, pid int, secret string) int {
	t.Helper()
	read := 0
	for _, p := range processTree(pid) {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p))
		if err != nil {
			continue // exited meanwhile
		}
		read++
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		what := fmt.Sprintf("%s: process %d (%s)", who, p, tailString(strings.ReplaceAll(string(cmdline), "\x00", " "), 120))
		if bytes.Contains(env, []byte(secret)) {
			t.Errorf("%s holds the REST password in its environment", what)
		}
		for _, v := range []string{"CONNECT_INIT_REST_PASSWORD=", "CONNECT_INIT_REST_TOKEN="} {
			if bytes.Contains(env, []byte(v)) {
				t.Errorf("%s has %s in its environment", what, v)
			}
		}
		if bytes.Contains(cmdline, []byte(secret)) {
			t.Errorf("%s holds the REST password in its command line", what)
		}
	}
	return read
}

// TestHandoverJVMKilledBeforeProvider: a real worker behind
// BasicAuthSecurityRestExtension, the in-worker lock (the default where
// the provider jar is installed), the password a plain
// CONNECT_INIT_REST_PASSWORD. Its JVM is held before main (JDWP suspend)
// and killed -9 there: the provider never ran, so the hand-over run wrote
// is still on disk, 0600 in a 0700 directory, and neither the JVM nor
// anything it started has the password in its environment. The next start
// (another worker of the group, as a restarted container in a kept
// /dev/shm or /tmp) removes it before its steps, says so in its log, and
// its own hand-over is gone once its provider's child has read it.
func TestHandoverJVMKilledBeforeProvider(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	ext, err := testbed.BasicAuthExtension(ctx, cluster.Dist)
	if err != nil {
		t.Fatal(err)
	}
	password := "pw-" + randomSuffix()
	users := [][2]string{{"admin", password}}
	group := uniqueGroup(t, "handoverkill")
	env := []string{"CONNECT_INIT_LOCK_LEASE=2m", "CONNECT_INIT_LOCK_TOPIC=" + lockTopicFor(group),
		"CONNECT_INIT_REST_USERNAME=admin", "CONNECT_INIT_REST_PASSWORD=" + password}

	held := newInWorkerBasicAuthWorker(t, group, group["group.id"]+"-held", ext, users, env...)
	// argv: connect-init run -- java <options> ...: the hold goes first
	// among the JVM's options.
	held.argv = slices.Insert(held.argv, 4, jdwpHold)
	startLockWorkers(t, held)
	if err := held.w.WaitForLog(ctx, "Listening for transport dt_socket"); err != nil {
		t.Fatalf("the held JVM did not start: %v\n%s", err, tailString(held.w.Log(), 4000))
	}
	pid := held.w.Pid()
	if !strings.Contains(held.w.Log(), `msg="starting the worker"`) || !strings.Contains(held.w.Log(), "mode=worker") {
		t.Fatalf("run did not exec the worker in the in-worker lock mode:\n%s", tailString(held.w.Log(), 4000))
	}
	if strings.Contains(held.w.Log(), providerLine) {
		t.Fatal("the provider ran: the JVM was not held before it")
	}
	dirs := handoverDirs(t, pid)
	if len(dirs) != 1 {
		t.Fatalf("hand-over directories of pid %d: %v, want exactly one (run writes it before the exec)", pid, dirs)
	}
	// A failed run leaves no copy of its password on the machine.
	t.Cleanup(func() { _ = os.RemoveAll(dirs[0]) })
	file := filepath.Join(dirs[0], "secrets.json")
	if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), password) {
		t.Fatalf("the hand-over %s before the kill: %v; it should hold the password the child needs", file, err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the hand-over file's mode: %v, %v; want 0600", fi.Mode(), err)
	}
	if di, err := os.Stat(dirs[0]); err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("the hand-over directory's mode: %v, %v; want 0700", di.Mode(), err)
	}
	if n := environsHoldNoSecret(t, "the held worker", pid, password); n == 0 {
		t.Fatalf("read no environment of the held JVM %d", pid)
	}

	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil { // the JVM only: the kill of a crash or the OOM killer
		t.Fatal(err)
	}
	<-held.w.Done()
	if _, err := os.Stat(dirs[0]); err != nil {
		t.Logf("the hand-over was gone before the next start (%v)", err)
	} else {
		t.Logf("after the kill the hand-over %s is left, as designed, for the next start to remove", dirs[0])
	}

	next := newInWorkerBasicAuthWorker(t, group, group["group.id"]+"-next", ext, users, env...)
	startLockWorkers(t, next)
	if err := next.w.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dirs[0]); err == nil {
		t.Errorf("the killed JVM's hand-over %s is still there after the next start", dirs[0])
	}
	if _, err := os.Stat(file); err == nil {
		t.Errorf("the killed JVM's hand-over file %s is still there after the next start", file)
	}
	if line, _, ok := slogLine(next.w.Log(), "removed a stale secrets hand-over of an earlier start", "dir="+dirs[0]); !ok {
		t.Errorf("the next start did not log the removal of %s (%q)", dirs[0], line)
	}
	if left := handoverDirs(t, next.w.Pid()); len(left) != 0 {
		t.Errorf("the next start's own hand-over is left after its worker started: %v", left)
	}
	environsHoldNoSecret(t, "the next worker", next.w.Pid(), password)
	for _, lw := range []*lockWorker{held, next} {
		noSecret(t, lw.name+"'s log", lw.w.Log(), password)
	}
	t.Logf("took %s", time.Since(start).Round(time.Millisecond))
}

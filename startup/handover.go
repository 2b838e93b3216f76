package startup

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/connect-init/connect-init/step"
)

// Secrets run hands over to its children (the in-worker lock's `lock
// acquire`, the apply child) go through a file of their own, never through
// a child's environment (/proc/<pid>/environ is readable by every process
// of the same user, connector code included) nor a worker property
// (Connect logs those). The file rests where it is least likely to reach a
// disk and least likely to outlive the container: /dev/shm when writable,
// else $TMPDIR; in a directory of mode 0700 made for it, named after run's
// PID namespace and PID (which the worker keeps after the exec), created
// with O_EXCL and O_NOFOLLOW, mode 0600. Run removes it on every path where the worker
// did not start (a half-done write, a failed wiring, a failed exec), the
// lock's child removes it once read, the apply child's is removed as soon
// as it is open (applychild.go), and run removes at start the hand-overs
// of this user whose process is gone: a JVM that died before its provider
// read the file, in a container restarted with its /tmp or /dev/shm kept
// (issue 48).

// handoverPrefix starts the name of every hand-over directory:
// connect-init-<kind>-n<pid namespace>-p<pid>-<random>.
const handoverPrefix = "connect-init-"

// handoverMaxAge is how old a hand-over of another PID namespace must be
// before a start removes it. Its process cannot be seen from here: it is
// either this container's earlier incarnation (a restarted container gets
// a new PID namespace) or another container sharing /dev/shm or /tmp (the
// containers of a Kubernetes pod share /dev/shm, an emptyDir may be
// mounted in several); the lock's child reads its hand-over when the
// worker resolves its config providers, minutes at most after the exec,
// so an hour-old one is no live worker's.
const handoverMaxAge = time.Hour

// handoverKinds are the hand-overs' kinds: the in-worker lock's child and
// the apply child.
var handoverKinds = []string{"lock", "apply"}

// handoverBases are the directories a hand-over is made in, best first; a
// variable so that tests use their own.
var handoverBases = func() []string { return []string{"/dev/shm", os.TempDir()} }

// handover is one hand-over directory.
type handover struct{ dir string }

// newHandover makes a hand-over directory of kind in the first base that
// takes one.
func newHandover(kind string) (*handover, error) {
	var errs []error
	for _, base := range handoverBases() {
		dir, err := os.MkdirTemp(base, fmt.Sprintf("%s%s-n%d-p%d-*", handoverPrefix, kind, pidNamespace(), os.Getpid()))
		if err == nil {
			h := &handover{dir: dir}
			pending.add(h)
			return h, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("a directory for the child's secret settings: %w", errors.Join(errs...))
}

// write creates name in the directory (O_EXCL, O_NOFOLLOW, 0600) holding
// b and returns its path; on any failure nothing of it is left.
func (h *handover) write(name string, b []byte) (string, error) {
	path := filepath.Join(h.dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", fmt.Errorf("writing the child's secret settings: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return "", fmt.Errorf("writing the child's secret settings: %w", err)
	}
	return path, nil
}

// remove removes the directory and what it holds.
func (h *handover) remove() {
	if h != nil {
		_ = os.RemoveAll(h.dir)
		pending.drop(h)
	}
}

// handovers are the hand-overs run made and has not removed: on a path
// where the worker did not start, run removes them all (run.go).
type handovers struct {
	mu  sync.Mutex
	all []*handover
}

// pending are this process's hand-overs.
var pending handovers

func (s *handovers) add(h *handover) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, h)
}

func (s *handovers) drop(h *handover) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, o := range s.all {
		if o == h {
			s.all = append(s.all[:i], s.all[i+1:]...)
			return
		}
	}
}

// removeAll removes every pending hand-over: the worker did not start,
// so no child of it will read them. An apply child already started reads
// its own once at its start.
func (s *handovers) removeAll() {
	s.mu.Lock()
	all := s.all
	s.all = nil
	s.mu.Unlock()
	for _, h := range all {
		_ = os.RemoveAll(h.dir)
	}
}

// sweepStaleHandovers removes, in every base, the hand-over directories of
// this user whose process is gone: in this PID namespace, the PID in the
// name is no process, or is this very process (an earlier process with
// this PID wrote it); of another PID namespace, it is older than
// handoverMaxAge. A directory without them (written before issue 48) has
// no process to wait for either. Another live worker's hand-over on a
// shared /tmp or /dev/shm is left alone.
func sweepStaleHandovers(log *slog.Logger) {
	now := time.Now()
	for _, base := range handoverBases() {
		entries, err := os.ReadDir(base)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), handoverPrefix) {
				continue
			}
			info, err := e.Info()
			if err != nil || !ownedByMe(info) || !staleHandover(e.Name(), now.Sub(info.ModTime())) {
				continue
			}
			dir := filepath.Join(base, e.Name())
			if err := os.RemoveAll(dir); err != nil {
				log.Warn("cannot remove a stale secrets hand-over", "gate", step.Settings, "dir", dir, "error", err.Error())
				continue
			}
			log.Info("removed a stale secrets hand-over of an earlier start", "gate", step.Settings, "dir", dir)
		}
	}
}

// staleHandover reports whether name, a directory age old, is a hand-over
// whose process is gone.
func staleHandover(name string, age time.Duration) bool {
	for _, kind := range handoverKinds {
		rest, ok := strings.CutPrefix(name, handoverPrefix+kind+"-")
		if !ok {
			continue
		}
		var ns uint64
		var pid int
		if _, err := fmt.Sscanf(rest, "n%d-p%d-", &ns, &pid); err != nil || pid <= 0 {
			// The old form, connect-init-lock-<random>: no process to
			// wait for.
			return kind == "lock" && !strings.HasPrefix(rest, "n")
		}
		if ns != pidNamespace() {
			return age > handoverMaxAge
		}
		return pid == os.Getpid() || errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	return false
}

// pidNamespace is the inode number of this process's PID namespace (0
// when /proc does not say): PIDs of another namespace name other
// processes.
func pidNamespace() uint64 {
	link, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return 0
	}
	var ns uint64
	if _, err := fmt.Sscanf(link, "pid:[%d]", &ns); err != nil {
		return 0
	}
	return ns
}

// ownedByMe reports whether the file belongs to this user.
func ownedByMe(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

package startup

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/connect-init/connect-init/exitcode"
)

// A full disk under run's writes (issue 48): the secrets hand-over and
// the copy of the worker's properties file with the in-worker wiring.
//
// The disk is made full for this process by its file-size limit
// (RLIMIT_FSIZE, `ulimit -f`): past the limit a write to a regular file
// fails (EFBIG, "file too large"; Go ignores SIGXFSZ) after the bytes up
// to it were written, which is a full disk's half-done write, on every
// file system and without root, where a small tmpfs needs a mount. The
// limit is the process's, so the test runs in a child process of its own
// (this test binary again, this test only), where no other test writes.

// diskFullChild marks the child process.
const diskFullChild = "FAILPATH_DISK_FULL_CHILD"

// withFileSizeLimit runs f with every file write of this process limited
// to limit bytes, and restores the limit.
func withFileSizeLimit(t *testing.T, limit uint64, f func()) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
			t.Fatal(err)
		}
	}()
	f()
}

// TestHandoverDiskFull: the disk fills while run writes the hand-over (20
// bytes fit: the secrets' JSON is cut half-way) or, the hand-over written,
// while it writes the worker's properties copy (100 bytes fit). Either
// way run exits 1, the hand-over base holds nothing, $TMPDIR holds no
// connect-init directory (no half-written copy of the worker's
// properties, which may hold its SASL or TLS passwords), and the log
// names the write that failed.
func TestHandoverDiskFull(t *testing.T) {
	if os.Getenv(diskFullChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHandoverDiskFull$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), diskFullChild+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestHandoverDiskFull") {
			t.Fatalf("the test's child process: %v\n%s", err, out)
		}
		t.Logf("child process:\n%s", out)
		return
	}
	for _, c := range []struct {
		name           string
		limit          uint64
		propertiesFile bool
		want           string
	}{
		{"the hand-over", 20, false, "writing the child's secret settings"},
		{"the properties copy", 100, true, "file too large"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newHandoverBed(t)
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			var code int
			withFileSizeLimit(t, c.limit, func() { code = b.run(c.propertiesFile, false, nil, "") })
			// A full disk is no bad configuration: exit 1, not 2.
			if code != exitcode.Failed {
				t.Errorf("run exited %d with a full disk, want 1", code)
			}
			if left := b.left(); len(left) > 0 {
				t.Errorf("the hand-over base holds %v after the disk filled", left)
			}
			entries, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), handoverPrefix) {
					t.Errorf("$TMPDIR holds %s after the disk filled: a half-written copy of the worker's settings", e.Name())
				}
			}
			if got := b.pids.text(); !strings.Contains(got, c.want) {
				t.Errorf("the log does not name the failed write (%q):\n%s", c.want, got)
			}
			b.children()
		})
	}
}

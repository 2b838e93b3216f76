package buildinfo

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// releaseFlags are make release's go build flags (Makefile, release); a
// change there belongs here too.
var releaseFlags = []string{"build", "-trimpath", "-buildvcs=true", "-ldflags", "-s -w -buildid="}

// TestReleaseBuildReproducible: two release builds of one commit, from
// two checkouts at different paths, are the same bytes, and the binary
// reports the commit from its build information alone (no -ldflags stamp).
// The checkouts are fresh clones of HEAD: Go records the VCS only from a
// .git directory (not a worktree's .git file) and marks a changed tree
// "modified", so the committed tree is what is built. The two builds share
// the build cache, which keeps the test cheap; make reproducible builds
// with two empty caches.
func TestReleaseBuildReproducible(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(run(t, root, "git", "rev-parse", "HEAD"))
	tmp := t.TempDir()
	var bins []string
	for _, name := range []string{"a", filepath.Join("b", "deeper")} {
		dir := filepath.Join(tmp, name)
		run(t, tmp, "git", "clone", "--quiet", "--shared", "--no-checkout", root, dir)
		run(t, dir, "git", "checkout", "--quiet", "--detach", head)
		bin := filepath.Join(tmp, strings.ReplaceAll(name, "/", "-")+".bin")
		cmd := exec.Command("go", append(releaseFlags, "-o", bin, "./cmd/connect-init")...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build in %s: %v\n%s", dir, err, out)
		}
		bins = append(bins, bin)
	}
	a, err := os.ReadFile(bins[0])
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(bins[1])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("two release builds of %s differ (%d and %d bytes): compare `go version -m` of %s and %s", head, len(a), len(b), bins[0], bins[1])
	}
	var doc struct{ Result Info } // connect-init's JSON envelope
	if err := json.Unmarshal([]byte(run(t, tmp, bins[0], "version", "--json")), &doc); err != nil {
		t.Fatal(err)
	}
	info := doc.Result
	if info.Revision != head || info.Modified || info.Time == "" || info.Module != "github.com/connect-init/connect-init" {
		t.Errorf("version --json = %+v, want revision %s, a commit time, not modified", info, head)
	}
	if !strings.Contains(info.Version, head[:12]) && !strings.HasPrefix(info.Version, "v") {
		t.Errorf("version %q is neither a tag nor a pseudo-version of %s", info.Version, head[:12])
	}
	if line := run(t, tmp, bins[0], "version"); !strings.Contains(line, "revision "+head) {
		t.Errorf("version printed %q, want revision %s", line, head)
	}
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %v in %s: %v\n%s", name, args, dir, err, stderr)
	}
	return string(out)
}

package testbed

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

var (
	providerOnce sync.Once
	providerPath string
	providerErr  error
)

// ProviderJar builds connect-init's in-worker lock provider with the
// project's own build (`make jar`) once per process and returns its path,
// so that tests and the bench put on the worker's classpath exactly the
// jar the Dockerfile installs.
func ProviderJar() (string, error) {
	providerOnce.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			providerErr = err
			return
		}
		cmd := exec.Command("make", "-s", "jar")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			providerErr = fmt.Errorf("make jar: %v\n%s", err, strings.TrimSpace(string(out)))
			return
		}
		providerPath = filepath.Join(root, "bin", "connect-init-provider.jar")
	})
	return providerPath, providerErr
}

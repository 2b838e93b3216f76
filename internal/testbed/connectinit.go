package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"

	"github.com/connect-init/connect-init/workerconfig"
)

// BuildConnectInit builds the connect-init binary into dir, statically and
// with version stamped, the way the Dockerfile does (-trimpath too, as the
// Dockerfile and make release: the compiled packages are then the ones
// buildinfo's reproducibility test builds, one compile for both in CI).
func BuildConnectInit(dir, version string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "connect-init")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-X main.version="+version, "-o", out, "./cmd/connect-init")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testbed: build connect-init: %w\n%s", err, msg)
	}
	return out, nil
}

// EnvFromProps turns worker properties into CONNECT_* variables with the
// inverse of Confluent's rule, the way users configure the images.
func EnvFromProps(props map[string]string) []string {
	var env []string
	for k, v := range props {
		env = append(env, workerconfig.EnvName(k)+"="+v)
	}
	sort.Strings(env)
	return env
}

// BaseEnv is the machine environment a connect-init under test keeps:
// PATH, JAVA_HOME and HOME, nothing else.
func BaseEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "JAVA_HOME", "HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Run runs binary with args and env to completion and returns its exit
// code and combined output.
func Run(ctx context.Context, binary string, args, env []string) (int, string, error) {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), nil
	}
	if err != nil {
		return -1, out.String(), err
	}
	return 0, out.String(), nil
}

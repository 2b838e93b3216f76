// Package containerbed runs connect-init where its users run it: a real
// single-node Docker Swarm on this machine (dockerd from Debian's
// docker.io, swarm initialised on loopback), overlay networks created and
// removed by the tests, Kafka brokers (KRaft, 3 nodes) and Connect workers
// as Swarm services, and Compose projects.
//
// No image registry is reachable here, so the images are built FROM
// scratch on this machine: static busybox, the static connect-init binary,
// the host's Java runtime with the shared libraries it loads, the
// Maven-fetched Kafka jars (internal/testbed), and, per image connect-init
// runs in, a stand-in for that image's layout written for this test bed
// (standins.go): cp-kafka-connect with dub (7.9) and with ub (8.1),
// Debezium 3.x and apache/kafka 4.x, each with its entry scripts' steps,
// its paths, its default environment and its user, so that
// ENTRYPOINT ["connect-init","run","--"] and the image's CMD run as in the
// real image and connect-init detects the image it stands for.
//
// Everything the package creates carries the label Label, and Sweep removes
// whatever a crashed run left behind.
package containerbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Label marks every service, network, secret, stack and image the test
// bed creates, so that a sweep finds them all.
const Label = "connect-init.test=containerbed"

// Docker runs the docker CLI and returns its trimmed standard output; the
// error carries standard error.
func Docker(ctx context.Context, args ...string) (string, error) {
	return run(ctx, nil, "docker", args...)
}

// DockerIn runs docker with stdin.
func DockerIn(ctx context.Context, stdin []byte, args ...string) (string, error) {
	return run(ctx, stdin, "docker", args...)
}

func run(ctx context.Context, stdin []byte, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return strings.TrimSpace(out.String()), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// EnsureDaemon makes sure a Docker daemon answers: when none does, it
// starts dockerd in the background (logging to logPath) and waits for it.
// .ci/install-docker does the same for CI.
func EnsureDaemon(ctx context.Context, logPath string) error {
	if _, err := Docker(ctx, "info", "--format", "{{.ServerVersion}}"); err == nil {
		return nil
	}
	if _, err := exec.LookPath("dockerd"); err != nil {
		return errors.New("containerbed: no Docker daemon answers and dockerd is not installed: run .ci/install-docker (installs docker.io, docker-compose, busybox-static)")
	}
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	d := exec.Command("dockerd")
	d.Stdout, d.Stderr = log, log
	closeInheritedOnExec()
	if err := d.Start(); err != nil {
		return fmt.Errorf("containerbed: start dockerd: %w", err)
	}
	go d.Wait() //nolint:errcheck // dockerd outlives the test on purpose: it is the machine's daemon
	for {
		if _, err := Docker(ctx, "info", "--format", "{{.ServerVersion}}"); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("containerbed: dockerd did not answer (log: %s): %w", logPath, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// closeInheritedOnExec marks every descriptor this process inherited
// (3 and up) close-on-exec, so that the daemon started here does not keep
// them. A run under `flock /work/docker.lock flock -s /work/measure.lock`
// inherits the locks' descriptors; dockerd, containerd and every
// container's shim kept them open for good, and with them both locks, so
// every later run waited forever (issue 39's make rolling, 2026-12-04).
// Go opens its own descriptors close-on-exec already.
func closeInheritedOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

// EnsureSwarm initialises a single-node swarm advertised on loopback, so
// that no traffic leaves this machine, unless one is active already.
func EnsureSwarm(ctx context.Context) error {
	state, err := Docker(ctx, "info", "--format", "{{.Swarm.LocalNodeState}}")
	if err != nil {
		return err
	}
	if state == "active" {
		return nil
	}
	_, err = Docker(ctx, "swarm", "init", "--advertise-addr", "127.0.0.1", "--listen-addr", "127.0.0.1:2377")
	return err
}

// HasIPVS reports whether the kernel has IPVS, which Swarm's virtual IPs
// (endpoint_mode: vip, the default) need; without it a service's VIP
// resolves but routes nowhere.
func HasIPVS() bool {
	_, err := os.Stat("/proc/sys/net/ipv4/vs")
	return err == nil
}

// Sweep removes everything labelled Label: stacks' and tests' services
// first, then secrets, networks and images, waiting for the networks to be
// free of containers.
func Sweep(ctx context.Context) error {
	var errs []error
	ids := func(args ...string) []string {
		out, err := Docker(ctx, args...)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		return strings.Fields(out)
	}
	if s := ids("service", "ls", "-q", "--filter", "label="+Label); len(s) > 0 {
		if _, err := Docker(ctx, append([]string{"service", "rm"}, s...)...); err != nil {
			errs = append(errs, err)
		}
	}
	// Compose (v1) containers carry the label too (set in the project file
	// the tests write); remove them and their networks.
	if c := ids("ps", "-aq", "--filter", "label="+Label); len(c) > 0 {
		if _, err := Docker(ctx, append([]string{"rm", "-f"}, c...)...); err != nil {
			errs = append(errs, err)
		}
	}
	// Task containers go away asynchronously after service rm.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if len(ids("ps", "-aq", "--filter", "label=com.docker.swarm.service.name")) == 0 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if s := ids("secret", "ls", "-q", "--filter", "label="+Label); len(s) > 0 {
		if _, err := Docker(ctx, append([]string{"secret", "rm"}, s...)...); err != nil {
			errs = append(errs, err)
		}
	}
	for _, n := range ids("network", "ls", "-q", "--filter", "label="+Label) {
		var err error
		for range 20 { // endpoints are released shortly after the tasks end
			if _, err = Docker(ctx, "network", "rm", n); err == nil {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if im := ids("images", "-q", "--filter", "label="+Label); len(im) > 0 {
		if _, err := Docker(ctx, append([]string{"rmi", "-f"}, im...)...); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// combined runs a command and returns stdout and stderr together (docker
// logs writes the container's stderr to its own stderr).
func combined(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

package containerbed

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Compose is one Compose implementation the Compose scenarios run under:
// Compose v2, the docker CLI plugin users type as `docker compose`, or
// Compose v1, Debian's `docker-compose` 1.29 (end of life since 2023, still
// packaged). The two are different programs with their own file parsers
// and dependency handling.
type Compose struct {
	// Name is "v2" or "v1".
	Name string
	// Argv starts it: ["docker", "compose"] or ["docker-compose"].
	Argv []string
	// Version is what it reports with `version --short`, e.g. 2.32.4.
	Version string
}

func (c *Compose) String() string {
	return fmt.Sprintf("Compose %s (%s %s)", c.Name, strings.Join(c.Argv, " "), c.Version)
}

// Command is one Compose command on a project: `<argv> -p project -f
// file... args...`.
func (c *Compose) Command(ctx context.Context, project string, files []string, args ...string) *exec.Cmd {
	argv := append([]string{}, c.Argv[1:]...)
	argv = append(argv, "-p", project)
	for _, f := range files {
		argv = append(argv, "-f", f)
	}
	return exec.CommandContext(ctx, c.Argv[0], append(argv, args...)...)
}

// ComposeV2 finds the Compose v2 plugin of the docker CLI; the error says
// how to install it (.ci/install-compose-v2, called by .ci/install-docker,
// builds the pinned version once per machine).
func ComposeV2(ctx context.Context) (*Compose, error) {
	v, err := run(ctx, nil, "docker", "compose", "version", "--short")
	if err != nil || v == "" {
		return nil, fmt.Errorf("containerbed: the docker CLI has no Compose v2 plugin (`docker compose`): run .ci/install-docker, which builds and installs it (%v)", err)
	}
	v = strings.TrimPrefix(v, "v")
	if !strings.HasPrefix(v, "2.") {
		return nil, fmt.Errorf("containerbed: `docker compose` reports version %s, not 2.x", v)
	}
	return &Compose{Name: "v2", Argv: []string{"docker", "compose"}, Version: v}, nil
}

// ErrNoComposeV1 is ComposeV1's answer on a machine without Compose v1.
const ErrNoComposeV1 = constError("containerbed: no Compose v1 (docker-compose 1.x) installed")

// ComposeV1 finds Compose v1, `docker-compose` 1.x. A `docker-compose` that
// is Compose v2's standalone binary (newer distributions package it under
// that name) is not v1: ErrNoComposeV1, as when none is installed.
func ComposeV1(ctx context.Context) (*Compose, error) {
	if _, err := exec.LookPath("docker-compose"); err != nil {
		return nil, ErrNoComposeV1
	}
	v, err := run(ctx, nil, "docker-compose", "version", "--short")
	if err != nil {
		return nil, err
	}
	v = strings.TrimPrefix(v, "v")
	if !strings.HasPrefix(v, "1.") {
		return nil, fmt.Errorf("%w (docker-compose is %s)", ErrNoComposeV1, v)
	}
	return &Compose{Name: "v1", Argv: []string{"docker-compose"}, Version: v}, nil
}

// DockerVersions names the daemon's and the CLI's versions, for the logs of
// a scenario: "server 20.10.24+dfsg1 (API 1.41), client 28.2.2".
func DockerVersions(ctx context.Context) string {
	out, err := Docker(ctx, "version", "--format", "server {{.Server.Version}} (API {{.Server.APIVersion}}), client {{.Client.Version}}")
	if err != nil {
		return "unknown: " + err.Error()
	}
	return out
}

// constError is an error that is a constant, so that no importer can
// replace a sentinel that errors.Is compares against.
type constError string

func (e constError) Error() string { return string(e) }

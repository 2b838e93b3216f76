package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/connect-init/connect-init/internal/containerbed"
)

// benchSwarm is row 6: in a real single-node Docker Swarm
// (internal/containerbed: brokers as services, the FROM scratch image),
// the time from `docker stack deploy` of a four-worker stack (one service,
// replicas: 4, each task advertising its own overlay address as
// examples/swarm/stack.yml does) to one stable generation of 4 members,
// through connect-init and with the bare entrypoint, in the same run.
func benchSwarm(ctx context.Context, _ *bed, _ options, rep *report) error {
	cb, err := containerBed(ctx)
	if err != nil {
		return err
	}
	defer cb.Close()
	script, err := exampleEntrypoint()
	if err != nil {
		return err
	}
	for _, mode := range []string{"connect-init", "bare"} {
		s := script
		if mode == "bare" {
			s = strings.Replace(s, `exec connect-init run -- "$$@"`, `exec "$$@"`, 1)
		}
		took, gens, err := swarmBringup(ctx, cb, mode, s)
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		rep.add("swarm-"+mode, fmt.Sprintf("Swarm, `docker stack deploy` of 4 workers to one stable generation of 4, %s", mode), "s", []float64{took.Seconds()},
			fmt.Sprintf("%d distinct generations joined", gens))
	}
	return nil
}

// exampleEntrypoint is the example stack's entrypoint script, still
// escaped for stack deploy.
func exampleEntrypoint() (string, error) {
	example, err := readExample()
	if err != nil {
		return "", err
	}
	return exampleScript(example)
}

// yamlEnv is env (NAME=value) as the lines of a stack file's environment
// map, each value quoted.
func yamlEnv(env []string) string {
	lines := make([]string, len(env))
	for i, e := range env {
		k, v, _ := strings.Cut(e, "=")
		lines[i] = fmt.Sprintf("      %s: %q", k, v)
	}
	return strings.Join(lines, "\n")
}

// readExample reads examples/swarm/stack.yml (the bench runs from the
// repository root).
func readExample() (string, error) {
	root, err := os.Getwd()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(root, "examples/swarm/stack.yml"))
	return string(b), err
}

// exampleScript cuts the connect service's entrypoint script (the block
// after "- |") out of the example stack, still escaped for stack deploy.
func exampleScript(stack string) (string, error) {
	_, after, ok := strings.Cut(stack, "      - |\n")
	if !ok {
		return "", fmt.Errorf("examples/swarm/stack.yml: no entrypoint script")
	}
	var lines []string
	for _, l := range strings.Split(after, "\n") {
		if !strings.HasPrefix(l, "        ") {
			break
		}
		lines = append(lines, strings.TrimPrefix(l, "        "))
	}
	return strings.Join(lines, "\n"), nil
}

// swarmStack is the swarm row's stack file: the example's entrypoint
// script (still escaped for stack deploy), four tasks of group, each
// advertising its own overlay address.
func swarmStack(cb *containerbed.Bed, group, script string) string {
	indented := "        " + strings.ReplaceAll(script, "\n", "\n        ")
	return fmt.Sprintf(`version: "3.8"
services:
  connect:
    image: %s
    hostname: "connect-{{.Task.Slot}}"
    entrypoint:
      - /bin/sh
      - -c
      - |
%s
      - connect-worker
      - /etc/confluent/docker/run
    environment:
%s
    networks: [kafka]
    deploy:
      replicas: 4
      endpoint_mode: dnsrr
      restart_policy:
        condition: none
networks:
  kafka:
    external: true
`, cb.Image, indented, yamlEnv(append(groupEnv(cb, group), "CONNECT_INIT_PEERS=tasks.connect:8083")))
}

func swarmBringup(ctx context.Context, cb *containerbed.Bed, mode, script string) (time.Duration, int, error) {
	group := "bench-swarm-" + strings.ReplaceAll(mode, "-", "")
	file := filepath.Join(cb.Dir, group+".yml")
	if err := os.WriteFile(file, []byte(swarmStack(cb, group, script)), 0o644); err != nil {
		return 0, 0, err
	}
	name := containerbed.StackPrefix + "-" + group
	progress("swarm: deploying %s", name)
	start := time.Now()
	if out, err := exec.CommandContext(ctx, "docker", "stack", "deploy", "-c", file, name).CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("docker stack deploy: %v: %s", err, out)
	}
	defer containerbed.Docker(context.Background(), "stack", "rm", name) //nolint:errcheck
	wctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	for {
		ids, _ := containerbed.Containers(wctx, name+"_connect")
		seen := map[int]bool{}
		last := map[int]int{}
		for _, c := range ids {
			logs := containerbed.ContainerLogs(wctx, c)
			for _, m := range joinedRe.FindAllStringSubmatch(logs, -1) {
				var g int
				fmt.Sscan(m[1], &g)
				seen[g] = true
			}
			g, _ := containerbed.Generation(logs)
			last[g]++
		}
		if len(ids) == 4 && len(last) == 1 && last[-1] == 0 {
			took := time.Since(start)
			progress("swarm: %s: 4 workers in one generation after %s", mode, took.Round(time.Millisecond))
			return took, len(seen), nil
		}
		select {
		case <-wctx.Done():
			return 0, 0, fmt.Errorf("no stable generation of 4: %v", last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

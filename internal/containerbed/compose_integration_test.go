//go:build integration

package containerbed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// TestComposeExample runs examples/compose/docker-compose.yml under Compose
// v2 (`docker compose`, what users type today) and under Compose v1
// (Debian's docker-compose 1.29) while it is installed, with the same
// verdicts: connect-init-prepare exits 0, the three workers start through
// connect-init in one generation, and every worker's POST /connectors is
// forwarded. Both are required (`make deps`: .ci/install-docker installs
// v1 and builds v2).
//
// Run one alone: go test -tags integration -count=1 -run 'TestComposeExample/v2' -v ./internal/containerbed/
func TestComposeExample(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The brokers' apache/kafka is its stand-in, its own launcher as CMD.
	kafkaImage := bed.Image + "-apache"
	t.Logf("docker %s; Kafka %s", DockerVersions(ctx), testbed.Version())
	// One after the other: the example publishes port 8083, and two
	// projects of six JVMs each do not fit a 2-core machine.
	t.Run("v2", func(t *testing.T) {
		c, err := ComposeV2(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		composeExample(t, c, kafkaImage)
	})
	// Compose v1 (docker-compose 1.29, end of life since 2023) runs the
	// same scenario in TestComposeExampleV1, under make long: about 3
	// minutes CI's 45-minute budget does not have.
}

// composeExample is the Compose scenario under one Compose: the example's
// file with the image names substituted (the brokers' apache/kafka by the
// bed's image with an apache/kafka stand-in launcher, the workers' by the
// bed's image) and nothing built.
func composeExample(t *testing.T, c *Compose, kafkaImage string) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	data, err := os.ReadFile("../../examples/compose/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	file := strings.ReplaceAll(string(data), "image: apache/kafka:4.0.0", "image: "+kafkaImage)
	file = strings.ReplaceAll(file, "image: connect-init/cp-kafka-connect:dev", "image: "+bed.Image)
	if file == string(data) || strings.Contains(file, "apache/kafka:") {
		t.Fatal("the example's image names changed: update this test")
	}
	dir := filepath.Join(bed.Dir, "compose-"+c.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "docker-compose.yml")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	project := StackPrefix + "-compose-" + c.Name
	compose := func(ctx context.Context, args ...string) (string, error) {
		out, err := c.Command(ctx, project, []string{path}, args...).CombinedOutput()
		return string(out), err
	}
	t.Logf("%s, project %s", c, project)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := compose(context.Background(), "logs", "--no-color", "--tail", "60")
			t.Logf("compose logs:\n%s", tail(out, 12000))
		}
		if out, err := compose(context.Background(), "down", "-v", "--remove-orphans"); err != nil {
			t.Errorf("%s down: %v\n%s", c, err, out)
		}
	})
	// The file as this Compose reads it: a key it rejects fails here, with
	// its own message.
	if out, err := compose(ctx, "config", "-q"); err != nil {
		t.Fatalf("%s config: %v\n%s", c, err, out)
	}
	// Compose v2 waits in `up` for connect-init-prepare to complete before
	// it creates the workers; v1 does too (service_completed_successfully).
	if out, err := compose(ctx, "up", "-d", "--no-build"); err != nil {
		t.Fatalf("%s up: %v\n%s", c, err, out)
	}
	t.Logf("up returned after %s", time.Since(start).Round(time.Second))
	// -a: Compose v2's ps lists running containers only; prepare has exited.
	containerOf := func(service string) string {
		out, _ := compose(ctx, "ps", "-a", "-q", service)
		return strings.TrimSpace(out)
	}
	// prepare exits 0 ...
	for {
		id := containerOf("connect-init-prepare")
		st, _ := Docker(ctx, "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", id)
		if st == "exited 0" {
			break
		}
		if strings.HasPrefix(st, "exited") || ctx.Err() != nil {
			t.Fatalf("connect-init-prepare: %q\n%s", st, ContainerLogs(ctx, id))
		}
		time.Sleep(time.Second)
	}
	// ... and the three workers join one generation through connect-init.
	for {
		var ids []string
		last := map[int]int{}
		for _, s := range []string{"connect-1", "connect-2", "connect-3"} {
			if id := containerOf(s); id != "" {
				ids = append(ids, id)
				g, _ := Generation(ContainerLogs(ctx, id))
				last[g]++
			}
		}
		if len(ids) == 3 && len(last) == 1 && last[-1] == 0 {
			for _, id := range ids {
				if logs := ContainerLogs(ctx, id); !Started(logs) || !ownPassed(logs) {
					t.Fatalf("%s joined without connect-init's self-probe and exec:\n%s", id, ConnectInitPart(logs)+"\n...\n"+tail(logs, 1500))
				} else if mode := lockMode(logs); mode != "worker" {
					t.Fatalf("%s: startup lock mode=%q, want mode=worker (the image installs the provider jar):\n%s", id, mode, ConnectInitPart(logs))
				}
			}
			ok, fails := postConnectors(t, ctx, "compose-"+c.Name, ids)
			t.Logf("%s: 3 workers in one generation %v; POST /connectors ok on %d, failed %v; %s after the start",
				c, last, ok, fails, time.Since(start).Round(time.Second))
			if ok != 3 {
				t.Fatalf("forwarding failed: %v", fails)
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("no stable generation of 3: %v", last)
		}
		time.Sleep(time.Second)
	}
}

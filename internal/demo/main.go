// Command demo is `make demo`: it starts a local 3-broker KRaft cluster
// and two Kafka Connect workers launched through connect-init (the real
// binary, the real gates and startup lock), applies the example connectors
// of examples/connectors/ with `connect-init apply` and shows their records
// flowing (a file source into a topic, a file sink out of it), prints the
// REST URLs and stops everything on Ctrl-C.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
	"github.com/connect-init/connect-init/settings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := demo(ctx)
	if ctx.Err() != nil {
		// Ctrl-C is how the demo ends, at any step: stop everything, exit 0.
		fmt.Println("\ndemo stopped")
		testbed.KillAll()
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		testbed.KillAll()
		os.Exit(1)
	}
}

func demo(ctx context.Context) error {
	defer testbed.KillAll()

	dir, err := os.MkdirTemp("", "connect-init-demo-")
	if err != nil {
		return err
	}
	fmt.Println("demo state and logs in", dir)

	binary := filepath.Join(dir, "connect-init")
	build := exec.Command("go", "build", "-o", binary, "./cmd/connect-init")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build connect-init: %w", err)
	}

	fmt.Println("fetching Kafka", testbed.Version(), "from Maven Central (once per machine)...")
	dist, err := testbed.Fetch(ctx, testbed.Version())
	if err != nil {
		return err
	}
	fmt.Println("starting 3 KRaft brokers...")
	cluster, err := testbed.StartCluster(ctx, dist, testbed.ClusterOptions{Brokers: 3, Dir: filepath.Join(dir, "cluster")})
	if err != nil {
		return err
	}
	defer cluster.Close()
	fmt.Println("brokers:", cluster.Bootstrap())

	var workers []*testbed.Worker
	var workerEnv []string
	for i := 1; i <= 2; i++ {
		props, err := cluster.WorkerProps(map[string]string{
			"group.id":             "connect-demo",
			"config.storage.topic": "_connect-configs",
			"offset.storage.topic": "_connect-offsets",
			"status.storage.topic": "_connect-status",
		})
		if err != nil {
			return err
		}
		spec, err := cluster.NewWorkerSpec(fmt.Sprintf("worker-%d", i), props, 0)
		if err != nil {
			return err
		}
		env := append(ownSettingsOnly(os.Environ()), testbed.EnvFromProps(props)...)
		workerEnv = env
		w, err := cluster.StartWorkerCommand(spec, append([]string{binary, "run", "--"}, spec.Argv...), env)
		if err != nil {
			return err
		}
		workers = append(workers, w)
		fmt.Printf("worker-%d: started through connect-init, log %s\n", i, w.LogPath)
	}
	for _, w := range workers {
		wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		err := w.WaitHealthy(wctx)
		cancel()
		if err != nil {
			return err
		}
		fmt.Printf("%s ready: %s (try: curl %s/connectors)\n", w.Spec.Name, w.Spec.RESTURL, w.Spec.RESTURL)
	}
	if err := applyExample(ctx, binary, workerEnv); err != nil {
		return err
	}
	fmt.Println("\nconnect-init's own log lines are at the top of each worker log.")
	fmt.Println("Try: go run ./cmd/connect-init doctor  with CONNECT_BOOTSTRAP_SERVERS=" + cluster.Bootstrap() +
		" CONNECT_GROUP_ID=connect-demo CONNECT_CONFIG_STORAGE_TOPIC=_connect-configs CONNECT_OFFSET_STORAGE_TOPIC=_connect-offsets CONNECT_STATUS_STORAGE_TOPIC=_connect-status")
	fmt.Println("Press Ctrl-C to stop everything.")
	<-ctx.Done()
	fmt.Println("\nstopping workers and brokers...")
	for _, w := range workers {
		w.Stop(10 * time.Second)
	}
	return nil
}

// exampleDir is where the example connectors of examples/connectors/ read
// and write (their "file" settings).
const exampleDir = "/tmp/connect-init-example"

// applyExample runs `connect-init apply` on examples/connectors/ (a
// FileStreamSource of exampleDir/input.txt into topic example-lines, a
// FileStreamSink of that topic into exampleDir/output.txt), then appends
// lines to the input and shows them arriving in the output.
func applyExample(ctx context.Context, binary string, env []string) error {
	root, err := testbed.RepoRoot()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(exampleDir, 0o755); err != nil {
		return err
	}
	input, output := filepath.Join(exampleDir, "input.txt"), filepath.Join(exampleDir, "output.txt")
	os.Remove(output)
	if err := os.WriteFile(input, []byte("hello from connect-init's demo, line 1\n"), 0o644); err != nil {
		return err
	}
	fmt.Println("\n$ connect-init apply --dir examples/connectors")
	apply := exec.CommandContext(ctx, binary, "apply", "--dir", filepath.Join(root, "examples", "connectors"), "--wait=2m")
	apply.Env = env
	apply.Stdout, apply.Stderr = os.Stdout, os.Stderr
	if err := apply.Run(); err != nil {
		return fmt.Errorf("connect-init apply: %w", err)
	}
	fmt.Println("\nrecords flowing: input.txt -> example-file-source -> topic example-lines -> example-file-sink -> output.txt")
	f, err := os.OpenFile(input, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	shown := 0
	for i := 2; i <= 5; i++ {
		fmt.Fprintf(f, "hello from connect-init's demo, line %d\n", i)
		deadline := time.Now().Add(30 * time.Second)
		for {
			b, _ := os.ReadFile(output)
			lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
			if len(b) > 0 && len(lines) >= i {
				for _, l := range lines[shown:] {
					fmt.Println("  output.txt:", l)
				}
				shown = len(lines)
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("line %d did not reach %s within 30s", i, output)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
		time.Sleep(time.Second)
	}
	return nil
}

// ownSettingsOnly is environ without the CONNECT_INIT_* names that are no
// connect-init setting (a leftover in the user's shell): connect-init
// refuses those. The test beds' own variables are CITEST_*, outside the
// prefix.
func ownSettingsOnly(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := settings.Find(k); ok || !strings.HasPrefix(k, settings.EnvPrefix+"_") {
			out = append(out, kv)
		}
	}
	return out
}

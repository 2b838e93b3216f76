// Command demo is `make demo`: it starts a local 3-broker KRaft cluster
// and two Kafka Connect workers launched through connect-init (the real
// binary, the real gates and startup lock), prints their REST URLs and
// stops everything on Ctrl-C.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

func main() {
	if err := demo(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		testbed.KillAll()
		os.Exit(1)
	}
}

func demo() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
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
		env := append(os.Environ(), testbed.EnvFromProps(props)...)
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

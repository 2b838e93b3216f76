//go:build integration

package testbed

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestClusterLifecycle proves the test bed itself: a 3-node KRaft cluster
// starts, a node survives kill -9 and restart, and a real Connect worker
// becomes healthy on it.
func TestClusterLifecycle(t *testing.T) {
	defer KillAll()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dist, err := Fetch(ctx, Version())
	if err != nil {
		t.Fatal(err)
	}
	c, err := StartCluster(ctx, dist, ClusterOptions{Brokers: 3, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	c.Kill(2)
	if c.Running(2) {
		t.Fatal("node 2 still running after Kill")
	}
	if err := c.Start(2); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitStarted(ctx, 2); err != nil {
		t.Fatal(err)
	}

	props, err := c.WorkerProps(map[string]string{
		"group.id": "tb", "config.storage.topic": "tb-configs",
		"offset.storage.topic": "tb-offsets", "status.storage.topic": "tb-status",
	})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := c.NewWorkerSpec("tb", props, 0)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.StartWorker(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.LogPath); err != nil {
		t.Fatalf("worker log not kept: %v", err)
	}
}

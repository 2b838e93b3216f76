package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// applyConnectors is how many connector definitions row 8 applies.
const applyConnectors = 3

// benchApply is row 8: `connect-init apply` against one real Connect
// worker: the first apply of 3 FileStreamSink connectors (create, then
// the hold that proves them RUNNING), then applies of the same directory
// that have nothing to write (issue 23: a no-op returns as soon as the
// plan is empty, no hold, no lease; target under 0.5 s).
func benchApply(ctx context.Context, b *bed, o options, rep *report) error {
	group := freshGroup("apply")
	props, err := b.cluster.WorkerProps(group)
	if err != nil {
		return err
	}
	spec, err := b.cluster.NewWorkerSpec(group["group.id"], props, bringupHeapMB)
	if err != nil {
		return err
	}
	w, err := b.cluster.StartWorker(spec)
	if err != nil {
		return err
	}
	defer w.Kill()
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := w.WaitHealthy(wctx); err != nil {
		return fmt.Errorf("the worker: %w", err)
	}
	dir := filepath.Join(b.dir, "apply-connectors")
	if err := writeSinks(dir, filepath.Join(b.dir, "apply-out")); err != nil {
		return err
	}
	env := gateEnv(props)
	argv := []string{b.binary, "apply", "--dir", dir, "--wait=2m"}
	first, err := timeRun(ctx, argv, env)
	if err != nil {
		return err
	}
	if first.code != 0 {
		return fmt.Errorf("the first apply exited %d:\n%s", first.code, tailString(first.out, 3000))
	}
	progress("apply: first apply (create %d) %.0f ms", applyConnectors, ms(first.wall))
	var noop []float64
	for i := 0; i < o.runs; i++ {
		r, err := timeRun(ctx, argv, env)
		if err != nil {
			return err
		}
		if r.code != 0 || !strings.Contains(r.out, "nothing to write") {
			return fmt.Errorf("a no-op apply exited %d:\n%s", r.code, tailString(r.out, 3000))
		}
		noop = append(noop, ms(r.wall))
	}
	rep.add("8a", fmt.Sprintf("`connect-init apply`: first apply of %d connectors to one real worker (create, validate, wait until RUNNING and settled for apply.DefaultSettle, 3 s)", applyConnectors), "ms",
		[]float64{ms(first.wall)}, "process wall time")
	rep.add("8b", fmt.Sprintf("`connect-init apply` of the same %d connectors again: nothing to write (no hold, no lease)", applyConnectors), "ms", noop,
		fmt.Sprintf("%.0f× faster than the first; target under 500 ms", ms(first.wall)/median(noop)))
	return nil
}

// writeSinks writes applyConnectors FileStreamSink definitions into dir,
// each writing a file of its own under out.
func writeSinks(dir, out string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := 1; i <= applyConnectors; i++ {
		def := fmt.Sprintf(`{"name": "bench-sink-%d", "config": {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "topics": "bench-apply", "file": %q, "tasks.max": "1"}}`,
			i, filepath.Join(out, fmt.Sprintf("sink-%d.txt", i)))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("bench-sink-%d.json", i)), []byte(def), 0o644); err != nil {
			return err
		}
	}
	return os.MkdirAll(out, 0o755)
}

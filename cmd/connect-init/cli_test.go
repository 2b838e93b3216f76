package main

import (
	"context"
	"io"
)

// run is the real process's cli on env and the given streams, as main runs
// it: most tests need no seam replaced.
func run(ctx context.Context, args, env []string, stdout, stderr io.Writer) int {
	return newCLI(env, stdout, stderr).run(ctx, args)
}

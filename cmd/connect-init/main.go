// Command connect-init runs in front of a Kafka Connect worker: it waits
// until the Kafka cluster is really ready, makes Connect's internal topics
// right, checks the worker group, takes a startup lock so workers join one
// at a time, and then execs the worker. See README.md.
package main

import (
	"context"
	"os"

	"github.com/connect-init/connect-init/entrypoint"
)

// version is stamped at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	ctx, stop := entrypoint.NotifyContext(context.Background())
	code := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

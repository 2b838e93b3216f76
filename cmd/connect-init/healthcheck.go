package main

import (
	"context"
	"io"

	"github.com/connect-init/connect-init/bootstrap"
)

func healthcheck(ctx context.Context, env []string, s bootstrap.Settings, stdout, stderr io.Writer) int {
	io.WriteString(stderr, "healthcheck is not implemented yet\n")
	return exitConfig
}

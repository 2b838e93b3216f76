package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/connect-init/connect-init/bootstrap"
)

func doctor(ctx context.Context, env []string, s bootstrap.Settings, log *slog.Logger, stdout io.Writer, asJSON bool) int {
	log.Error("doctor is not implemented yet")
	return exitConfig
}

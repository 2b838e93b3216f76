package main

import (
	"context"
	"log/slog"

	diag "github.com/connect-init/connect-init/doctor"
	"github.com/connect-init/connect-init/entrypoint"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/startup"
)

// doctor reads the settings like run, takes one look at the cluster and the
// worker group without creating or changing anything, and prints the
// summary and findings (text, or one JSON document). Exit 0 when no finding
// is an error, 1 otherwise, 2 for bad configuration. Progress and the gates'
// own messages go to the log (stderr); the report alone goes to stdout.
func (c *cli) doctor(ctx context.Context, s settings.Settings, log *slog.Logger, asJSON bool) int {
	stdout := c.stdout
	cfg, clients, err := startup.LoadConfig(c.options, c.env, s, log)
	if err != nil {
		logConfigError(log, err)
		return startup.ExitConfig
	}
	defer clients.Close()

	dctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	doc := diag.Run(dctx, cfg, clients, log, diag.Options{}, version)
	if asJSON {
		err = doc.WriteJSON(stdout)
	} else {
		err = doc.WriteText(stdout)
	}
	if err != nil {
		log.Error("cannot write the report", "error", err.Error())
		return startup.ExitGate
	}
	if se, ok := entrypoint.Interrupted(ctx); ok {
		return se.ExitCode()
	}
	return doc.ExitCode
}

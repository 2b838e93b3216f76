package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

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

// doctorWatch is `connect-init doctor --watch [--interval=5s] [--json]`:
// the first look in full, then, every interval, only what changed
// (findings that appear or clear, members joining and leaving, the group's
// state and how often it rebalanced), until SIGINT or SIGTERM; with --json
// one document per change, one per line. Each look is bounded by
// CONNECT_INIT_TIMEOUT. It exits 128+signal, or 1 when it cannot write.
func (c *cli) doctorWatch(ctx context.Context, s settings.Settings, log *slog.Logger, asJSON, watch bool, interval time.Duration) int {
	switch {
	case !watch:
		logConfigError(log, &settings.ConfigError{Setting: "--interval", Problem: "is given without --watch", Fix: "add --watch, or drop --interval"})
		return startup.ExitConfig
	case interval < time.Second:
		logConfigError(log, &settings.ConfigError{Setting: "--interval", Problem: fmt.Sprintf("is %s, below 1s", interval), Fix: "use e.g. --interval=5s"})
		return startup.ExitConfig
	}
	cfg, clients, err := startup.LoadConfig(c.options, c.env, s, log)
	if err != nil {
		logConfigError(log, err)
		return startup.ExitConfig
	}
	defer clients.Close()
	look := func(ctx context.Context) *diag.Document {
		lctx, cancel := context.WithTimeout(ctx, s.Timeout)
		defer cancel()
		return diag.Run(lctx, cfg, clients, log, diag.Options{Clock: c.clock}, version)
	}
	enc := json.NewEncoder(c.stdout)
	looked := false
	emit := func(doc *diag.Document, ch *diag.Change) error {
		first := !looked
		looked = true
		switch {
		case asJSON:
			doc.Changes = ch
			return enc.Encode(doc)
		case first:
			return doc.WriteText(c.stdout)
		}
		return ch.WriteText(c.stdout, doc.GeneratedAt)
	}
	if err := diag.Watch(ctx, interval, c.clock, look, emit); err != nil {
		log.Error("cannot write the report", "error", err.Error())
		return startup.ExitGate
	}
	if se, ok := entrypoint.Interrupted(ctx); ok {
		return se.ExitCode()
	}
	return startup.ExitOK
}

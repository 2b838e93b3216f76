package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/gate/peers"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// healthcheckTimeout bounds `connect-init healthcheck` as a whole. A worker
// whose herder is stuck never answers, and Docker kills a HEALTHCHECK that
// outlives its own timeout (30s by default) without recording why; a
// smaller CONNECT_INIT_TIMEOUT shortens it, a larger one does not lengthen
// it (the container's variable is meant for the gates); --timeout, given
// to healthcheck itself, sets it either way.
const healthcheckTimeout = 5 * time.Second

// healthcheckCommand is `connect-init healthcheck`: no flags but the
// settings' the table gives it. It exits only 0 or 1 (exitcode's
// healthcheck table): Docker's HEALTHCHECK reserves 2, so a bad flag or
// setting is "not healthy", with the problem named.
func (c *cli) healthcheckCommand(ctx context.Context, args []string) int {
	s, fs, code, done, _ := c.bootstrap(command{name: settings.Healthcheck, usage: "healthcheck [flags]"}, args, false)
	if done {
		if code != exitcode.OK {
			return c.badHealthcheckInput()
		}
		return code
	}
	if fs.NArg() > 0 {
		reportProblems(c.earlyLogger(s, args), &settings.ConfigError{Setting: "command line", Problem: fmt.Sprintf("healthcheck takes no arguments (got %q)", fs.Args()), Fix: "see connect-init healthcheck -h"})
		return c.badHealthcheckInput()
	}
	return c.healthcheck(ctx, s)
}

// badHealthcheckInput ends a healthcheck whose input is bad: the one line
// Docker shows says so (the log events name each problem), exit 1.
func (c *cli) badHealthcheckInput() int {
	fmt.Fprintln(c.stderr, "not healthy: connect-init healthcheck has bad settings or flags (named above); it cannot look at the worker")
	return exitcode.Unhealthy
}

// healthcheckBound is how long the look may take: --timeout when given to
// healthcheck, else the default, shortened by a smaller
// CONNECT_INIT_TIMEOUT.
func healthcheckBound(s settings.Settings) time.Duration {
	if s.Flags["CONNECT_INIT_TIMEOUT"] != "" && s.Timeout > 0 {
		return s.Timeout
	}
	if s.Timeout > 0 && s.Timeout < healthcheckTimeout {
		return s.Timeout
	}
	return healthcheckTimeout
}

// healthcheck is `connect-init healthcheck`: exit 0 when the local worker
// has joined its group and serves requests (peers.Health), 1 when not or
// when the worker settings are unusable. It prints exactly one line: why
// the worker is (not) healthy, which is what `docker inspect` shows.
func (c *cli) healthcheck(ctx context.Context, s settings.Settings) int {
	timeout := healthcheckBound(s)
	// The worker's settings exactly as its image hands them to it (the
	// settings step): on Debezium's image REST_PORT, not CONNECT_REST_PORT,
	// is the port.
	cfg, err := c.options.Load(c.env, s)
	if missingAdvertisedHost(err) {
		// An entrypoint that works the advertised address out at start
		// and exports it (the Swarm example's per-task address) hands it
		// to the worker's process only: a HEALTHCHECK runs with the
		// container's environment, without it. The image's configure
		// script requires it to start a worker, not to look at one: the
		// look goes to the listener, and the name only verifies an https
		// listener's certificate, for which the container's host name is
		// the name the fix of this very error suggests.
		if host, herr := os.Hostname(); herr == nil && host != "" {
			cfg, err = c.options.Load(append(append([]string(nil), c.env...), "CONNECT_REST_ADVERTISED_HOST_NAME="+host), s)
		}
	}
	if err == nil {
		var h *peers.Health
		if h, err = peers.LocalHealth(cfg.Worker, cfg.AdvertisedURL, cfg.RESTClientTLS, cfg.Settings.RESTAuth(), timeout); err == nil {
			return c.check(ctx, h, timeout)
		}
	}
	logConfigError(c.earlyLogger(s, nil), err)
	return c.badHealthcheckInput()
}

// missingAdvertisedHost reports whether err is only the image's
// requirement of CONNECT_REST_ADVERTISED_HOST_NAME, unset.
func missingAdvertisedHost(err error) bool {
	var we *workerconfig.Error
	return errors.As(err, &we) && we.Setting == "CONNECT_REST_ADVERTISED_HOST_NAME"
}

// check is one look at the local worker's health, bounded by timeout.
func (c *cli) check(ctx context.Context, h *peers.Health, timeout time.Duration) int {
	stdout, stderr := c.stdout, c.stderr
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := h.Check(ctx)
	if !r.Ready {
		fmt.Fprintln(stderr, "not healthy:", r.Reason)
		return exitcode.Failed
	}
	fmt.Fprintln(stdout, "healthy:", r.Reason)
	return exitcode.OK
}

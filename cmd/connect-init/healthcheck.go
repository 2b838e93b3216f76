package main

import (
	"context"
	"fmt"
	"time"

	"github.com/connect-init/connect-init/gate/peers"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/startup"
)

// healthcheckTimeout bounds `connect-init healthcheck` as a whole. A worker
// whose herder is stuck never answers, and Docker kills a HEALTHCHECK that
// outlives its own timeout (30s by default) without recording why; a
// smaller CONNECT_INIT_TIMEOUT / --timeout shortens it, a larger one does
// not lengthen it (its 5m default is meant for the gates).
const healthcheckTimeout = 5 * time.Second

// healthcheck is `connect-init healthcheck`: exit 0 when the local worker
// has joined its group and serves requests (peers.Health), 1 when not,
// 2 when the worker settings are unusable. It prints exactly one line: why
// the worker is (not) healthy, which is what `docker inspect` shows.
func (c *cli) healthcheck(ctx context.Context, s settings.Settings) int {
	stdout, stderr := c.stdout, c.stderr
	timeout := healthcheckTimeout
	if s.Timeout > 0 && s.Timeout < timeout {
		timeout = s.Timeout
	}
	// The worker's settings exactly as its image hands them to it (the
	// settings step): on Debezium's image REST_PORT, not CONNECT_REST_PORT,
	// is the port.
	cfg, err := c.options.Load(c.env, s)
	if err != nil {
		fmt.Fprintln(stderr, "connect-init healthcheck: bad configuration:", err)
		return startup.ExitConfig
	}
	h, err := peers.LocalHealth(cfg.Worker, cfg.AdvertisedURL, cfg.RESTClientTLS, cfg.Settings.RESTAuth, timeout)
	if err != nil {
		fmt.Fprintln(stderr, "connect-init healthcheck: bad configuration:", err)
		return startup.ExitConfig
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := h.Check(ctx)
	if !r.Ready {
		fmt.Fprintln(stderr, "not healthy:", r.Reason)
		return startup.ExitGate
	}
	fmt.Fprintln(stdout, "healthy:", r.Reason)
	return startup.ExitOK
}

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/connect-init/connect-init/gate/peers"
	"github.com/connect-init/connect-init/settings"
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
func healthcheck(ctx context.Context, env []string, s settings.Settings, stdout, stderr io.Writer) int {
	timeout := healthcheckTimeout
	if s.Timeout > 0 && s.Timeout < timeout {
		timeout = s.Timeout
	}
	// The worker's settings exactly as its image hands them to it (the
	// settings step): on Debezium's image REST_PORT, not CONNECT_REST_PORT,
	// is the port.
	cfg, err := configOptions.Load(env, s)
	if err != nil {
		fmt.Fprintln(stderr, "connect-init healthcheck: bad configuration:", err)
		return exitConfig
	}
	h, err := peers.LocalHealth(cfg.Worker, cfg.AdvertisedURL, cfg.RESTClientTLS, timeout)
	if err != nil {
		fmt.Fprintln(stderr, "connect-init healthcheck: bad configuration:", err)
		return exitConfig
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := h.Check(ctx)
	if !r.Ready {
		fmt.Fprintln(stderr, "not healthy:", r.Reason)
		return exitGate
	}
	fmt.Fprintln(stdout, "healthy:", r.Reason)
	return exitOK
}

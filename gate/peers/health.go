package peers

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	"github.com/connect-init/connect-init/restclient"
	"github.com/connect-init/connect-init/workerconfig"
)

// Health reaches the local worker's REST API for a healthcheck: GET
// /health, with the old-worker fallback of restclient.Client.Health.
type Health struct {
	// URL is the worker's local REST base URL (workerconfig.LocalRESTURL).
	URL string
	// REST sends the requests; its Timeout should be short (a Docker
	// HEALTHCHECK has its own timeout, and a stuck herder never answers).
	REST   *restclient.Client
	target restclient.Target
}

// LocalHealth builds the Health for a worker with the worker
// configuration props (as its image hands it to the worker: the settings
// step's derived configuration, never a fixed CONNECT_* rule), reached at
// its local REST URL (the advertised listener on 127.0.0.1 when it binds
// all interfaces) with timeout. For https the certificate is verified with
// restTLS (the settings step's REST client TLS), and auth is sent, against the host of
// advertisedURL, since the local address is not in the certificate. Errors
// are bad worker settings (*workerconfig.Error: exit 2).
func LocalHealth(props workerconfig.Properties, advertisedURL string, restTLS *tls.Config, auth restclient.Auth, timeout time.Duration) (*Health, error) {
	base, err := workerconfig.LocalRESTURL(props)
	if err != nil {
		return nil, fmt.Errorf("local REST URL: %w", err)
	}
	t, err := restclient.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("local REST URL: %w", err)
	}
	rc := &restclient.Client{Timeout: timeout, Auth: auth}
	if t.Scheme == "https" {
		cfg := &tls.Config{}
		if restTLS != nil {
			cfg = restTLS.Clone()
		}
		if at, err := restclient.Parse(advertisedURL); err == nil && !cfg.InsecureSkipVerify {
			cfg.ServerName = at.Host
		}
		rc.TLS = cfg
	}
	return &Health{URL: base, REST: rc, target: t}, nil
}

// Check asks the worker whether it is ready.
func (h *Health) Check(ctx context.Context) restclient.Readiness {
	return h.REST.Health(ctx, h.target, nil)
}

package restcheck

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/connect-init/connect-init/bootstrap/workerconfig"
	"github.com/connect-init/connect-init/restclient"
)

// ProbeConnectorPrefix starts the connector name the fallback readiness
// probe asks for (restclient.ProbeConnectorPrefix).
const ProbeConnectorPrefix = restclient.ProbeConnectorPrefix

// Readiness is the outcome of Health.Check (restclient.Readiness).
type Readiness = restclient.Readiness

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

// LocalHealth builds the Health for the worker props describe: its local
// REST URL (the advertised listener on 127.0.0.1 when it binds all
// interfaces) and a client with timeout. For https the certificate is
// verified against the advertised host name (the local address is not in
// the certificate) with the truststore of listeners.https.ssl.* or, when no
// listeners.https.* setting exists, ssl.* (see TLSConfig). When the
// advertised host cannot be computed (no rest.advertised.host.name and this
// machine's name does not resolve), "localhost" is expected instead. Errors
// are bad worker settings (*workerconfig.Error: exit 2).
func LocalHealth(props workerconfig.Properties, timeout time.Duration) (*Health, error) {
	base, err := workerconfig.LocalRESTURL(props)
	if err != nil {
		return nil, fmt.Errorf("local REST URL: %w", err)
	}
	t, err := restclient.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("local REST URL: %w", err)
	}
	rc := &restclient.Client{Timeout: timeout}
	if strings.HasPrefix(base, "https:") {
		cfg, err := TLSConfig(props)
		if err != nil {
			return nil, fmt.Errorf("TLS settings of the REST listener: %w", err)
		}
		name := "localhost"
		if adv, err := workerconfig.AdvertisedURL(props); err == nil {
			if at, err := restclient.Parse(adv); err == nil {
				name = at.Host
			}
		}
		if !cfg.InsecureSkipVerify {
			cfg.ServerName = name
		}
		rc.TLS = cfg
	}
	return &Health{URL: base, REST: rc, target: t}, nil
}

// Check asks the worker whether it is ready.
func (h *Health) Check(ctx context.Context) Readiness {
	return h.REST.Health(ctx, h.target, nil)
}

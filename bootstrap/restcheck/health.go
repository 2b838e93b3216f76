package restcheck

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/connect-init/connect-init/bootstrap/workerconfig"
)

// ProbeConnectorPrefix starts the connector name the fallback readiness
// probe asks for. A random suffix makes sure no such connector exists, so
// the herder answers 404 once it processes the request.
const ProbeConnectorPrefix = "connect-init-healthcheck-probe-"

// Health reaches the local worker's REST API for a healthcheck.
//
// Readiness is "joined the group and serving requests", which neither GET /
// nor GET /connectors proves: both answer while the worker loops on
// rebalances. GET /health (Kafka >= 3.9) goes through the herder's request
// queue and answers 200 only when the herder ticks; on older workers, where
// /health is 404, GET /connectors/<a name that cannot exist> also goes
// through the queue (DistributedHerder.connectorInfo) and answers 404 only
// once the worker has joined and is not mid-rebalance. Only Connect's JSON
// 404 naming the probed connector counts: while a worker starts, its REST
// server listens before its resources are registered
// (RestServer.initializeServer, then initializeResources), and every path,
// /health included, is Jetty's generic HTML 404 then (seen on Kafka 4.3.1).
type Health struct {
	// URL is the worker's local REST base URL (workerconfig.LocalRESTURL).
	URL string
	// Client sends the requests; its Timeout should be short (a Docker
	// HEALTHCHECK has its own timeout, and a stuck herder never answers).
	Client *http.Client
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
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true, TLSHandshakeTimeout: timeout, ResponseHeaderTimeout: timeout}
	if strings.HasPrefix(base, "https:") {
		cfg, err := TLSConfig(props)
		if err != nil {
			return nil, fmt.Errorf("TLS settings of the REST listener: %w", err)
		}
		name := "localhost"
		if adv, err := workerconfig.AdvertisedURL(props); err == nil {
			if t, err := parseTarget(adv); err == nil {
				name = t.host
			}
		}
		if !cfg.InsecureSkipVerify {
			cfg.ServerName = name
		}
		tr.TLSClientConfig = cfg
	}
	return &Health{URL: base, Client: &http.Client{Transport: tr, Timeout: timeout}}, nil
}

// Readiness is the outcome of Health.Check.
type Readiness struct {
	// Ready is true when the worker has joined its group and serves
	// requests.
	Ready bool
	// Reason is one line for the operator: why (not) ready.
	Reason string
	// Request is the request that decided ("GET /health").
	Request string
	// HTTPStatus is its status code, 0 when it did not answer.
	HTTPStatus int
}

// connectStatus is the body of Connect's /health and error responses.
type connectStatus struct {
	Status    string `json:"status"`
	Message   string `json:"message"`
	ErrorCode int    `json:"error_code"`
}

// Check asks the worker whether it is ready: GET /health, falling back to
// GET /connectors/<ProbeConnectorPrefix><random> when /health is 404.
func (h *Health) Check(ctx context.Context) Readiness {
	base := strings.TrimSuffix(h.URL, "/")
	code, body, err := h.get(ctx, base+"/health")
	r := Readiness{Request: "GET /health", HTTPStatus: code}
	switch {
	case err != nil:
		r.Reason = h.describeErr("GET /health", err)
		return r
	case code == http.StatusOK:
		r.Ready = true
		r.Reason = "GET /health answered 200" + detail(body)
		return r
	case code != http.StatusNotFound:
		r.Reason = fmt.Sprintf("GET /health answered %d%s", code, detail(body))
		return r
	}

	// A worker older than Kafka 3.9: ask through the herder's queue.
	name := ProbeConnectorPrefix + randomSuffix()
	req := "GET /connectors/" + name
	code, body, err = h.get(ctx, base+"/connectors/"+url.PathEscape(name))
	r = Readiness{Request: req, HTTPStatus: code}
	switch {
	case err != nil:
		r.Reason = h.describeErr(req+" (this worker has no /health)", err)
	case code == http.StatusNotFound && herderNotFound(body, name):
		r.Ready = true
		r.Reason = "the herder answered " + req + " with 404 (this worker has no /health)"
	case code == http.StatusNotFound:
		r.Reason = "GET /health and " + req + " answered a generic 404, not Connect's: the REST server listens but its resources " +
			"are not registered yet (the worker is starting)"
	default:
		r.Reason = fmt.Sprintf("%s answered %d%s (this worker has no /health; 404 would mean ready)", req, code, detail(body))
	}
	return r
}

// herderNotFound reports whether body is Connect's JSON error for the
// missing connector name ({"error_code":404,"message":"Connector <name> not
// found"}, DistributedHerder's NotFoundException through
// ConnectExceptionMapper). Jetty's own 404 page, served while resources are
// not registered yet, echoes the URI and so the name too: it must not count.
func herderNotFound(body []byte, name string) bool {
	var s connectStatus
	if json.Unmarshal(body, &s) != nil {
		return false
	}
	return s.ErrorCode == http.StatusNotFound && strings.Contains(s.Message, "Connector "+name+" ")
}

// get sends one GET and returns the status and (bounded) body.
func (h *Health) get(ctx context.Context, u string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := h.Client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, body, nil
}

// describeErr turns a transport error into the one line an operator reads
// in `docker inspect`.
func (h *Health) describeErr(what string, err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("%s at %s: connection refused (the worker's REST server is not listening yet)", what, h.URL)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Sprintf("%s at %s: no answer within the timeout (the worker is not processing requests: starting, rebalancing, or stuck)", what, h.URL)
	}
	var ce *tls.CertificateVerificationError
	if errors.As(err, &ce) {
		return fmt.Sprintf("%s at %s: %v (the REST certificate must be trusted by listeners.https.ssl.truststore.* or ssl.truststore.* and name the advertised host)", what, h.URL, err)
	}
	return fmt.Sprintf("%s at %s: %v", what, h.URL, err)
}

// detail renders Connect's JSON status/message for the reason line.
func detail(body []byte) string {
	var s connectStatus
	if json.Unmarshal(body, &s) != nil {
		if t := strings.TrimSpace(string(body)); t != "" && len(t) < 200 && !strings.ContainsAny(t, "\n<") {
			return ": " + t
		}
		return ""
	}
	var parts []string
	if s.Status != "" {
		parts = append(parts, s.Status)
	}
	if s.Message != "" {
		parts = append(parts, s.Message)
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ": ")
}

func randomSuffix() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

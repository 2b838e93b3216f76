package restclient

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
)

// ProbeConnectorPrefix starts the connector name the fallback readiness
// probe asks for. A random suffix makes sure no such connector exists, so
// the herder answers 404 once it processes the request.
const ProbeConnectorPrefix = "connect-init-healthcheck-probe-"

// Readiness is the outcome of Client.Health.
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
	// Refused is set when the worker answered 401 or 403: it is up and
	// answering, but no wait will make it ready for these credentials.
	Refused *AuthError
}

// connectStatus is the body of Connect's /health and error responses.
type connectStatus struct {
	Status    string `json:"status"`
	Message   string `json:"message"`
	ErrorCode int    `json:"error_code"`
}

// Health asks the worker at t whether it has joined its group and serves
// requests; dial, when set, is the address to connect to (see Get).
//
// Neither GET / nor GET /connectors proves it: both answer while the worker
// loops on rebalances. GET /health (Kafka >= 3.9) goes through the herder's
// request queue and answers 200 with {"status":"healthy"} only when the
// herder ticks; a 200 without that body is not Connect's and is not ready. On older
// workers, where /health is 404, GET /connectors/<a name that cannot exist>
// also goes through the queue (DistributedHerder.connectorInfo) and answers
// 404 only once the worker has joined and is not mid-rebalance. Only
// Connect's JSON 404 naming the probed connector counts: while a worker
// starts, its REST server listens before its resources are registered
// (RestServer.initializeServer, then initializeResources), and every path,
// /health included, is Jetty's generic HTML 404 then (seen on Kafka 4.3.1).
func (c *Client) Health(ctx context.Context, t Target, dial net.IP) Readiness {
	resp, err := c.Get(ctx, t, "health", dial)
	r := Readiness{Request: "GET /health", HTTPStatus: resp.Status}
	switch {
	case err != nil:
		r.Reason = describeErr("GET /health", t.Raw, err)
		return r
	case resp.Status == http.StatusOK && !connectHealthy(resp.Body):
		r.Reason = fmt.Sprintf("GET /health at %s answered 200 without Connect's {\"status\": \"healthy\"}: not the worker yet", t.Raw)
		return r
	case resp.Status == http.StatusOK:
		r.Ready = true
		r.Reason = "GET /health answered 200" + detail(resp.Body)
		return r
	case refused(&r, t, resp, c.Auth):
		return r
	case resp.Status != http.StatusNotFound:
		r.Reason = fmt.Sprintf("GET /health answered %d%s", resp.Status, detail(resp.Body))
		return r
	case !connectNotFound(resp.Body):
		// Jetty's own 404: the resources are not registered yet, on any
		// version. Asking the herder now would race their registration
		// (seen on 4.3.1: /health a generic 404, then the probe the
		// herder's 404 a moment later, taken for an old worker's ready).
		r.Reason = "GET /health answered a generic 404, not Connect's: the REST server listens but its resources are not registered yet (the worker is starting)"
		return r
	}

	// A worker older than Kafka 3.9: ask through the herder's queue.
	name := ProbeConnectorPrefix + randomSuffix()
	req := "GET /connectors/" + name
	resp, err = c.Get(ctx, t, "connectors/"+url.PathEscape(name), dial)
	r = Readiness{Request: req, HTTPStatus: resp.Status}
	switch {
	case err != nil:
		r.Reason = describeErr(req+" (this worker has no /health)", t.Raw, err)
	case refused(&r, t, resp, c.Auth):
	case resp.Status == http.StatusNotFound && herderNotFound(resp.Body, name):
		r.Ready = true
		r.Reason = "the herder answered " + req + " with 404 (this worker has no /health)"
	case resp.Status == http.StatusNotFound:
		r.Reason = "GET /health and " + req + " answered a generic 404, not Connect's: the REST server listens but its resources " +
			"are not registered yet (the worker is starting)"
	default:
		r.Reason = fmt.Sprintf("%s answered %d%s (this worker has no /health; 404 would mean ready)", req, resp.Status, detail(resp.Body))
	}
	return r
}

// refused fills r from a 401 or 403 and reports whether it was one.
func refused(r *Readiness, t Target, resp Response, a Auth) bool {
	err := Refused(r.Request, t, resp, a)
	if err == nil {
		return false
	}
	r.Refused = err.(*AuthError)
	r.Reason = err.Error() + "; " + r.Refused.Fix()
	return true
}

// connectHealthy reports whether a 200 from /health is Connect's own
// answer, {"status":"healthy"} (HealthCheckResource, Kafka >= 3.9): a bare
// 200, such as a proxy's or a stand-in's, proves nothing about the herder.
func connectHealthy(body []byte) bool {
	var s connectStatus
	return json.Unmarshal(body, &s) == nil && s.Status == "healthy"
}

// connectNotFound reports whether a 404 is Connect's JSON answer for a
// path it has no resource for ({"error_code":404,...}:
// ConnectExceptionMapper maps Jersey's NotFoundException), which is how a
// worker before Kafka 3.9 answers GET /health once its resources are
// registered.
func connectNotFound(body []byte) bool {
	var s connectStatus
	return json.Unmarshal(body, &s) == nil && s.ErrorCode == http.StatusNotFound
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

// describeErr turns a transport error into the one line an operator reads
// in `docker inspect`.
func describeErr(what, at string, err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("%s at %s: connection refused (the worker's REST server is not listening yet)", what, at)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return fmt.Sprintf("%s at %s: no answer within the timeout (the worker is not processing requests: starting, rebalancing, or stuck)", what, at)
	}
	var ce *tls.CertificateVerificationError
	if errors.As(err, &ce) {
		return fmt.Sprintf("%s at %s: %v (the REST certificate must be trusted by listeners.https.ssl.truststore.* or ssl.truststore.* and name the advertised host)", what, at, err)
	}
	return fmt.Sprintf("%s at %s: %v", what, at, err)
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
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

package restclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
)

// Defaults of the writes' Client fields, and their backoff.
const (
	// DefaultWriteTimeout is above the 90 s (RestServer's request timeout)
	// for which a Connect worker waits on the leader it forwards a write
	// to: a write sent while the group rebalances is answered late, not
	// lost, and giving up before Connect does turns a success into a
	// failure (issue 23: a create answered 201 after 6 s, given up at 5 s).
	DefaultWriteTimeout = 100 * time.Second
	// DefaultUnreachable is how long a worker that accepts no connection is
	// written to before Write gives up on it: longer than a REST server's
	// restart, short enough for apply to move to another worker.
	DefaultUnreachable = 15 * time.Second

	writePauseMin = 250 * time.Millisecond
	writePauseMax = 5 * time.Second
)

// Write is a request that changes the cluster and may be sent again: a
// connector's config (PUT replaces it whole, so a repeat writes the same),
// its target state, its deletion. Connect refuses writes with 409 while its
// group rebalances, and a write forwarded to the leader can be answered
// after many seconds, or time out on the worker that forwarded it (500
// "Request timed out") while the leader carries it out.
type Write struct {
	Method string
	// Path is relative to the worker's base URL ("connectors/x/config").
	Path string
	// Body is the JSON body; nil sends none.
	Body []byte
	// Landed is asked after an ambiguous failure, one after which the
	// write may or may not have been carried out (no answer within the
	// timeout, a connection broken after the request went out, a 5xx):
	// whether the cluster already holds what the write asked for. True
	// ends the write as done, without sending it again (a repeated PUT of
	// a config is one more config record and a restart of the connector);
	// false or an error sends it again. Nil: always send again.
	Landed func(ctx context.Context) (bool, error)
	// Until ends the repeats at this time on the client's Clock (zero:
	// only ctx ends them).
	Until time.Time
}

// WriteResult is how a write ended.
type WriteResult struct {
	// Response is the answer that ended it; Status 0 when none did (a
	// read-back found it Landed, or the worker never answered).
	Response Response
	// Attempts is how many times the request was sent.
	Attempts int
	// Landed is true when no answer confirmed the write but the read-back
	// found the cluster holding it.
	Landed bool
}

// UnreachableError is a worker that accepted no connection for the
// client's Unreachable time: no write reached it.
type UnreachableError struct {
	URL string
	For time.Duration
	Err error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("the worker at %s is unreachable (no connection for %s): %v", e.URL, e.For.Round(time.Second), e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// errLanded ends the repeats of a write the read-back found done.
var errLanded = errors.New("the cluster holds what the write asked for")

// errUntil ends the repeats at Write.Until.
var errUntil = errors.New("out of time")

// Write sends w to t and repeats it, with exponential backoff and jitter
// (250 ms doubling up to 5 s, each pause between half and all of that,
// drawn from Random), on connection errors, timeouts, 409 (a rebalance),
// 429 and the 5xx answers that say Connect could not finish in time (500
// "Request timed out", or with "forward" or "leader" in its message, 502,
// 503, 504); after each ambiguous failure it asks w.Landed first. Any
// other answer ends it and is returned, success or not, for the caller to
// judge. The repeats end with ctx, at w.Until, or, for a worker that
// accepts no connection at all, after Unreachable (an *UnreachableError).
func (c *Client) Write(ctx context.Context, t Target, w Write) (WriteResult, error) {
	hc, done := c.httpClient(t, nil, c.writeTimeout())
	defer done()
	u := t.Base() + strings.TrimPrefix(w.Path, "/")
	st := &writeState{c: c, w: w, url: t.Raw, clk: clock.Or(c.Clock)}
	resp, err := c.send(ctx, hc, w.Method, u, w.Body, MaxDoBody, policy{
		max:   1 << 30, // bounded by ctx, Until and Unreachable
		check: st.check,
		pause: c.writePause,
	})
	res := WriteResult{Response: resp, Attempts: st.attempts}
	switch {
	case errors.Is(err, errLanded):
		res.Landed, res.Response = true, Response{}
		return res, nil
	case errors.Is(err, errUntil):
		return res, fmt.Errorf("%s %s: no final answer in %d attempts; the last: %s", w.Method, u, st.attempts, st.last)
	case err != nil && ctx.Err() != nil:
		return res, fmt.Errorf("%s %s: gave up after %d attempts (%w); the last: %s", w.Method, u, st.attempts, ctx.Err(), st.last)
	case err != nil:
		return res, err
	}
	return res, nil
}

// writeState is one Write's view across its attempts.
type writeState struct {
	c        *Client
	w        Write
	url      string
	clk      clock.Clock
	attempts int
	last     string
	// down is when the worker began refusing connections (zero: it
	// answers).
	down time.Time
}

// check is the write's CheckRetry.
func (s *writeState) check(ctx context.Context, resp *http.Response, err error) (bool, error) {
	s.attempts++
	s.last = outcome(resp, err)
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	ambiguous, final := false, false
	switch {
	case err != nil && permanent(err):
		return false, nil
	case err != nil && notConnected(err):
		if s.down.IsZero() {
			s.down = s.clk.Now()
		}
		if d := s.clk.Now().Sub(s.down); d >= s.c.unreachable() {
			return false, &UnreachableError{URL: s.url, For: d, Err: err}
		}
	case err != nil:
		s.down, ambiguous = time.Time{}, true
	default:
		s.down = time.Time{}
		switch code := resp.StatusCode; {
		case code == http.StatusConflict || code == http.StatusTooManyRequests:
		case code >= 500 && code != http.StatusNotImplemented:
			msg := connectMessage(peekBody(resp))
			s.last = resp.Status + ": " + msg
			ambiguous, final = true, !transient(code, msg)
		default:
			return false, nil
		}
	}
	if ambiguous && s.w.Landed != nil {
		if ok, lerr := s.w.Landed(ctx); ok {
			return false, errLanded
		} else if lerr != nil {
			s.c.logger().Debug("cannot read back an ambiguous write", "url", s.url, "error", lerr)
		}
	}
	if final {
		return false, nil
	}
	if !s.w.Until.IsZero() && !s.clk.Now().Before(s.w.Until) {
		return false, errUntil
	}
	return true, nil
}

// notConnected reports a failure before the request could be sent: no
// connection was made, so the write certainly did not happen.
func notConnected(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) ||
		errors.As(err, &dns) || errors.As(err, &op) && op.Op == "dial"
}

// transient reports a 5xx after which Connect may do better: its
// forwarding timeout, a failed forward to the leader, a proxy's 502-504.
func transient(code int, msg string) bool {
	if code == http.StatusBadGateway || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout {
		return true
	}
	m := strings.ToLower(msg)
	return strings.Contains(m, "timed out") || strings.Contains(m, "forward") || strings.Contains(m, "leader") || strings.Contains(m, "rebalanc")
}

// connectMessage is Connect's error message, or the body's start.
func connectMessage(body []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && e.Message != "" {
		return e.Message
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// writePause is the backoff before repeat n+1: 250 ms doubling up to 5 s,
// the pause drawn between half and all of it, so that applies started
// together do not repeat in step.
func (c *Client) writePause(n int) time.Duration {
	base := min(writePauseMin<<min(n, 10), writePauseMax)
	r := rand.Float64
	if c.Random != nil {
		r = c.Random
	}
	return base/2 + time.Duration(float64(base/2)*r())
}

func (c *Client) writeTimeout() time.Duration {
	if c.WriteTimeout <= 0 {
		return DefaultWriteTimeout
	}
	return c.WriteTimeout
}

func (c *Client) unreachable() time.Duration {
	if c.Unreachable <= 0 {
		return DefaultUnreachable
	}
	return c.Unreachable
}

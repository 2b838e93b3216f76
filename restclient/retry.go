package restclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/connect-init/connect-init/internal/clock"
)

// Retries run on github.com/hashicorp/go-retryablehttp, the client the
// project's design names for Connect's REST API, through its hooks:
//
//   - CheckRetry decides after every attempt (policy.check);
//   - Backoff computes the pause, which is then given to retryablehttp as 0
//     and waited in PrepareRetry on Client.Clock instead: retryablehttp's
//     own pause is a time.Timer, and the tests of every caller step a fake
//     clock rather than sleep;
//   - RequestLogHook logs every repeated attempt, with the previous
//     outcome, into Client.Log at debug level;
//   - ErrorHandler hands back the last answer, so that a caller sees the
//     status and Connect's message, not "giving up after N attempts".

// policy is what one kind of request retries on, and how long it pauses.
type policy struct {
	// max is the number of repeats (retryablehttp's RetryMax).
	max int
	// check is retryablehttp's CheckRetry.
	check func(ctx context.Context, resp *http.Response, err error) (bool, error)
	// pause is the backoff before repeat n+1 (n from 0).
	pause func(n int) time.Duration
}

// send runs one request under p and reads the final answer (at most limit
// bytes of body; more is an error, never silently cut).
func (c *Client) send(ctx context.Context, hc *http.Client, method, u string, body []byte, limit int64, p policy) (Response, error) {
	clk := clock.Or(c.Clock)
	var pause time.Duration
	last := ""
	rc := &retryablehttp.Client{
		HTTPClient: hc,
		RetryMax:   p.max,
		CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
			last = outcome(resp, err)
			return p.check(ctx, resp, err)
		},
		Backoff: func(_, _ time.Duration, n int, _ *http.Response) time.Duration {
			pause = p.pause(n)
			return 0
		},
		PrepareRetry: func(req *http.Request) error {
			select {
			case <-req.Context().Done():
				return req.Context().Err()
			case <-clk.After(pause):
				return nil
			}
		},
		RequestLogHook: func(_ retryablehttp.Logger, req *http.Request, n int) {
			if n > 0 {
				c.logger().Debug("REST request failed; retrying", "method", req.Method, "url", u, "previous", last, "paused", pause.String(), "attempt", n+1)
			}
		},
		ErrorHandler: func(resp *http.Response, err error, _ int) (*http.Response, error) { return resp, err },
	}
	var raw any
	if body != nil {
		raw = body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, method, u, raw)
	if err != nil {
		return Response{}, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if err := c.Auth.set(req.Header); err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, u, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := rc.Do(req)
	r, rerr := readResponse(resp, method, u, limit)
	if err != nil {
		return r, err
	}
	return r, rerr
}

// readResponse reads and closes resp's body (nil: no answer).
func readResponse(resp *http.Response, method, u string, limit int64) (Response, error) {
	if resp == nil {
		return Response{}, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	r := Response{Status: resp.StatusCode, StatusText: resp.Status, Body: b}
	if int64(len(b)) > limit {
		r.Body = b[:limit]
		return r, fmt.Errorf("%s %s: the answer is longer than %d bytes", method, u, limit)
	}
	return r, nil
}

// outcome is one attempt's result in a few words, for logs and errors.
func outcome(resp *http.Response, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case resp == nil:
		return "no answer"
	}
	return resp.Status
}

// permanent reports the transport errors no repeat heals: a certificate
// that is not trusted or does not name the host.
func permanent(err error) bool {
	var ue x509.UnknownAuthorityError
	var he x509.HostnameError
	var ce *tls.CertificateVerificationError
	return errors.As(err, &ue) || errors.As(err, &he) || errors.As(err, &ce)
}

// getPolicy is Get's: connection errors, 429 and 5xx other than 501 are
// repeated up to Retries times, pausing 200 ms, doubling up to 1 s.
func (c *Client) getPolicy() policy {
	return policy{
		max: c.Retries,
		check: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
			if ctx.Err() != nil {
				return false, nil
			}
			if err != nil {
				return !permanent(err), nil
			}
			return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented, nil
		},
		pause: func(n int) time.Duration { return min(200*time.Millisecond<<min(n, 10), time.Second) },
	}
}

// peekBody reads a small body and puts it back, so that CheckRetry can
// read Connect's message and the caller still gets the whole answer.
func peekBody(resp *http.Response) []byte {
	if resp == nil || resp.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxDoBody+1))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return b
}

package restclient

import (
	"context"
	"net/http"
	"strings"
)

// MaxDoBody bounds an answer to Do: Connect's validate answer for a
// connector with many settings, or GET /connectors?expand=info on a large
// cluster, is far above Get's 64 KiB, and a cut answer must fail rather
// than decode wrong.
const MaxDoBody = 16 << 20

// Do sends one request with method and a JSON body (nil: none) to path on
// t, for the writes `connect-init apply` makes (PUT /connectors/<name>/config,
// PUT .../pause, DELETE ...). Unlike Get it never retries: whether a write
// may be repeated is the caller's decision (Connect answers 409 during a
// rebalance, and a repeated write is a new config record). An answer of
// any status is not an error; an answer longer than MaxDoBody is.
func (c *Client) Do(ctx context.Context, t Target, method, path string, body []byte) (Response, error) {
	hc, done := c.httpClient(t, nil, c.timeout())
	defer done()
	return c.once(ctx, hc, method, t.Base()+strings.TrimPrefix(path, "/"), body, MaxDoBody)
}

// GetLarge is Get without retries and with Do's larger answer bound, for
// reads whose answer grows with the cluster (GET /connectors?expand=...).
func (c *Client) GetLarge(ctx context.Context, t Target, path string) (Response, error) {
	return c.Do(ctx, t, http.MethodGet, path, nil)
}

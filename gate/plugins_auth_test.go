package gate

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/connect-init/connect-init/restclient"
)

// A member behind credentials answers 401: that is reported as a refusal
// with its fix, asked once (no second attempt), and never as silence.
func TestPluginPeersRefused(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	_, failed := PluginPeers(context.Background(), &restclient.Client{}, []string{srv.URL + "/"})
	if len(failed) != 1 || !failed[0].Refused || !strings.Contains(failed[0].Fix, "CONNECT_INIT_REST_USERNAME") || !strings.Contains(failed[0].Error, "401") {
		t.Fatalf("failed: %+v", failed)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d requests, want 1 (a refusal is not retried)", n)
	}
}

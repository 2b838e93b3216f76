package restclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// basicWorker answers like a worker behind BasicAuthSecurityRestExtension:
// 401 without the right user and password (the extension's own text),
// 403 for a known user it denies, else Connect's /health.
func basicWorker(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("Authorization") == "Bearer tok-123" {
			w.Write([]byte(`{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`))
			return
		}
		u, p, ok := r.BasicAuth()
		switch {
		case ok && u == "viewer" && p == "v-secret":
			w.WriteHeader(http.StatusForbidden)
		case !ok || u != "admin" || p != "s3cret":
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error_code":401,"message":"User cannot access the resource."}`))
		default:
			w.Write([]byte(`{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestHealthWithCredentials(t *testing.T) {
	srv, calls := basicWorker(t)
	for _, tc := range []struct {
		name   string
		auth   Auth
		ready  bool
		status int
		reason []string
	}{
		{"none", Auth{}, false, 401, []string{"requires credentials and none were given", "set CONNECT_INIT_REST_USERNAME"}},
		{"wrong", Auth{Username: "admin", Password: "wrong-pw"}, false, 401, []string{"refused the credentials given", `basic user "admin"`, "check CONNECT_INIT_REST_USERNAME"}},
		{"denied", Auth{Username: "viewer", Password: "v-secret"}, false, 403, []string{"denies them this request"}},
		{"basic", Auth{Username: "admin", Password: "s3cret"}, true, 200, nil},
		{"token", Auth{Token: "tok-123"}, true, 200, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := calls.Load()
			r := (&Client{Auth: tc.auth, Retries: 3}).Health(context.Background(), target(t, srv), nil)
			if r.Ready != tc.ready || r.HTTPStatus != tc.status {
				t.Fatalf("ready=%v status=%d, want %v %d: %+v", r.Ready, r.HTTPStatus, tc.ready, tc.status, r)
			}
			if (r.Refused != nil) != !tc.ready {
				t.Errorf("Refused=%v for ready=%v", r.Refused, r.Ready)
			}
			for _, w := range tc.reason {
				if !strings.Contains(r.Reason, w) {
					t.Errorf("reason %q lacks %q", r.Reason, w)
				}
			}
			// An answer, not a wait: one request, never repeated, and no
			// fall-back probe of the old-worker rule.
			if n := calls.Load() - before; n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
			for _, secret := range []string{"wrong-pw", "s3cret", "v-secret", "tok-123"} {
				if strings.Contains(r.Reason, secret) {
					t.Errorf("reason shows a secret: %q", r.Reason)
				}
			}
		})
	}
}

func TestAuthNeverShowsSecrets(t *testing.T) {
	for _, a := range []Auth{{Username: "u", Password: "pw-1"}, {Token: "tk-1"}} {
		e := &AuthError{Request: "GET /", URL: "http://w:8083", Status: 401, Auth: a}
		for _, s := range []string{a.String(), e.Error(), e.Fix()} {
			if strings.Contains(s, "pw-1") || strings.Contains(s, "tk-1") {
				t.Errorf("shows a secret: %q", s)
			}
		}
	}
	if (Auth{}).Given() || !(Auth{Token: "x"}).Given() {
		t.Error("Given")
	}
}

func TestRefusedOnlyFor401And403(t *testing.T) {
	tg := Target{Raw: "http://w:8083"}
	for status, want := range map[int]bool{200: false, 404: false, 500: false, 401: true, 403: true} {
		err := Refused("GET /", tg, Response{Status: status}, Auth{})
		if (err != nil) != want || IsAuth(err) != want {
			t.Errorf("%d: %v", status, err)
		}
	}
}

// Credentials that Reload reads afresh are sent as they are at each
// request (a rotated secret from the next one on); a Reload that fails
// stops the request before it is sent, never sends it without them.
func TestAuthReloadedPerRequest(t *testing.T) {
	srv, calls := basicWorker(t)
	target, err := Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	current := Auth{Username: "admin", Password: "old"}
	var reloadErr error
	c := &Client{Auth: Auth{Username: "admin", Password: "old", Reload: func() (Auth, error) { return current, reloadErr }}}
	if r, err := c.Get(context.Background(), target, "health", nil); err != nil || r.Status != http.StatusUnauthorized {
		t.Fatalf("old password: %d %v, want 401", r.Status, err)
	}
	current.Password = "s3cret" // rotated
	if r, err := c.Get(context.Background(), target, "health", nil); err != nil || r.Status != http.StatusOK {
		t.Fatalf("rotated password: %d %v, want 200 (the same client)", r.Status, err)
	}
	before := calls.Load()
	reloadErr = errors.New("CONNECT_INIT_REST_PASSWORD_FILE names /run/secrets/p, which cannot be read")
	_, err = c.Get(context.Background(), target, "health", nil)
	if err == nil || !strings.Contains(err.Error(), "CONNECT_INIT_REST_PASSWORD_FILE") {
		t.Fatalf("failed re-read: %v, want an error naming the variable", err)
	}
	if n := calls.Load() - before; n != 0 {
		t.Errorf("%d requests sent after the re-read failed, want none", n)
	}
}

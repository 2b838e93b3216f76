package restclient

import (
	"errors"
	"fmt"
	"net/http"
)

// Auth is the one set of credentials every call connect-init makes to a
// worker's REST API carries: HTTP basic (Kafka's
// BasicAuthSecurityRestExtension checks it against a JAAS login module) or
// a bearer token (for a gateway or an extension of the user's own). The
// zero value sends none. Token wins when both are set; the settings refuse
// that combination before a request is made.
type Auth struct {
	Username string
	Password string
	Token    string
	// Reload, when set, reads the credentials afresh for every request,
	// so that a secret mounted as a file and rotated is sent from the next
	// request on, by every client however long it lives (the watcher's).
	// Its error (the file can no longer be read) fails the request: a
	// request is never sent without the credentials configured, which
	// would come back as a 401 saying that none were given.
	Reload func() (Auth, error)
}

// Current is the credentials to send now: Reload's answer when set.
func (a Auth) Current() (Auth, error) {
	if a.Reload == nil {
		return a, nil
	}
	n, err := a.Reload()
	if err != nil {
		return Auth{}, fmt.Errorf("reading the REST credentials again: %w", err)
	}
	n.Reload = nil
	return n, nil
}

// Given reports whether any credential is set.
func (a Auth) Given() bool { return a.Username != "" || a.Token != "" }

// String never shows a secret: what kind of credential is set, and the
// user name, which is not one.
func (a Auth) String() string {
	switch {
	case a.Token != "":
		return "bearer token (redacted)"
	case a.Username != "":
		return fmt.Sprintf("basic user %q, password (redacted)", a.Username)
	}
	return "none"
}

// set puts the credentials on a request, as they are now (Current).
func (a Auth) set(h http.Header) error {
	a, err := a.Current()
	if err != nil {
		return err
	}
	switch {
	case a.Token != "":
		h.Set("Authorization", "Bearer "+a.Token)
	case a.Username != "":
		r := http.Request{Header: h}
		r.SetBasicAuth(a.Username, a.Password)
	}
	return nil
}

// Credential settings, named in every refusal so the reader knows what to
// set. They are read by package settings; this is their one spelling in
// messages.
const (
	BasicSettings = "CONNECT_INIT_REST_USERNAME and CONNECT_INIT_REST_PASSWORD (or CONNECT_INIT_REST_PASSWORD_FILE)"
	TokenSettings = "CONNECT_INIT_REST_TOKEN (or CONNECT_INIT_REST_TOKEN_FILE)"
)

// AuthError is a worker's 401 or 403: an answer, not a wait. Waiting
// cannot change it; only other credentials can, so every command stops at
// once on it and says which URL refused and what to set.
type AuthError struct {
	// Request is the request refused ("GET /health") and URL the worker's
	// base URL.
	Request, URL string
	// Status is 401 or 403.
	Status int
	// Auth is what was sent (shown redacted).
	Auth Auth
}

func (e *AuthError) Error() string {
	at := fmt.Sprintf("%s at %s answered %d %s", e.Request, e.URL, e.Status, http.StatusText(e.Status))
	switch {
	case e.Status == http.StatusForbidden:
		return at + ": the worker's REST API knows these credentials (" + e.Auth.String() + ") but denies them this request"
	case e.Auth.Given():
		return at + ": the worker's REST API refused the credentials given (" + e.Auth.String() + ")"
	}
	return at + ": the worker's REST API requires credentials and none were given"
}

// Fix is the one line that says what to do.
func (e *AuthError) Fix() string {
	switch {
	case e.Status == http.StatusForbidden:
		return "give a user the worker's REST extension allows this request (" + BasicSettings + ", or " + TokenSettings + ")"
	case e.Auth.Given():
		return "check " + BasicSettings + " (or " + TokenSettings + ") against the worker's REST login (for BasicAuthSecurityRestExtension: the KafkaConnect JAAS entry's credentials file)"
	}
	return "set " + BasicSettings + ", or " + TokenSettings
}

// Refused returns an *AuthError when resp is a 401 or 403, else nil.
func Refused(request string, t Target, resp Response, a Auth) error {
	if resp.Status != http.StatusUnauthorized && resp.Status != http.StatusForbidden {
		return nil
	}
	return &AuthError{Request: request, URL: t.Raw, Status: resp.Status, Auth: a}
}

// IsAuth reports whether err is (or wraps) an *AuthError.
func IsAuth(err error) bool {
	var ae *AuthError
	return errors.As(err, &ae)
}

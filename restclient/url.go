// Package restclient is connect-init's one client for Kafka Connect's REST
// API: the peer check's GET /, the startup lock's readiness check and
// `connect-init healthcheck` (GET /health with the old-worker fallback),
// doctor's reachability look, and the reads and writes of `connect-init
// apply`. Its retries run on github.com/hashicorp/go-retryablehttp
// (retry.go); a write (Write) is repeated through Connect's rebalances and
// read back after an ambiguous failure, so that it is carried out once. It parses URLs as Connect advertises them
// (percent-encoded IPv6 hosts included), honours the REST TLS settings it
// is given, and waits on an injected clock, so that its callers' tests never
// wait out real deadlines. It depends on nothing of connect-init but
// internal/clock.
package restclient

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Target is a parsed REST URL.
type Target struct {
	// Raw is the URL as given.
	Raw string
	// Scheme is http or https, lower-cased.
	Scheme string
	// Host has no brackets; Port is explicit or the scheme's default.
	Host, Port string
	// Path is the URL's path prefix, escaped, without the trailing slash:
	// "" for a worker's own URL, "/kafka-connect" for Connect behind a
	// reverse proxy that serves it there. Every request goes under it.
	Path string
}

// URLError is why a REST URL was refused. URL is the URL as given with
// everything that could be user information replaced (RedactUserinfo), so
// that its text, built only from that form, never holds a password; Err
// is the parser's own error, kept for errors.Is/As, and only ever made
// from a URL that has no user information at all. Fix says what to give
// instead, for the caller's error entry.
type URLError struct {
	URL, Problem, Fix string
	Err               error
}

// Error is the refusal and its fix, for callers that print one line.
func (e *URLError) Error() string { return e.Refusal() + "; " + e.Fix }

// Refusal is what is wrong, without the fix: for an error entry that
// carries the fix apart.
func (e *URLError) Refusal() string { return fmt.Sprintf("REST URL %q %s", e.URL, e.Problem) }

func (e *URLError) Unwrap() error { return e.Err }

// urlFix is the fix of most refusals: the form Connect's URLs have.
const urlFix = "give a worker's REST URL as scheme://host:port, e.g. http://connect-1:8083"

// Parse parses a REST URL as Connect advertises it. Connect percent-encodes
// a bare IPv6 listener host ("http://%3A%3A1:8083/"), which net/url
// rejects; such a host is decoded and bracketed.
//
// A URL with an "@" anywhere is refused before it is parsed, and the
// refusal quotes only its redacted form: user information is never sent
// (requests carry connect-init's CONNECT_INIT_REST_* credentials) and
// would be printed wherever the URL is (logs, errors, a plan's target).
// Refusing every "@" rather than net/url's idea of the user information
// is what makes the redaction hold by construction: a password holding
// "/", "#" or "?" ends net/url's authority early, so that it would take
// part of the password for a port or a path. Every later error is made
// from a URL with no "@", which holds no password to print. A Connect
// URL has no "@" of its own.
func Parse(raw string) (Target, error) {
	if shown := RedactUserinfo(raw); shown != raw {
		return Target{}, &URLError{URL: shown, Problem: "carries credentials, which are never sent from the URL",
			Fix: "give them as CONNECT_INIT_REST_USERNAME and CONNECT_INIT_REST_PASSWORD (or _FILE), and the URL without them"}
	}
	return parse(raw)
}

// RedactUserinfo is raw with everything that could be user information,
// from after the scheme's "://" (or a leading "//", or the start of a URL
// without a scheme) to the last "@", replaced by "***"; raw itself when it
// has no "@". It reads raw as text, not as a URL: whatever else is wrong
// with it, and whatever characters the password holds, nothing of the
// password is left.
func RedactUserinfo(raw string) string {
	at := strings.LastIndex(raw, "@")
	if at < 0 {
		return raw
	}
	prefix := ""
	if scheme, _, ok := strings.Cut(raw, "://"); ok && validScheme(scheme) {
		prefix = scheme + "://"
	} else if strings.HasPrefix(raw, "//") {
		prefix = "//"
	}
	return prefix + "***@" + raw[at+1:]
}

// validScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, "+", "-", ".").
func validScheme(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || !(r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return false
		}
	}
	return s != ""
}

// parse parses a URL that has no "@".
func parse(raw string) (Target, error) {
	if !strings.Contains(raw, "://") {
		return Target{}, &URLError{URL: raw, Problem: "has no scheme", Fix: "add http:// (or https://) in front, e.g. http://" + strings.TrimPrefix(raw, "//")}
	}
	u, err := url.Parse(raw)
	if err != nil && strings.Contains(strings.ToUpper(raw), "%3A") {
		if scheme, rest, ok := strings.Cut(raw, "://"); ok {
			hostport, path, _ := strings.Cut(rest, "/")
			if i := strings.LastIndex(hostport, ":"); i > 0 && !strings.Contains(strings.ToUpper(hostport[i:]), "%3A") {
				if h, uerr := url.PathUnescape(hostport[:i]); uerr == nil {
					u, err = url.Parse(scheme + "://[" + h + "]" + hostport[i:] + "/" + path)
				}
			}
		}
	}
	if err != nil {
		problem := "cannot be parsed"
		var ue *url.Error
		if errors.As(err, &ue) {
			problem += ": " + ue.Err.Error()
		}
		return Target{}, &URLError{URL: raw, Problem: problem, Fix: urlFix, Err: err}
	}
	t := Target{Raw: raw, Scheme: strings.ToLower(u.Scheme), Host: u.Hostname(), Port: u.Port(), Path: strings.TrimRight(u.EscapedPath(), "/")}
	refuse := func(problem, fix string) (Target, error) {
		return Target{}, &URLError{URL: raw, Problem: problem, Fix: fix}
	}
	switch {
	case t.Scheme != "http" && t.Scheme != "https":
		return refuse("has scheme "+strconv.Quote(u.Scheme)+", not http or https", urlFix)
	case t.Host == "":
		return refuse("has no host", urlFix)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return refuse("has a query or fragment", "give scheme, host, port and an optional path prefix, e.g. http://connect-1:8083/kafka-connect")
	}
	if t.Port == "" {
		t.Port = DefaultPort(t.Scheme)
	} else if n, err := strconv.Atoi(t.Port); err != nil || n < 1 || n > 65535 {
		return refuse("has port "+t.Port+", not one from 1 to 65535", "give the worker's REST port, e.g. http://connect-1:8083")
	}
	return t, nil
}

// DefaultPort is the scheme's port: 443 for https, else 80.
func DefaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// HostPort is host:port, bracketed for IPv6.
func (t Target) HostPort() string { return net.JoinHostPort(t.Host, t.Port) }

// Base is scheme://host:port/ with the path prefix, if any
// (scheme://host:port/kafka-connect/), the URL requests are built on: a
// Connect behind a reverse proxy is reached where the proxy serves it.
func (t Target) Base() string { return t.Scheme + "://" + t.HostPort() + t.Path + "/" }

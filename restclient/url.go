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

// Parse parses a REST URL as Connect advertises it. Connect percent-encodes
// a bare IPv6 listener host ("http://%3A%3A1:8083/"), which net/url
// rejects; such a host is decoded and bracketed.
//
// Credentials in the URL (user:password@) are refused, and every error
// quotes the URL without them: they would be printed wherever the URL is
// (logs, errors, a plan's target) and never sent, since requests carry
// connect-init's REST credentials (CONNECT_INIT_REST_*).
func Parse(raw string) (Target, error) {
	t, err := parse(raw)
	if err != nil {
		return Target{}, errors.New(strings.ReplaceAll(err.Error(), raw, RedactUserinfo(raw)))
	}
	return t, nil
}

// RedactUserinfo replaces the user information of a URL's authority, if
// any, with "***": whatever else is wrong with the URL.
func RedactUserinfo(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	authority, path, hasPath := strings.Cut(rest, "/")
	at := strings.LastIndex(authority, "@")
	if at < 0 {
		return raw
	}
	out := scheme + "://***@" + authority[at+1:]
	if hasPath {
		out += "/" + path
	}
	return out
}

func parse(raw string) (Target, error) {
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
		return Target{}, fmt.Errorf("cannot parse REST URL %q: %w", raw, err)
	}
	t := Target{Raw: raw, Scheme: strings.ToLower(u.Scheme), Host: u.Hostname(), Port: u.Port(), Path: strings.TrimRight(u.EscapedPath(), "/")}
	if t.Scheme != "http" && t.Scheme != "https" {
		return Target{}, fmt.Errorf("REST URL %q: scheme must be http or https", raw)
	}
	if t.Host == "" {
		return Target{}, fmt.Errorf("REST URL %q has no host", raw)
	}
	if u.User != nil {
		return Target{}, fmt.Errorf("REST URL %q carries credentials, which are never sent from the URL; give them as CONNECT_INIT_REST_USERNAME and CONNECT_INIT_REST_PASSWORD (or _FILE), and the URL without them", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Target{}, fmt.Errorf("REST URL %q has a query or fragment; give scheme, host, port and an optional path prefix", raw)
	}
	if t.Port == "" {
		t.Port = DefaultPort(t.Scheme)
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

package restclient

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// ParsePeer reads one CONNECT_INIT_PEERS entry: host, host:port,
// [v6]:port, a bare IPv6 address, or a URL (http or https, no path). A
// missing scheme is scheme and a missing port is port: the advertised
// URL's. It is the one rule for such an entry, so that the settings step
// rejects exactly the entries the peers gate could not probe, before
// anything is touched. The error says what is wrong with the entry, for
// the caller to put after its name.
func ParsePeer(entry, scheme, port string) (Target, error) {
	p := strings.TrimSpace(entry)
	if p == "" {
		return Target{}, errors.New("is empty")
	}
	if strings.Contains(p, "@") {
		// As for Parse: user information is never sent, and the caller
		// quotes the entry redacted (RedactUserinfo).
		return Target{}, errors.New("carries credentials, which are never sent from a peer entry; give them as CONNECT_INIT_REST_USERNAME and CONNECT_INIT_REST_PASSWORD (or _FILE)")
	}
	t := Target{Scheme: scheme, Port: port}
	if i := strings.Index(p, "://"); i >= 0 {
		s := strings.ToLower(p[:i])
		if s != "http" && s != "https" {
			return Target{}, fmt.Errorf("has scheme %q; use http or https", p[:i])
		}
		rest := strings.TrimSuffix(p[i+3:], "/")
		if strings.ContainsAny(rest, "/?#") {
			return Target{}, errors.New("has a path; give only scheme, host and port")
		}
		t.Scheme, p = s, rest
		if t.Port == "" || !strings.Contains(p, ":") || strings.HasSuffix(p, "]") {
			t.Port = DefaultPort(s)
		}
	}
	switch h, pt, err := net.SplitHostPort(p); {
	case err == nil:
		if strings.ContainsAny(h, "[] /") || strings.Contains(h, ":") && net.ParseIP(h) == nil {
			return Target{}, errors.New("is not host or host:port")
		}
		t.Host, t.Port = h, pt
		if n, err := strconv.Atoi(pt); err != nil || n < 1 || n > 65535 {
			return Target{}, fmt.Errorf("has port %q; a port is a number from 1 to 65535", pt)
		}
	case strings.HasPrefix(p, "[") && strings.HasSuffix(p, "]") && net.ParseIP(p[1:len(p)-1]) != nil:
		t.Host = p[1 : len(p)-1]
	case strings.Count(p, ":") > 1 && net.ParseIP(p) != nil:
		t.Host = p // a bare IPv6 address
	case strings.HasPrefix(p, "[") && !strings.Contains(p, "]"):
		return Target{}, errors.New("has an unclosed '['")
	case strings.ContainsAny(p, ":/[] "):
		return Target{}, errors.New("is not host or host:port")
	default:
		t.Host = p
	}
	if t.Host == "" {
		return Target{}, errors.New("has no host")
	}
	if t.Port == "" {
		t.Port = DefaultPort(t.Scheme)
	}
	t.Raw = t.Base()
	return t, nil
}

package workerconfig

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// listenerPattern is RestServer.LISTENER_PATTERN, applied with matches()
// (whole string).
var listenerPattern = regexp.MustCompile(`^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$`)

// commaWithWhitespace is ConfigDef's LIST separator.
var commaWithWhitespace = regexp.MustCompile(`\s*,\s*`)

// listener is one parsed entry of "listeners".
type listener struct {
	scheme string // "http" or "https"
	host   string // "" binds the default (all) interfaces
	port   int    // 0 = ephemeral
}

// RESTOptions supplies what AdvertisedURL needs beyond the properties.
// The zero value describes a current worker (Kafka >= 3.0) on this machine.
type RESTOptions struct {
	// LegacyRESTHostPort makes "listeners" unset or empty fall back to
	// http://<rest.host.name>:<rest.port> (rest.port default 8083), as
	// workers before Kafka 3.0 did; KAFKA-12482 removed both settings in
	// 3.0.0, since when they are ignored and listeners defaults to
	// http://:8083.
	LegacyRESTHostPort bool
	// LocalHostAddress stands for Java's
	// InetAddress.getLocalHost().getHostAddress(), which Jetty's
	// Server.getURI() uses when the first listener has no host. The default
	// resolves os.Hostname() (via /etc/hosts first, as in a container) and
	// takes the first IPv4 address, as Java does without
	// -Djava.net.preferIPv6Addresses.
	LocalHostAddress func() (string, error)
}

// AdvertisedURL is RESTOptions{}.AdvertisedURL: the URL a current worker
// advertises to the group, computed from p alone (plus this machine's
// address when Connect would use it).
func AdvertisedURL(p Properties) (string, error) {
	return RESTOptions{}.AdvertisedURL(p)
}

// AdvertisedURL returns the REST URL the worker puts in its JoinGroup
// metadata, in the exact form Connect prints it ("http://worker-1:8083/"),
// because connect-init compares it with what group members report.
//
// It follows RestServer.advertisedUrl() (apache/kafka
// connect/runtime/.../rest/RestServer.java, identical in 3.9 and 4.3) on top
// of Jetty's Server.getURI():
//   - scheme: rest.advertised.listener (lower-cased) if set; else "http" if
//     the raw listeners text contains "http://" anywhere, else "https" if it
//     contains "https://", else "http" (so an http listener wins even when an
//     https one comes first);
//   - host: rest.advertised.host.name if non-blank; else the host of the
//     first listener with that scheme; else the host of the first listener;
//     else (all hosts empty, including the default "http://:8083") the
//     machine's address from InetAddress.getLocalHost(): an IP address, not a
//     host name, which is why workers without rest.advertised.host.name show
//     up as http://10.x.y.z:8083/;
//   - port: rest.advertised.port if set; else that listener's port; else the
//     first listener's port;
//   - host encoding as Jersey's UriBuilder.host does it (a bare IPv6 literal
//     from a listener such as http://[::1]:8083 comes out as "%3A%3A1",
//     exactly as Connect advertises it); rest.advertised.port=-1 drops the
//     port, as UriBuilder does.
//
// Errors (*Error) are for settings the worker rejects at startup, for a
// listener port 0 (the real port is only known once the worker is bound),
// and for an advertised scheme other than http or https.
func (o RESTOptions) AdvertisedURL(p Properties) (string, error) {
	scheme, conn, first, err := o.advertisedListener(p)
	if err != nil {
		return "", err
	}
	hostPart, err := o.advertisedHost(p, conn, first)
	if err != nil {
		return "", err
	}
	port, err := advertisedPort(p, conn, first)
	if err != nil {
		return "", err
	}
	u := scheme + "://" + hostPart
	if port != -1 {
		u += ":" + strconv.Itoa(port)
	}
	return u + "/", nil
}

// advertisedHost is the host part of AdvertisedURL, already encoded for
// the URL: rest.advertised.host.name, else the host of conn (the first
// listener with the advertised scheme, or nil), else of first, else this
// machine's address.
func (o RESTOptions) advertisedHost(p Properties, conn *listener, first listener) (string, error) {
	host := ""
	if h := p.Get("rest.advertised.host.name", ""); h != "" {
		host = h
	} else if conn != nil && conn.host != "" {
		host = conn.host
	}
	var hostPart string
	var err error
	if host != "" {
		hostPart, err = jerseyHost(host)
		if err != nil {
			return "", &Error{Property: "rest.advertised.host.name", Problem: "cannot be put in a URL by Connect", Value: host, Err: err}
		}
	} else if first.host != "" {
		hostPart = uriHost(first.host)
	} else {
		addr, err := o.localHostAddress()
		if err != nil {
			return "", &Error{Property: "rest.advertised.host.name", Problem: "is not set and the listener has no host, so Connect would advertise this machine's address, which cannot be determined", Err: err,
				Fix: "set rest.advertised.host.name (CONNECT_REST_ADVERTISED_HOST_NAME) to a name every worker can resolve"}
		}
		hostPart = uriHost(addr)
	}
	return hostPart, nil
}

// advertisedPort is the port of AdvertisedURL: rest.advertised.port (-1
// for none), else the port of conn (or nil), else of first.
func advertisedPort(p Properties, conn *listener, first listener) (int, error) {
	port := 0
	if _, set := p["rest.advertised.port"]; set {
		v := javaTrim(p["rest.advertised.port"])
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return 0, &Error{Property: "rest.advertised.port", Problem: "is not a 32-bit integer (the worker refuses to start)", Value: p["rest.advertised.port"]}
		}
		if n < -1 {
			return 0, &Error{Property: "rest.advertised.port", Problem: "is below -1, which Connect's URI builder rejects", Value: v}
		}
		port = int(n)
	} else {
		l := conn.or(first)
		if l.port == 0 {
			return 0, &Error{Property: "listeners", Problem: "uses port 0, so the advertised port is only known once the worker has bound it", Value: p["listeners"],
				Fix: "use a fixed port or set rest.advertised.port"}
		}
		port = l.port
	}
	return port, nil
}

// advertisedListener is the scheme the worker advertises
// (advertisedScheme), the first listener with that scheme (conn, nil when
// none has it) and the first listener: what both the advertised and the
// local URL are made of.
func (o RESTOptions) advertisedListener(p Properties) (scheme string, conn *listener, first listener, err error) {
	ls, err := o.listeners(p)
	if err != nil {
		return "", nil, listener{}, err
	}
	if scheme, err = advertisedScheme(p); err != nil {
		return "", nil, listener{}, err
	}
	return scheme, findListener(ls, scheme), ls[0], nil
}

// or is l, or first when l is nil: the listener whose port Connect
// advertises and binds.
func (l *listener) or(first listener) listener {
	if l == nil {
		return first
	}
	return *l
}

// LocalRESTURL is RESTOptions{}.LocalRESTURL.
func LocalRESTURL(p Properties) (string, error) {
	return RESTOptions{}.LocalRESTURL(p)
}

// LocalRESTURL returns a URL at which a process in the worker's own
// container (a healthcheck) reaches the worker's REST API: the listener
// Connect advertises (the first one with the advertised scheme, else the
// first), with 127.0.0.1 when that listener binds all interfaces (no host,
// 0.0.0.0 or ::), and the listener's own port: rest.advertised.* describe
// how others reach the worker (often through NAT or a proxy) and are not
// used. For https the certificate will not name 127.0.0.1; verify it against
// the advertised host name instead.
func (o RESTOptions) LocalRESTURL(p Properties) (string, error) {
	_, conn, first, err := o.advertisedListener(p)
	if err != nil {
		return "", err
	}
	l := conn.or(first)
	if l.port == 0 {
		return "", &Error{Property: "listeners", Problem: "uses port 0, so the local REST port cannot be known in advance", Value: p["listeners"], Fix: "use a fixed port"}
	}
	host := l.host
	switch host {
	case "", "0.0.0.0", "::", "0:0:0:0:0:0:0:0":
		host = "127.0.0.1"
	}
	return l.scheme + "://" + uriHost(host) + ":" + strconv.Itoa(l.port) + "/", nil
}

// listeners parses "listeners" as RestServerConfig (ConfigDef LIST with
// ListenersValidator) and RestServer.createConnector do.
func (o RESTOptions) listeners(p Properties) ([]listener, error) {
	raw, set := p["listeners"]
	var items []string
	switch {
	case !set && !o.LegacyRESTHostPort:
		items = []string{"http://:8083"}
	case o.LegacyRESTHostPort && (!set || javaTrim(raw) == ""):
		port, err := p.Int("rest.port", 8083)
		if err != nil {
			return nil, err
		}
		items = []string{fmt.Sprintf("http://%s:%d", p.Get("rest.host.name", ""), port)}
	default:
		t := javaTrim(raw)
		if t == "" {
			return nil, &Error{Property: "listeners", Problem: "is empty; Connect needs at least one URL", Fix: "remove it (default http://:8083) or set e.g. http://:8083"}
		}
		for _, it := range commaWithWhitespace.Split(t, -1) {
			if javaTrim(it) == "" {
				if o.LegacyRESTHostPort {
					continue // before 3.0, empty entries were skipped
				}
				return nil, &Error{Property: "listeners", Problem: "contains an empty URL", Value: raw,
					Fix: "remove the empty entry between the commas, e.g. listeners=http://0.0.0.0:8083"}
			}
			items = append(items, it)
		}
	}
	var ls []listener
	for _, it := range items {
		m := listenerPattern.FindStringSubmatch(it)
		if m == nil {
			return nil, &Error{Property: "listeners", Problem: "has an entry not of the form protocol://hostname:port (Connect allows letters, digits and -%._: in the host)", Value: it,
				Fix: "write each listener as http://host:port or https://host:port, e.g. listeners=http://0.0.0.0:8083"}
		}
		scheme := strings.ToLower(m[1])
		if scheme != "http" && scheme != "https" {
			return nil, &Error{Property: "listeners", Problem: `has a protocol other than "http" or "https"`, Value: it,
				Fix: "use http:// or https:// (Connect's REST server speaks nothing else), e.g. listeners=http://0.0.0.0:8083"}
		}
		port, err := strconv.ParseInt(m[3], 10, 32)
		if err != nil || port < 0 || port > 65535 {
			return nil, &Error{Property: "listeners", Problem: "has a port outside 0-65535", Value: it, Fix: "use a port from 1 to 65535, e.g. 8083"}
		}
		ls = append(ls, listener{scheme: scheme, host: m[2], port: int(port)})
	}
	if len(ls) == 0 {
		return nil, &Error{Property: "listeners", Problem: "has no URL", Value: raw, Fix: "set at least one listener, e.g. listeners=http://0.0.0.0:8083 (Connect's default)"}
	}
	return ls, nil
}

// advertisedScheme is RestServer.determineAdvertisedProtocol.
func advertisedScheme(p Properties) (string, error) {
	if v, ok := p["rest.advertised.listener"]; ok {
		s := strings.ToLower(javaTrim(v))
		if s != "http" && s != "https" {
			return "", &Error{Property: "rest.advertised.listener", Problem: `must be "http" or "https"`, Value: v, Fix: "set rest.advertised.listener to http or https, or leave it unset to advertise the first listener's protocol"}
		}
		return s, nil
	}
	raw, ok := p["listeners"]
	if !ok {
		return "http", nil
	}
	raw = strings.ToLower(raw)
	if strings.Contains(raw, "http://") {
		return "http", nil
	}
	if strings.Contains(raw, "https://") {
		return "https", nil
	}
	return "http", nil
}

// findListener is RestServer.findConnector: the first listener with scheme.
func findListener(ls []listener, scheme string) *listener {
	for i := range ls {
		if ls[i].scheme == scheme {
			return &ls[i]
		}
	}
	return nil
}

// uriHost is how java.net.URI's multi-argument constructor (used by Jetty's
// getURI) writes a host: IPv6 literals get brackets.
func uriHost(h string) string {
	if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
		return "[" + h + "]"
	}
	return h
}

// errTemplate is Jersey's refusal of "{...}" in a host.
var errTemplate = errors.New(`a "{" makes Jersey's UriBuilder read the host as a URI template and fail`)

// jerseyHost is JerseyUriBuilder.host (verified with Jersey 2.39.1): an
// IPv4-mapped IPv6 address or a bracketed IPv6 literal is kept; otherwise
// characters outside RFC 3986 unreserved and sub-delims are percent-encoded
// (UTF-8, upper-case hex), except existing %XX triplets.
func jerseyHost(h string) (string, error) {
	if a, err := netip.ParseAddr(h); err == nil && a.Is4In6() && a.Zone() == "" {
		return h, nil
	}
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		if a, err := netip.ParseAddr(h[1 : len(h)-1]); err == nil && a.Is6() && a.Zone() == "" {
			return h, nil
		}
	}
	const ok = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;="
	var b strings.Builder
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c == '{':
			return "", errTemplate
		case strings.IndexByte(ok, c) >= 0:
			b.WriteByte(c)
		case c == '%' && i+2 < len(h) && isHex(h[i+1]) && isHex(h[i+2]):
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String(), nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// localHostAddress is InetAddress.getLocalHost().getHostAddress().
func (o RESTOptions) localHostAddress() (string, error) {
	if o.LocalHostAddress != nil {
		return o.LocalHostAddress()
	}
	name, err := os.Hostname()
	if err != nil {
		return "", err
	}
	if name == "localhost" {
		return "127.0.0.1", nil
	}
	ips, err := net.LookupIP(name)
	if err != nil {
		return "", fmt.Errorf("host name %q does not resolve: %w", name, err)
	}
	for _, ip := range ips {
		if ip4 := ip.To4(); ip4 != nil {
			return ip4.String(), nil
		}
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("host name %q has no address", name)
	}
	return javaIPv6(ips[0]), nil
}

// javaIPv6 is Inet6Address.getHostAddress: eight groups, no zero
// compression ("fe80:0:0:0:0:0:0:1").
func javaIPv6(ip net.IP) string {
	ip = ip.To16()
	if ip == nil {
		return ""
	}
	parts := make([]string, 8)
	for i := 0; i < 8; i++ {
		parts[i] = strconv.FormatUint(uint64(ip[2*i])<<8|uint64(ip[2*i+1]), 16)
	}
	return strings.Join(parts, ":")
}

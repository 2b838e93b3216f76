package workerconfig

import (
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestAdvertisedURL(t *testing.T) {
	opts := RESTOptions{LocalHostAddress: func() (string, error) { return "10.0.50.95", nil }}
	cases := []struct {
		name  string
		props Properties
		want  string
	}{
		{"defaults: machine IP, not host name", Properties{}, "http://10.0.50.95:8083/"},
		{"advertised host", Properties{"rest.advertised.host.name": "worker-1"}, "http://worker-1:8083/"},
		{"advertised host trimmed", Properties{"rest.advertised.host.name": " worker-1 "}, "http://worker-1:8083/"},
		{"blank advertised host ignored", Properties{"rest.advertised.host.name": " "}, "http://10.0.50.95:8083/"},
		{"advertised port", Properties{"rest.advertised.host.name": "w", "rest.advertised.port": "31000"}, "http://w:31000/"},
		{"advertised port -1 drops port", Properties{"rest.advertised.host.name": "w", "rest.advertised.port": "-1"}, "http://w/"},
		{"listener host", Properties{"listeners": "http://w2:9000"}, "http://w2:9000/"},
		{"0.0.0.0 is advertised as is", Properties{"listeners": "http://0.0.0.0:8083"}, "http://0.0.0.0:8083/"},
		{"http wins over earlier https", Properties{"listeners": "https://a:8443,http://b:8083"}, "http://b:8083/"},
		{"https only", Properties{"listeners": "HTTPS://a:8443"}, "https://a:8443/"},
		{"advertised listener", Properties{"listeners": "http://a:8083, https://b:8443", "rest.advertised.listener": "HTTPS"}, "https://b:8443/"},
		{"advertised listener without match uses first", Properties{"listeners": "http://a:8083", "rest.advertised.listener": "https"}, "https://a:8083/"},
		{"empty host uses first listener's", Properties{"listeners": "http://first:1,https://:2", "rest.advertised.listener": "https"}, "https://first:2/"},
		{"IPv6 listener, Jersey encoding", Properties{"listeners": "http://[::1]:8083"}, "http://%3A%3A1:8083/"},
		{"IPv6 base from Jetty", Properties{"listeners": "https://[::1]:8443,http://:8083", "rest.advertised.listener": "http"}, "http://[::1]:8083/"},
		{"host with space encoded", Properties{"rest.advertised.host.name": "my host"}, "http://my%20host:8083/"},
		{"underscore kept", Properties{"rest.advertised.host.name": "worker_1"}, "http://worker_1:8083/"},
		{"old rest.port ignored", Properties{"rest.port": "9999", "rest.host.name": "old"}, "http://10.0.50.95:8083/"},
	}
	for _, c := range cases {
		got, err := opts.AdvertisedURL(c.props)
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestAdvertisedURLLegacy(t *testing.T) {
	opts := RESTOptions{LegacyRESTHostPort: true, LocalHostAddress: func() (string, error) { return "10.1.1.1", nil }}
	cases := []struct {
		props Properties
		want  string
	}{
		{Properties{"rest.port": "9999", "rest.host.name": "old"}, "http://old:9999/"},
		{Properties{"rest.port": "9999"}, "http://10.1.1.1:9999/"},
		{Properties{"listeners": "", "rest.host.name": "old"}, "http://old:8083/"},
		{Properties{"listeners": "http://new:1", "rest.host.name": "old"}, "http://new:1/"},
	}
	for _, c := range cases {
		got, err := opts.AdvertisedURL(c.props)
		if err != nil || got != c.want {
			t.Errorf("%q: got %q, %v; want %q", c.props, got, err, c.want)
		}
	}
}

func TestAdvertisedURLErrors(t *testing.T) {
	opts := RESTOptions{LocalHostAddress: func() (string, error) { return "", errors.New("no name") }}
	cases := []struct {
		props Properties
		prop  string
	}{
		{Properties{}, "rest.advertised.host.name"},
		{Properties{"listeners": ""}, "listeners"},
		{Properties{"listeners": "http://a:1,"}, "listeners"},
		{Properties{"listeners": "http://a/b:1"}, "listeners"},
		{Properties{"listeners": "ftp://a:1"}, "listeners"},
		{Properties{"listeners": "http://a"}, "listeners"},
		{Properties{"listeners": "http://a:0"}, "listeners"},
		{Properties{"listeners": "http://a:99999999999"}, "listeners"},
		{Properties{"listeners": "http://a:1", "rest.advertised.port": ""}, "rest.advertised.port"},
		{Properties{"listeners": "http://a:1", "rest.advertised.port": "x"}, "rest.advertised.port"},
		{Properties{"listeners": "http://a:1", "rest.advertised.listener": "ftp"}, "rest.advertised.listener"},
		{Properties{"rest.advertised.host.name": "{x}"}, "rest.advertised.host.name"},
	}
	for _, c := range cases {
		_, err := opts.AdvertisedURL(c.props)
		var we *Error
		if !errors.As(err, &we) || we.Property != c.prop {
			t.Errorf("%q: err = %v, want *Error for %s", c.props, err, c.prop)
		}
	}
}

func TestLocalRESTURL(t *testing.T) {
	cases := []struct {
		props Properties
		want  string
	}{
		{Properties{}, "http://127.0.0.1:8083/"},
		{Properties{"rest.advertised.host.name": "w", "rest.advertised.port": "31000"}, "http://127.0.0.1:8083/"},
		{Properties{"listeners": "http://0.0.0.0:9000"}, "http://127.0.0.1:9000/"},
		{Properties{"listeners": "http://[::]:9000"}, "http://127.0.0.1:9000/"},
		{Properties{"listeners": "http://w1:9000"}, "http://w1:9000/"},
		{Properties{"listeners": "http://[::1]:9000"}, "http://[::1]:9000/"},
		{Properties{"listeners": "http://:1,https://:2", "rest.advertised.listener": "https"}, "https://127.0.0.1:2/"},
	}
	for _, c := range cases {
		got, err := LocalRESTURL(c.props)
		if err != nil || got != c.want {
			t.Errorf("%q: got %q, %v; want %q", c.props, got, err, c.want)
		}
	}
	if _, err := LocalRESTURL(Properties{"listeners": "http://:0"}); err == nil || !strings.Contains(err.Error(), "port 0") {
		t.Errorf("port 0: %v", err)
	}
}

func TestLocalHostAddressDefault(t *testing.T) {
	// The value depends on the machine, so it is checked against the
	// machine: one of the host name's addresses, IPv4 first as Java
	// prefers, and the address Connect advertises without a listener host.
	name, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	got, err := (RESTOptions{}).localHostAddress()
	ips, lerr := net.LookupIP(name)
	if name == "localhost" {
		ips, lerr = []net.IP{net.IPv4(127, 0, 0, 1)}, nil
	}
	if lerr != nil || len(ips) == 0 {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Fatalf("host name %q does not resolve (%v), yet localHostAddress = %q, %v; want an error naming it", name, lerr, got, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("localHostAddress: %v, although %q resolves to %v", err, name, ips)
	}
	var v4 []string
	var all []string
	for _, ip := range ips {
		if ip4 := ip.To4(); ip4 != nil {
			v4 = append(v4, ip4.String())
		}
		all = append(all, javaIPv6(ip), ip.String())
	}
	switch {
	case len(v4) > 0 && !slices.Contains(v4, got):
		t.Fatalf("localHostAddress = %q, want one of the IPv4 addresses %v of %q", got, v4, name)
	case len(v4) == 0 && !slices.Contains(all, got):
		t.Fatalf("localHostAddress = %q, want one of %v", got, all)
	}
	if u, err := AdvertisedURL(Properties{"listeners": "http://:8083"}); err != nil || len(v4) > 0 && u != "http://"+got+":8083/" {
		t.Fatalf("AdvertisedURL without a listener host = %q, %v; want it to carry %q", u, err, got)
	}
}

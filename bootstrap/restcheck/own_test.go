package restcheck

import (
	"strings"
	"testing"
	"time"
)

// Our container: 10.0.0.5 on eth0, loopback.
var ourAddrs = addrs("10.0.0.5/24", "127.0.0.1/8", "::1/128")

func TestOwnResolvesToUs(t *testing.T) {
	r := newResolver(map[string][]string{"worker-1": {"10.0.0.5"}})
	rep, err := gate(t, "", r, ourAddrs).Check(ctxFor(t, 5*time.Second), "http://worker-1:8083/", "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	own := rep.Peers[0]
	if own.Source != SourceOwn || own.Status != StatusSelf || own.Severity != SeverityOK || own.Resolved[0] != "10.0.0.5" {
		t.Fatalf("own = %+v", own)
	}
	if got := strings.Join(rep.OurAddrs, ","); got != "10.0.0.5,127.0.0.1,::1" {
		t.Fatalf("our addresses = %s", got)
	}
}

func TestOwnOneOfSeveralAddressesIsOurs(t *testing.T) {
	// An AAAA record that is not ours next to our A record is fine.
	r := newResolver(map[string][]string{"worker-1": {"fd00::99", "10.0.0.5"}})
	rep, err := gate(t, "", r, ourAddrs).Check(ctxFor(t, 5*time.Second), "http://worker-1:8083/", "", nil, nil)
	if err != nil || rep.Peers[0].Status != StatusSelf {
		t.Fatalf("err=%v own=%+v", err, rep.Peers[0])
	}
}

func TestOwnIPLiteral(t *testing.T) {
	r := newResolver(nil)
	rep, err := gate(t, "", r, ourAddrs).Check(ctxFor(t, 5*time.Second), "http://10.0.0.5:8083/", "", nil, nil)
	if err != nil || rep.Peers[0].Status != StatusSelf {
		t.Fatalf("err=%v own=%+v", err, rep.Peers[0])
	}
	if len(r.calls) != 0 {
		t.Fatalf("an IP literal was looked up: %v", r.calls)
	}
	// Connect's encoding of a bare IPv6 listener host.
	rep, err = gate(t, "", r, ourAddrs).Check(ctxFor(t, 5*time.Second), "http://%3A%3A1:8083/", "", nil, nil)
	if err != nil || rep.Peers[0].Status != StatusSelf {
		t.Fatalf("err=%v own=%+v", err, rep.Peers[0])
	}
	// An address that is not ours (stale rest.advertised.host.name=<old IP>).
	rep, err = gate(t, "", r, ourAddrs).Check(ctxFor(t, 300*time.Millisecond), "http://10.0.0.77:8083/", "", nil, nil)
	asGateError(t, err)
	if rep.Peers[0].Status != StatusNotOurs {
		t.Fatalf("own = %+v", rep.Peers[0])
	}
}

func TestOwnLoopbackNetworkIsOurs(t *testing.T) {
	// Debian puts "127.0.1.1 <hostname>" in /etc/hosts; it is local.
	r := newResolver(map[string][]string{"myhost": {"127.0.1.1"}})
	rep, err := gate(t, "", r, ourAddrs).Check(ctxFor(t, 5*time.Second), "http://myhost:8083/", "", nil, nil)
	if err != nil || rep.Peers[0].Status != StatusSelf {
		t.Fatalf("err=%v own=%+v", err, rep.Peers[0])
	}
}

func TestOwnMissing(t *testing.T) {
	r := newResolver(nil)
	start := time.Now()
	rep, err := gate(t, "", r, ourAddrs).Check(ctxFor(t, 500*time.Millisecond), "http://connect-1:8083/", "", nil, nil)
	ge := asGateError(t, err)
	own := rep.Peers[0]
	if own.Status != StatusUnresolved || own.Severity != SeverityFail || rep.Failed != 1 {
		t.Fatalf("own = %+v", own)
	}
	// Retried until the deadline, not given up at the first NXDOMAIN.
	if r.count("connect-1") < 3 || time.Since(start) < 400*time.Millisecond {
		t.Fatalf("looked up %d times in %s", r.count("connect-1"), time.Since(start))
	}
	for _, want := range []string{"connect-1", "does not resolve", "10.0.0.5"} {
		if !strings.Contains(own.Error, want) {
			t.Errorf("error %q does not mention %q", own.Error, want)
		}
	}
	for _, want := range []string{"CONNECT_REST_ADVERTISED_HOST_NAME", "{{.Task.Name}}", "endpoint_mode: dnsrr", "tasks.<service>", "headless", "pod IP"} {
		if !strings.Contains(own.Fix, want) {
			t.Errorf("fix does not mention %q: %s", want, own.Fix)
		}
	}
	if ge.Fix != own.Fix || !strings.Contains(ge.Error(), "connect-1") {
		t.Errorf("gate error = %v", ge)
	}
}

func TestOwnVIP(t *testing.T) {
	// The service name resolves to a Swarm virtual IP, not to this task.
	r := newResolver(map[string][]string{"connect": {"10.0.0.2"}})
	rep, err := gate(t, "", r, ourAddrs).Check(ctxFor(t, 300*time.Millisecond), "http://connect:8083/", "", nil, nil)
	asGateError(t, err)
	own := rep.Peers[0]
	if own.Status != StatusNotOurs || own.Severity != SeverityFail {
		t.Fatalf("own = %+v", own)
	}
	for _, want := range []string{"connect", "10.0.0.2", "10.0.0.5"} {
		if !strings.Contains(own.Error, want) {
			t.Errorf("error %q does not mention %q", own.Error, want)
		}
	}
	if !strings.Contains(own.Fix, "virtual IP") {
		t.Errorf("fix = %s", own.Fix)
	}
}

func TestOwnDNSLag(t *testing.T) {
	r := newResolver(map[string][]string{"connect.1.abc": {"10.0.0.5"}})
	r.failFirst["connect.1.abc"] = 4
	rep, err := gate(t, "", r, ourAddrs).Check(ctxFor(t, 5*time.Second), "http://connect.1.abc:8083/", "", nil, nil)
	if err != nil || rep.Peers[0].Status != StatusSelf || r.count("connect.1.abc") != 5 {
		t.Fatalf("err=%v own=%+v lookups=%d", err, rep.Peers[0], r.count("connect.1.abc"))
	}
}

func TestOwnPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy  string
		sev     Severity
		wantErr bool
	}{
		{"", SeverityFail, true},
		{"fail", SeverityFail, true},
		{"warn", SeverityWarn, false},
	} {
		t.Run("policy="+tc.policy, func(t *testing.T) {
			g := gate(t, tc.policy, newResolver(nil), ourAddrs)
			g.WarnWait = 200 * time.Millisecond
			rep, err := g.Check(ctxFor(t, 300*time.Millisecond), "http://connect-1:8083/", "", nil, nil)
			if (err != nil) != tc.wantErr || rep.Peers[0].Severity != tc.sev {
				t.Fatalf("err=%v own=%+v", err, rep.Peers[0])
			}
		})
	}
	t.Run("policy=off", func(t *testing.T) {
		r := newResolver(nil)
		rep, err := gate(t, "off", r, ourAddrs).Check(ctxFor(t, time.Second), "http://connect-1:8083/", "http://leader:8083/", []string{"http://x:1/"}, nil)
		if err != nil || !rep.Skipped || len(rep.Peers) != 0 || len(r.calls) != 0 {
			t.Fatalf("err=%v rep=%+v calls=%v", err, rep, r.calls)
		}
	})
}

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]string{
		"http://worker-1:8083/":     "http worker-1 8083",
		"HTTPS://W:9443":            "https W 9443",
		"http://h/":                 "http h 80",
		"https://h/":                "https h 443",
		"http://[fe80::1]:8083/":    "http fe80::1 8083",
		"http://%3A%3A1:8083/":      "http ::1 8083",
		"http://fe80%3A%3A1:8083/x": "http fe80::1 8083",
	} {
		got, err := parseTarget(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if s := got.scheme + " " + got.host + " " + got.port; s != want {
			t.Errorf("%s: %s, want %s", in, s, want)
		}
	}
	for _, in := range []string{"ftp://h:1/", "http:///", "::"} {
		if _, err := parseTarget(in); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

package peers

import (
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/gate/peers/peerstest"
)

// These tests use the real Go resolver, asking a DNS server the test runs on
// 127.0.0.1, and this machine's real interface addresses: name resolution
// is exercised end to end without touching /etc/hosts.
func startDNS(t *testing.T) *peerstest.DNS {
	d, err := peerstest.StartDNS()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func realGate(t *testing.T, policy string, d *peerstest.DNS) Gate {
	g := gate(t, policy, d.Resolver(), nil) // nil: net.InterfaceAddrs
	g.RetryInterval = 100 * time.Millisecond
	return g
}

func TestRealResolverOwnName(t *testing.T) {
	d := startDNS(t)
	p := freePort(t)
	d.Set("worker-a.connect-init.test", "127.0.0.1")
	d.Set("connect.connect-init.test", "127.0.0.2") // another task, answering for itself
	otherHost(t, "127.0.0.2:"+p, "token-other")
	self := SelfProbe{Listen: "127.0.0.1:" + p}

	g := realGate(t, "", d)
	g.Self = self
	rep, err := g.Check(ctxFor(t, 5*time.Second), "http://worker-a.connect-init.test:"+p+"/", "", nil, nil)
	if err != nil || rep.Peers[0].Status != StatusSelf {
		t.Fatalf("own name: err=%v %+v", err, rep.Peers[0])
	}

	rep, err = g.Check(ctxFor(t, 500*time.Millisecond), "http://worker-z.connect-init.test:"+p+"/", "", nil, nil)
	asGateError(t, err)
	if own := rep.Peers[0]; own.Status != StatusUnresolved || !strings.Contains(own.Fix, "CONNECT_REST_ADVERTISED_HOST_NAME") || !strings.Contains(own.Error, "127.0.0.1") {
		t.Fatalf("missing own name: %+v", own)
	}

	rep, err = g.Check(ctxFor(t, 500*time.Millisecond), "http://connect.connect-init.test:"+p+"/", "", nil, nil)
	asGateError(t, err)
	if own := rep.Peers[0]; own.Status != StatusOtherHost || !strings.Contains(own.Error, "127.0.0.2:"+p) || !strings.Contains(own.Error, "0 of 8") {
		t.Fatalf("another host: %+v", own)
	}
}

func TestRealResolverPeerLag(t *testing.T) {
	d := startDNS(t)
	d.Set("worker-a.connect-init.test", "127.0.0.1")
	leader := serve(t, 200)
	leaderURL := "http://worker-b.connect-init.test:" + leader.port() + "/"
	// worker-b's record appears only after the check has retried a while.
	g := realGate(t, "", d)
	g.Clock = newHookClock(3, func() { d.Set("worker-b.connect-init.test", "127.0.0.1") })
	p := freePort(t)
	g.Self.Listen = "127.0.0.1:" + p
	rep, err := g.Check(ctxFor(t, 10*time.Second), "http://worker-a.connect-init.test:"+p+"/", leaderURL, []string{leaderURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := find(t, rep, leaderURL); got.Status != StatusOK || got.Source != SourceLeader || got.Resolved[0] != "127.0.0.1" {
		t.Fatalf("leader = %+v", got)
	}
	if leader.hits.Load() == 0 {
		t.Fatal("the leader was not probed")
	}
}

package doctor

import (
	"context"
	"sync"
	"time"

	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/restclient"
)

// PeerCheck is the result of resolving and connecting to one advertised
// REST URL from the host doctor runs on. Connect followers forward REST
// requests to the leader's advertised URL, so a URL that does not resolve or
// answer from a worker's container breaks the cluster even when every
// worker runs (one of the causes suspected in incident 1).
type PeerCheck struct {
	URL string `json:"url"`
	// Address is the host:port dialled (the scheme's port when the URL has
	// none).
	Address string `json:"address,omitempty"`
	// Leader is true for the group leader's URL.
	Leader bool `json:"leader"`
	// Members are the member ids advertising the URL.
	Members   []string `json:"members,omitempty"`
	Resolved  bool     `json:"resolved"`
	Addresses []string `json:"addresses,omitempty"`
	Reachable bool     `json:"reachable"`
	Error     string   `json:"error,omitempty"`
}

// CheckPeer resolves rawURL's host and opens a TCP connection to it, each
// bounded by timeout (restclient: URLs as Connect advertises them, a bare
// IPv6 host percent-encoded included). It does not speak HTTP:
// reachability is the question (a worker that answers TCP but not HTTP is
// busy, not misaddressed).
func CheckPeer(ctx context.Context, rawURL string, timeout time.Duration) PeerCheck {
	pc := PeerCheck{URL: rawURL}
	t, err := restclient.Parse(rawURL)
	if err != nil {
		pc.Error = err.Error()
		return pc
	}
	pc.Address = t.HostPort()
	addrs, err := restclient.Resolve(ctx, nil, t.Host, timeout)
	if err != nil {
		pc.Error = "resolve " + t.Host + ": " + kafka.ExplainConnError(err)
		return pc
	}
	pc.Resolved, pc.Addresses = true, addrs
	if err := (&restclient.Client{Timeout: timeout}).Connect(ctx, t); err != nil {
		pc.Error = "connect to " + pc.Address + ": " + kafka.ExplainConnError(err)
		return pc
	}
	pc.Reachable = true
	return pc
}

// checkPeers checks every URL in parallel; urls come leader first.
func checkPeers(ctx context.Context, group *gate.GroupReport, urls []string, timeout time.Duration) []PeerCheck {
	out := make([]PeerCheck, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = CheckPeer(ctx, u, timeout)
		}()
	}
	wg.Wait()
	for i := range out {
		for _, m := range group.Members {
			if m.URL == out[i].URL {
				out[i].Members = append(out[i].Members, m.MemberID)
			}
			if m.Leader && m.URL == out[i].URL {
				out[i].Leader = true
			}
		}
		if group.LeaderURL != "" && group.LeaderURL == out[i].URL {
			out[i].Leader = true
		}
	}
	return out
}

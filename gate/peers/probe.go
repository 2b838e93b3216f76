package peers

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/connect-init/connect-init/restclient"
	"github.com/connect-init/connect-init/step"
)

// checkPeer resolves one input and probes each address, retrying rounds
// until ctx ends. A configured name yields one result per address.
func (g Gate) checkPeer(ctx context.Context, in peerInput, own *target, ours []*net.IPNet, sev Severity, until time.Time) []PeerResult {
	scheme, host, port := in.scheme, in.host, in.port
	if !in.configured {
		t, err := parseTarget(in.url)
		if err != nil {
			return []PeerResult{{URL: in.url, Source: in.source, Status: StatusInvalid, Error: err.Error(), Severity: sev,
				Fix: "the worker advertising it must fix its listeners / rest.advertised.* settings"}}
		}
		scheme, host, port = t.scheme, t.host, t.port
	}
	p := progress{log: g.logger(), clk: g.clock()}
	var results []PeerResult
	for {
		var round []PeerResult
		ips, err := g.resolve(ctx, host)
		if err != nil {
			round = []PeerResult{{URL: in.url, Host: host, Source: in.source, Status: StatusUnresolved, Error: err.Error()}}
		} else {
			round = g.probeAll(ctx, in, scheme, host, port, ips, own, ours)
		}
		if ctx.Err() != nil && results != nil {
			// The deadline cut this round short: its errors say only
			// "context deadline exceeded"; the previous round says why.
			break
		}
		results = round
		bad := slices.ContainsFunc(results, func(r PeerResult) bool { return r.Status != StatusOK && r.Status != StatusSelf })
		if !bad {
			break
		}
		if g.left(ctx, in) {
			for i := range results {
				results[i].Status, results[i].Error = StatusLeft, ""
			}
			break
		}
		p.waiting("waiting for REST peer", "gate", step.Peers, "url", in.url, "source", string(in.source), "status", string(results[0].Status), "error", firstError(results))
		if !g.pause(ctx, until) {
			break
		}
	}
	for i := range results {
		r := &results[i]
		if r.Status == StatusOK || r.Status == StatusSelf || r.Status == StatusLeft {
			r.Severity = SeverityOK
			continue
		}
		r.Severity = sev
		r.Fix = peerFix(r.Status, in.source)
	}
	return results
}

// left reports whether in is a URL advertised in the group (leader,
// member, lock queue) whose worker is no longer a member (Gate.Left).
// Configured peers are names and addresses, not a member's URL: they are
// not asked about.
func (g Gate) left(ctx context.Context, in peerInput) bool {
	if g.Left == nil || in.configured || in.source == SourceOwn || ctx.Err() != nil {
		return false
	}
	return g.Left(ctx, in.url)
}

func firstError(rs []PeerResult) string {
	for _, r := range rs {
		if r.Error != "" {
			return r.Error
		}
	}
	return ""
}

// peerFix is the advice for a bad peer.
func peerFix(s Status, src Source) string {
	who := "the worker that advertises it"
	if src == SourceConfigured {
		who = "CONNECT_INIT_PEERS, or the peer itself"
	}
	switch s {
	case StatusUnresolved:
		return "fix " + who + ": its rest.advertised.host.name (CONNECT_REST_ADVERTISED_HOST_NAME) must be resolvable by every worker " +
			"(Swarm: a per-task name such as {{.Task.Name}} on a shared overlay network, or one service per worker with endpoint_mode: dnsrr; " +
			"Kubernetes: the pod IP or <pod>.<headless-service>); if it is a stale member of the group, wait for its session to expire or use a new group.id"
	case StatusUnreachable:
		return "make the peer's REST port reachable from this container (same network, no firewall, listener bound to a reachable address, " +
			"TLS trusted by listeners.https.ssl.truststore.*); followers forward requests to the leader at this URL"
	case StatusBadResponse:
		return "look at the peer worker's log: its REST server answers with an error"
	}
	return "fix " + who
}

// probeAll probes every address of one input concurrently. An address that
// is ours on our own advertised port is us: not probed.
func (g Gate) probeAll(ctx context.Context, in peerInput, scheme, host, port string, ips []net.IP, own *target, ours []*net.IPNet) []PeerResult {
	resolved := ipStrings(ips)
	if !in.configured {
		// One advertised URL: it passes when any address answers (a
		// resolver returning A and AAAA records, of which one family is not
		// routed, is not a problem for Connect's Java client either).
		r := PeerResult{URL: in.url, Host: host, Source: in.source, Resolved: resolved}
		var errs []string
		for _, ip := range ips {
			if own != nil && port == own.port && isOurs(ip, ours) {
				r.Status, r.Error = StatusSelf, ""
				return []PeerResult{r}
			}
		}
		for _, ip := range ips {
			st, code, err := g.probe(ctx, scheme, host, port, ip)
			r.Status, r.HTTPStatus = st, code
			if st == StatusOK {
				r.Error = ""
				return []PeerResult{r}
			}
			errs = append(errs, err)
		}
		r.Error = strings.Join(errs, "; ")
		return []PeerResult{r}
	}
	out := make([]PeerResult, len(ips))
	var wg sync.WaitGroup
	for i, ip := range ips {
		u := scheme + "://" + net.JoinHostPort(ip.String(), port) + "/"
		out[i] = PeerResult{URL: u, Host: host, Source: in.source, Resolved: resolved}
		if own != nil && port == own.port && isOurs(ip, ours) {
			out[i].Status = StatusSelf
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, code, err := g.probe(ctx, scheme, host, port, ip)
			out[i].Status, out[i].HTTPStatus, out[i].Error = st, code, err
		}()
	}
	wg.Wait()
	return out
}

// probe sends GET / to host:port, dialling ip (so that the resolved address
// is the one tested and the injected resolver is honoured) with host as the
// Host header and TLS server name, through restclient with bounded retries
// on the gate's clock; the last response or error is reported.
func (g Gate) probe(ctx context.Context, scheme, host, port string, ip net.IP) (Status, int, string) {
	timeout := g.ProbeTimeout
	if timeout <= 0 {
		timeout = defaultProbeTimeout
	}
	retries := g.ProbeRetries
	if retries <= 0 {
		retries = defaultProbeRetries
	}
	t := restclient.Target{Scheme: scheme, Host: host, Port: port}
	t.Raw = t.Base()
	rc := &restclient.Client{TLS: g.TLS, Auth: g.Auth, Timeout: timeout, Retries: retries, Clock: g.clock(),
		Log: slog.New(debugOnly{g.logger().Handler()}).With("peer", t.Raw, "address", ip.String())}
	resp, err := rc.Get(ctx, t, "", ip)
	via := ""
	if net.ParseIP(host) == nil {
		via = " (at " + ip.String() + ")"
	}
	switch {
	case err == nil && resp.Status < 500:
		return StatusOK, resp.Status, ""
	case err == nil && isSelfProbeAnswer(resp.Body):
		// Another connect-init's self-probe: the peer's host answers at
		// this URL, and its worker starts there once the probe ends.
		return StatusOK, resp.Status, ""
	case err == nil:
		return StatusBadResponse, resp.Status, fmt.Sprintf("GET %s%s answered %s", t.Raw, via, resp.StatusText)
	default:
		return StatusUnreachable, 0, fmt.Sprintf("GET %s%s: %v", t.Raw, via, err)
	}
}

// debugOnly demotes every record to debug: a line per failed attempt is
// noise while a peer is still starting; the outcome is logged once by the
// gate.
type debugOnly struct{ slog.Handler }

func (h debugOnly) Enabled(ctx context.Context, _ slog.Level) bool {
	return h.Handler.Enabled(ctx, slog.LevelDebug)
}

func (h debugOnly) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return h.Handler.Handle(ctx, r)
}

func (h debugOnly) WithAttrs(as []slog.Attr) slog.Handler { return debugOnly{h.Handler.WithAttrs(as)} }
func (h debugOnly) WithGroup(n string) slog.Handler       { return debugOnly{h.Handler.WithGroup(n)} }

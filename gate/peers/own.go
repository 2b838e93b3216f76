package peers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/connect-init/connect-init/restclient"
)

// target is a parsed REST URL.
type target struct {
	raw    string
	scheme string
	host   string // no brackets
	port   string // explicit or the scheme's default
}

// parseTarget parses an advertised URL with restclient.Parse (which also
// takes Connect's percent-encoded IPv6 hosts).
func parseTarget(raw string) (target, error) {
	t, err := restclient.Parse(raw)
	if err != nil {
		return target{}, err
	}
	return target{raw: t.Raw, scheme: t.Scheme, host: t.Host, port: t.Port}, nil
}

// canonicalURL is the dedup key: scheme, lower-cased host and port.
func canonicalURL(raw string) string {
	t, err := parseTarget(raw)
	if err != nil {
		return raw
	}
	return t.scheme + "://" + strings.ToLower(net.JoinHostPort(t.host, t.port))
}

// parseConfiguredPeer reads one CONNECT_INIT_PEERS entry with
// restclient.ParsePeer, the rule the settings step already checked every
// entry with (a bad entry exits 2 there, before anything is touched). A
// missing port is our advertised port, a missing scheme ours.
func parseConfiguredPeer(p, scheme, port string) (peerInput, error) {
	t, err := restclient.ParsePeer(p, scheme, port)
	if err != nil {
		return peerInput{}, fmt.Errorf("CONNECT_INIT_PEERS entry %q %w", strings.TrimSpace(p), err)
	}
	return peerInput{url: t.Raw, source: SourceConfigured, configured: true, scheme: t.Scheme, host: t.Host, port: t.Port}, nil
}

// ourAddrs lists this container's interface addresses (IP networks, so that
// loopback's 127.0.0.0/8 counts as ours as a whole).
func (g Gate) ourAddrs() ([]*net.IPNet, error) {
	f := g.Addrs
	if f == nil {
		f = net.InterfaceAddrs
	}
	addrs, err := f()
	if err != nil {
		return nil, fmt.Errorf("list this container's interface addresses: %w", err)
	}
	var out []*net.IPNet
	for _, a := range addrs {
		switch v := a.(type) {
		case *net.IPNet:
			out = append(out, v)
		case *net.IPAddr:
			out = append(out, &net.IPNet{IP: v.IP, Mask: net.CIDRMask(len(v.IP)*8, len(v.IP)*8)})
		}
	}
	return out, nil
}

// isOurs reports whether ip is an address of one of our interfaces. Only a
// loopback interface's whole network counts (every 127.x address is local,
// e.g. Debian's 127.0.1.1 for the hostname); elsewhere the address must be
// the interface's own, since its neighbours are other hosts.
func isOurs(ip net.IP, ours []*net.IPNet) bool {
	for _, n := range ours {
		if n.IP.Equal(ip) || (n.IP.IsLoopback() && ip.IsLoopback() && n.Contains(ip)) {
			return true
		}
	}
	return false
}

// resolve looks host up once (an IP literal resolves to itself).
func (g Gate) resolve(ctx context.Context, host string) ([]net.IP, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IP{ip}, nil
	}
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := g.resolver().LookupIPAddr(actx, host)
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) && de.IsNotFound {
			return nil, fmt.Errorf("%s does not resolve from this container (no such host)", host)
		}
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%s resolves to no address", host)
	}
	ips := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		ips = append(ips, a.IP)
	}
	return ips, nil
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, 0, len(ips))
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func netStrings(ns []*net.IPNet) []string {
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		out = append(out, n.IP.String())
	}
	return out
}

// ownFix is the advice for an own advertised URL that does not lead to us.
// It is long because the right answer depends on the orchestrator.
const ownFix = "set CONNECT_REST_ADVERTISED_HOST_NAME (rest.advertised.host.name) to a name that leads every worker to THIS container: " +
	"in Docker Swarm the service name of a one-replica service (one service per worker); for a service with replicas > 1 a per-task name: " +
	"a hostname unique to the task (hostname: \"connect-{{.Task.Slot}}\" with CONNECT_REST_ADVERTISED_HOST_NAME=\"connect-{{.Task.Slot}}\"; Docker's DNS resolves a task's hostname on its networks), " +
	"the task's overlay address, or {{.Task.Name}} outside a stack (a stack's task names contain \"_\", which Java's URI parser rejects); " +
	"not the name of a service with several replicas (its virtual IP balances over all tasks; with endpoint_mode: dnsrr the name lists every task) " +
	"and not tasks.<service> (every task's address); " +
	"in Kubernetes the pod IP (status.podIP via the downward API) or the pod's name under a headless service (<pod>.<service>.<namespace>.svc); " +
	"or leave it unset so that Connect advertises this container's IP address"

// checkOwn is the self-probe (SelfProbe): it binds the worker's listener,
// serves a token and requests our advertised URL until every answer of a
// round carries the token. It retries until ctx ends: overlay DNS lags, a
// per-task name may still point at the previous task for a while, and a
// virtual IP may not route yet. Which of our interface addresses the name
// resolves to is only evidence in the message, never the verdict: a
// one-replica service's virtual IP is no address of ours and still routes
// here, while one of our addresses behind a port mapping may not.
func (g Gate) checkOwn(ctx context.Context, own target, ours []*net.IPNet, addrErr error, sev Severity) PeerResult {
	r := PeerResult{URL: own.raw, Host: own.host, Source: SourceOwn}
	sp := g.Self
	sp.HTTPS = sp.HTTPS || own.scheme == "https"
	addr := sp.Listen
	if addr == "" {
		addr = net.JoinHostPort("", own.port)
	}
	token, err := sp.token()
	if err != nil {
		r.Status, r.Error, r.Severity, r.Fix = StatusInvalid, err.Error(), sev, "retry; the system's random source failed"
		return r
	}
	srv, bad := sp.listenSelf(addr, token)
	if bad != nil {
		bad.URL, bad.Host, bad.Source, bad.Severity = own.raw, own.host, SourceOwn, sev
		return *bad
	}
	defer srv.close()
	g.logger().Debug("self-probe listening", "listen", srv.addr, "url", own.raw)

	clock := sp.clock()
	// The wait line's 5 s are read on the clock the loop waits on.
	p := progress{log: g.logger(), clk: clock}
	var ips []net.IP
	var passedAt time.Time // start of the current run of passing rounds (settling)
	// shared is set once a round was answered both by us and by another
	// host: several tasks are behind the name at once. No later round can
	// undo that. When the other tasks are refused by this same check, they
	// exit a moment before us (their deadlines are a little earlier), their
	// records go, and the name leads to us alone until they restart: the
	// last task standing passed and joined behind a round-robin name
	// (issue 41, seen in a loaded run: three tasks refused at 15:38:30.2 to
	// 30.39, the fourth passed at 30.476 with the name resolving to it).
	var shared string
	for {
		answers, rips := g.selfRound(ctx, own, token, sp.requests(), ours)
		if ctx.Err() != nil && r.Status != "" {
			break // cut short by the deadline: keep the previous round's answer
		}
		ips = rips
		r.Resolved = ipStrings(ips)
		st, msg, service := g.roundVerdict(ctx, own, count(answers), ips, ours, &shared)
		if st == StatusSelf {
			settle := sp.settle()
			if !service || settle <= 0 {
				r.Status, r.Error, r.Severity = StatusSelf, "", SeverityOK
				return r
			}
			now := clock.Now()
			if passedAt.IsZero() {
				passedAt = now
				g.logger().Info("own URL reaches this container; watching the service's name before the pass counts",
					"url", own.raw, "resolved", strings.Join(r.Resolved, ","), "settle", settle.String())
			}
			if now.Sub(passedAt) >= settle {
				r.Status, r.Error, r.Severity, r.Settled = StatusSelf, "", SeverityOK, settle
				return r
			}
			r.Status, r.Error = StatusSelf, ""
		} else {
			if !passedAt.IsZero() {
				g.logger().Warn("own URL stopped leading to this container alone while the pass settled",
					"url", own.raw, "status", string(st), "resolved", strings.Join(r.Resolved, ","), "error", msg)
			}
			passedAt = time.Time{}
			r.Status, r.Error = st, msg
			p.waiting("waiting for our advertised URL to reach this container",
				"url", own.raw, "status", string(st), "resolved", strings.Join(r.Resolved, ","), "last_error", r.Error)
		}
		select {
		case <-ctx.Done():
		case <-clock.After(g.retryInterval()):
			continue
		}
		break
	}
	if r.Status == StatusSelf {
		// The deadline ended the settling before it was over: not proven.
		r.Status, r.Error = StatusUnreachable, fmt.Sprintf("the deadline passed while our advertised URL %s was watched before its pass counted (it names a Swarm service, whose other tasks may still appear)", own.raw)
	}
	if r.Status == StatusUnresolved {
		r.Error = fmt.Sprintf("our advertised host %s does not resolve from this container (%s)", own.host, r.Error)
	}
	r.Error += "; " + evidence(own.host, ips, ours, addrErr)
	r.Severity, r.Fix = sev, ownFix
	return r
}

// roundVerdict is one round's verdict on our advertised URL from its
// answers t and the addresses ips its name resolved to, and whether the
// name is a Swarm service's. *shared keeps, once set, the first round
// answered by us and by another host while several tasks were behind the
// name: no later round undoes it. Shared only on evidence of several tasks
// behind the name at once (several addresses, or a service's task list):
// one address answered by us and by another host may be a name moving
// over to us (a balancer's own answer, a change-over), which waiting ends.
func (g Gate) roundVerdict(ctx context.Context, own target, t tally, ips []net.IP, ours []*net.IPNet, shared *string) (Status, string, bool) {
	st, msg := verdict(own, t, ips)
	tasks, service := g.serviceTasks(ctx, own.host, ours)
	if t.ours > 0 && t.other > 0 && *shared == "" && (len(ips) > 1 || service) {
		*shared = msg
	}
	if st == StatusSelf && *shared != "" {
		st, msg = StatusOtherHost, "our advertised URL "+own.raw+" now leads to this container alone, but earlier in this check it was answered by this container and by another host in one round, so several tasks share the name (the others may be gone for now, refused by this same check, and come back when they restart): "+*shared
	}
	if st == StatusSelf && len(tasks) > 1 {
		st, msg = StatusOtherHost, fmt.Sprintf("our advertised URL %s names a Swarm service with %d tasks: tasks.%s resolves to %s, and every task of the service advertises the same URL, so requests meant for one worker reach another (a Swarm service with replicas > 1)",
			own.raw, len(tasks), own.host, strings.Join(ipStrings(tasks), ", "))
	}
	return st, msg, service
}

// serviceTasks looks up tasks.<host>, Docker's name for every task of a
// Swarm service, and returns its addresses when host is the name of a
// service this container is a task of: the list holds one of our
// addresses. A list without ours is no evidence (a wildcard DNS zone
// answers for any name under it; our own record may lag), and is ignored.
// The name is asked for as rooted (a trailing dot), so that a resolver's
// search list cannot turn it into another domain's name. An IP literal, a
// name already under tasks., or a failed look-up is no service.
func (g Gate) serviceTasks(ctx context.Context, host string, ours []*net.IPNet) ([]net.IP, bool) {
	if net.ParseIP(host) != nil || strings.HasPrefix(strings.ToLower(host), "tasks.") || strings.HasSuffix(host, ".") {
		return nil, false
	}
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := g.resolver().LookupIPAddr(actx, "tasks."+host+".")
	if err != nil || len(addrs) == 0 {
		return nil, false
	}
	ips := make([]net.IP, 0, len(addrs))
	mine := false
	for _, a := range addrs {
		ips = append(ips, a.IP)
		mine = mine || isOurs(a.IP, ours)
	}
	if !mine {
		return nil, false
	}
	return ips, true
}

// evidence is the address comparison the verdict no longer rests on.
func evidence(host string, ips []net.IP, ours []*net.IPNet, addrErr error) string {
	if addrErr != nil {
		return "this container's addresses are unknown: " + addrErr.Error()
	}
	oursText := strings.Join(netStrings(ours), ", ")
	if len(ips) == 0 {
		return "this container's addresses are " + oursText
	}
	var mine []string
	for _, ip := range ips {
		if isOurs(ip, ours) {
			mine = append(mine, ip.String())
		}
	}
	if len(mine) == 0 {
		return fmt.Sprintf("evidence: %s resolves to %s, none of which is an address of this container (%s)", host, strings.Join(ipStrings(ips), ", "), oursText)
	}
	return fmt.Sprintf("evidence: %s resolves to %s, of which %s is an address of this container (%s)", host, strings.Join(ipStrings(ips), ", "), strings.Join(mine, ", "), oursText)
}

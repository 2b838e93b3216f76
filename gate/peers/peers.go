// Package peers is the peers gate: it checks the Kafka Connect REST URLs
// a worker depends on before the worker starts, and the local worker's
// readiness afterwards (connect-init healthcheck). Requests go through
// package restclient.
//
// Followers forward REST requests (connector creation, task configs) to the
// leader at the URL the leader advertises, and every worker is reached by the
// name it advertises. In Docker Swarm a container's hostname is not
// resolvable by other containers and a service name resolves to a virtual IP
// that load-balances to some task, so a worker advertising it is reached at
// random. Nothing in Connect checks this; the worker starts, joins and fails
// later, one forwarded request at a time. This package makes the mistake
// visible before exec:
//
//   - the worker's own advertised URL must lead to this container: a
//     self-probe binds the worker's listener, serves a random token and
//     requests the advertised URL several times, each on a new connection;
//     every answer must carry the token (SelfProbe);
//   - the group's members (leader first), the startup-lock queue and the
//     operator's CONNECT_INIT_PEERS must resolve and answer GET / (Peers).
//
// # Policy (CONNECT_INIT_PEER_CHECK)
//
//	setting      own URL  leader  other members, lock queue, configured
//	"" (default) fail     fail    warn
//	fail         fail     fail    fail
//	warn         warn     warn    warn
//	off          -        -       -       (nothing is checked)
//
// A "fail" peer that is still bad when its deadline passes makes Check
// return a *GateError (gate "peers", exit 1); a "warn" peer is only logged
// and reported. Fail-severity checks retry until ctx's deadline (overlay
// DNS lags behind container start); warn-severity checks retry for at most
// Gate.WarnWait (default 30s), so that a warning never holds a worker back
// for the whole timeout. Retries wait on Gate.Clock.
//
// The package depends on nothing above it (not on bootstrap): it is given
// the policy and the peers as values.
package peers

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/restclient"
)

// GateError is the peers gate's failure: exit 1. Its text has the form of
// every gate's error ("peers gate: ...; fix: ...").
type GateError struct {
	Err error
	Fix string
}

// Error names the gate, what failed and the fix.
func (e *GateError) Error() string {
	msg := "peers gate: " + e.Err.Error()
	if e.Fix != "" {
		msg += "; fix: " + e.Fix
	}
	return msg
}

// Unwrap exposes the cause.
func (e *GateError) Unwrap() error { return e.Err }

// Resolver is the part of *net.Resolver the checks use. It is injectable so
// that tests (and the real-host test's DNS server) decide what a name
// resolves to without touching /etc/hosts.
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Source says why a URL is checked; it decides the default severity.
type Source string

// Sources, strongest first: when one URL comes from several sources, the
// strongest is kept (our own URL is also a member after a restart, the
// leader is also a member, the lock queue holds us too).
const (
	SourceOwn        Source = "own"
	SourceLeader     Source = "leader"
	SourceMember     Source = "member"
	SourceLockQueue  Source = "lock-queue"
	SourceConfigured Source = "configured"
)

func (s Source) rank() int {
	switch s {
	case SourceOwn:
		return 0
	case SourceLeader:
		return 1
	case SourceMember:
		return 2
	case SourceLockQueue:
		return 3
	}
	return 4
}

// Status is the outcome of one check; the values are stable identifiers for
// logs and JSON.
type Status string

// Statuses.
const (
	// StatusOK: resolved (and, for a peer, answered GET /).
	StatusOK Status = "ok"
	// StatusSelf: the URL is this container's own: for our advertised URL,
	// every self-probe request carried our token; for a peer, its address
	// is ours and the port is our advertised port.
	StatusSelf Status = "self"
	// StatusUnresolved: the host name did not resolve from here.
	StatusUnresolved Status = "unresolved"
	// StatusUnreachable: resolved, but GET / failed (refused, timed out,
	// TLS).
	StatusUnreachable Status = "unreachable"
	// StatusBadResponse: GET / answered with a 5xx status.
	StatusBadResponse Status = "bad-response"
	// StatusInvalid: the URL cannot be parsed.
	StatusInvalid Status = "invalid"
	// StatusLeft: the peer did not answer, and a look at the group found
	// that the worker advertising it is no longer a member (Gate.Left): a
	// worker that left, often the one this worker replaces, is not waited
	// for. It is not a problem.
	StatusLeft Status = "left"
)

// Severity is how much a result matters under the policy.
type Severity string

// Severities.
const (
	SeverityOK   Severity = "ok"
	SeverityWarn Severity = "warn"
	SeverityFail Severity = "fail"
)

// PeerResult is the outcome for one URL (or, for a configured name that
// resolves to several addresses, for one of those addresses).
type PeerResult struct {
	// URL is the URL checked: as advertised for own, leader, members and
	// lock-queue entries; scheme://address:port/ for each address of a
	// configured name.
	URL string `json:"url"`
	// Host is the host name looked up (the configured name for expanded
	// peers).
	Host string `json:"host"`
	// Source is why the URL was checked.
	Source Source `json:"source"`
	// Resolved are the addresses Host resolved to (the last attempt).
	Resolved []string `json:"resolved"`
	// Status is the outcome.
	Status Status `json:"status"`
	// HTTPStatus is GET /'s status code, when it answered.
	HTTPStatus int `json:"http_status,omitempty"`
	// Error is why the check failed, empty when it passed.
	Error string `json:"error,omitempty"`
	// Severity is SeverityOK for a good result, else the policy's severity
	// for Source.
	Severity Severity `json:"severity"`
	// Fix says what to change, for a bad result.
	Fix string `json:"fix,omitempty"`
	// Settled is how long the self-probe kept passing before its pass
	// counted (own URL naming a Swarm service: SelfProbe.Settle).
	Settled time.Duration `json:"-"`
}

// Bad reports whether the result is a problem (warning or failure).
func (r PeerResult) Bad() bool { return r.Severity != SeverityOK }

// String renders the result as one line for logs and errors.
func (r PeerResult) String() string {
	s := fmt.Sprintf("%s %s (%s): %s", r.Source, r.URL, r.Host, r.Status)
	if r.Error != "" {
		s += ": " + r.Error
	}
	return s
}

// Report is the typed result of Check.
type Report struct {
	// Policy is the PeerCheck setting in effect ("default" for "").
	Policy string `json:"policy"`
	// Skipped is true when the policy is off: nothing was checked.
	Skipped bool `json:"skipped"`
	// OwnURL is our advertised URL as given.
	OwnURL string `json:"own_url"`
	// OurAddrs are this container's interface addresses.
	OurAddrs []string `json:"our_addresses"`
	// Peers are the results, our own URL first, then the leader, members,
	// lock-queue entries and configured peers.
	Peers []PeerResult `json:"peers"`
	// Failed and Warned count the bad results by severity.
	Failed int `json:"failed"`
	Warned int `json:"warned"`
}

// Gate is the peers gate: our own advertised URL and the REST peers. The
// zero value (plus Policy) uses the system resolver, interfaces and clock.
type Gate struct {
	// Policy is CONNECT_INIT_PEER_CHECK: "" (default), fail, warn or off.
	Policy string
	// Peers is CONNECT_INIT_PEERS: host, host:port or a URL each.
	Peers []string
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// Addrs lists this container's addresses; nil means net.InterfaceAddrs.
	// They are evidence in the own-URL message, not its verdict.
	Addrs func() ([]net.Addr, error)
	// Self configures the own-URL self-probe (the listener to bind, its
	// TLS, the token and clock).
	Self SelfProbe
	// TLS is the client configuration for https peers (see TLSConfig: the
	// worker's listeners.https.* / ssl.* settings, as Connect's RestClient
	// uses them); nil means the system roots. ServerName is set per peer.
	TLS *tls.Config
	// Auth is sent to every peer (CONNECT_INIT_REST_*). A 401 or 403 still
	// proves a worker answers at the URL, which is what this step checks.
	Auth restclient.Auth
	// Log receives progress, at least every 5 s per peer still waited for;
	// nil discards.
	Log *slog.Logger
	// WarnWait bounds how long warn-severity checks retry (0: 30s). Fail
	// checks retry until ctx's deadline.
	WarnWait time.Duration
	// ProbeTimeout bounds one GET / attempt (0: 5s).
	ProbeTimeout time.Duration
	// ProbeRetries is how many times one probe round retries GET / (0: 2).
	ProbeRetries int
	// RetryInterval is the pause between resolution/probe rounds (0: 1s).
	RetryInterval time.Duration
	// Clock paces the rounds and their deadlines; nil is the system clock.
	Clock clock.Clock
	// Left reports whether the worker that advertised url (a leader,
	// member or lock-queue URL, as the group's members advertise them) is
	// no longer a member of the group now; nil never says so. A peer that
	// does not answer is asked about after each failed round: one that
	// left (in a restart or a rolling update, often the very worker this
	// one replaces) cannot come back to answer at that URL, and Connect
	// forwards nothing to a worker outside the group, so it is not waited
	// for (StatusLeft). A peer still a member is waited for as before.
	Left func(ctx context.Context, url string) bool
}

const (
	defaultWarnWait      = 30 * time.Second
	defaultProbeTimeout  = 5 * time.Second
	defaultProbeRetries  = 2
	defaultRetryInterval = time.Second
	progressEvery        = 5 * time.Second
)

// peerInput is one URL to check before dedup and expansion.
type peerInput struct {
	url    string
	source Source
	// configured: host (and port) from CONNECT_INIT_PEERS, expanded to one
	// result per address.
	configured bool
	scheme     string
	host       string
	port       string
}

// Check runs the peers gate: ownURL (our advertised URL, as
// workerconfig.AdvertisedURL returns it) must pass the self-probe (Self:
// every request to it answered by our own listener), and leaderURL,
// memberURLs (LeaderFirstURLs may repeat the leader; duplicates are merged),
// lockURLs and Settings.Peers must resolve and answer GET /. A peer address
// that is ours on our advertised port is not probed.
//
// The error is a *GateError when a fail-severity check is bad, an error
// naming the entry for an unparsable CONNECT_INIT_PEERS entry (which the
// settings step rejects first), and nil otherwise (warnings are in the
// report and the log). The report is returned in every case but the
// unparsable entry. An empty
// ownURL skips the self-probe (and the self-skip of peers).
func (g Gate) Check(ctx context.Context, ownURL, leaderURL string, memberURLs, lockURLs []string) (*Report, error) {
	policy := g.Policy
	rep := &Report{Policy: policy, OwnURL: ownURL, Peers: []PeerResult{}}
	if policy == "" {
		rep.Policy = "default"
	}
	if policy == "off" {
		rep.Skipped = true
		g.logger().Info("peer checks are off (CONNECT_INIT_PEER_CHECK=off)")
		return rep, nil
	}
	var own *target
	if ownURL != "" {
		t, err := parseTarget(ownURL)
		if err != nil {
			rep.Peers = append(rep.Peers, PeerResult{URL: ownURL, Source: SourceOwn, Status: StatusInvalid, Error: err.Error(),
				Severity: g.severity(SourceOwn), Fix: "check listeners and rest.advertised.* (CONNECT_REST_ADVERTISED_*)"})
		} else {
			own = &t
		}
	}
	inputs, err := g.inputs(own, ownURL, leaderURL, memberURLs, lockURLs)
	if err != nil {
		return nil, err
	}

	ours, addrErr := g.ourAddrs()
	rep.OurAddrs = netStrings(ours)

	results := make([][]PeerResult, len(inputs))
	var wg sync.WaitGroup
	for i, in := range inputs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sev := g.severity(in.source)
			until := g.until(ctx, sev)
			cctx, cancel := g.deadline(ctx, sev)
			defer cancel()
			if in.source == SourceOwn {
				results[i] = []PeerResult{g.checkOwn(cctx, *own, ours, addrErr, sev)}
				return
			}
			results[i] = g.checkPeer(cctx, in, own, ours, sev, until)
		}()
	}
	wg.Wait()
	for _, rs := range results {
		rep.Peers = append(rep.Peers, rs...)
	}
	return rep, g.judge(rep)
}

// inputs merges the sources into one ordered, deduplicated list (strongest
// source wins) and parses the configured peers.
func (g Gate) inputs(own *target, ownURL, leaderURL string, memberURLs, lockURLs []string) ([]peerInput, error) {
	var out []peerInput
	index := map[string]int{}
	add := func(u string, s Source) {
		if u == "" {
			return
		}
		key := canonicalURL(u)
		if i, ok := index[key]; ok {
			if s.rank() < out[i].source.rank() {
				out[i].source = s
			}
			return
		}
		index[key] = len(out)
		out = append(out, peerInput{url: u, source: s})
	}
	if own != nil {
		add(ownURL, SourceOwn)
	}
	add(leaderURL, SourceLeader)
	for _, u := range memberURLs {
		add(u, SourceMember)
	}
	for _, u := range lockURLs {
		add(u, SourceLockQueue)
	}
	scheme, port := "http", ""
	if own != nil {
		scheme, port = own.scheme, own.port
	}
	for _, p := range g.Peers {
		in, err := parseConfiguredPeer(p, scheme, port)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// severity is the policy table of the package doc.
func (g Gate) severity(s Source) Severity {
	switch g.Policy {
	case "fail":
		return SeverityFail
	case "warn":
		return SeverityWarn
	}
	if s == SourceOwn || s == SourceLeader {
		return SeverityFail
	}
	return SeverityWarn
}

// deadline bounds one check: ctx's deadline for fail checks, WarnWait
// (capped by ctx) for warnings.
func (g Gate) deadline(ctx context.Context, sev Severity) (context.Context, context.CancelFunc) {
	if sev == SeverityFail {
		return context.WithCancel(ctx)
	}
	w := g.WarnWait
	if w <= 0 {
		w = defaultWarnWait
	}
	return context.WithTimeout(ctx, w)
}

// judge counts bad results, logs them and builds the gate error.
func (g Gate) judge(rep *Report) error {
	log := g.logger()
	var fails []string
	var fix string
	for i := range rep.Peers {
		r := &rep.Peers[i]
		switch r.Severity {
		case SeverityFail:
			rep.Failed++
			fails = append(fails, r.String())
			if fix == "" {
				fix = r.Fix
			}
			log.Error("REST peer check failed", "url", r.URL, "source", string(r.Source), "host", r.Host,
				"resolved", strings.Join(r.Resolved, ","), "status", string(r.Status), "error", r.Error, "fix", r.Fix)
		case SeverityWarn:
			rep.Warned++
			log.Warn("REST peer check", "url", r.URL, "source", string(r.Source), "host", r.Host,
				"resolved", strings.Join(r.Resolved, ","), "status", string(r.Status), "error", r.Error, "fix", r.Fix)
		case SeverityOK:
			if r.Status == StatusLeft {
				log.Info("REST peer not waited for", "url", r.URL, "source", string(r.Source), "status", string(r.Status),
					"why", "it does not answer and is no longer a member of the group (it left)")
				continue
			}
			attrs := []any{"url", r.URL, "source", string(r.Source), "resolved", strings.Join(r.Resolved, ","), "status", string(r.Status)}
			if r.Settled > 0 {
				attrs = append(attrs, "settled", r.Settled.String())
			}
			log.Info("REST peer ok", attrs...)
		}
	}
	if len(fails) == 0 {
		return nil
	}
	return &GateError{Err: errors.New(strings.Join(fails, "; ")), Fix: fix}
}

func (g Gate) logger() *slog.Logger {
	if g.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return g.Log
}

func (g Gate) resolver() Resolver {
	if g.Resolver == nil {
		return net.DefaultResolver
	}
	return g.Resolver
}

func (g Gate) clock() clock.Clock { return clock.Or(g.Clock) }

// until is when, on the gate's clock, a check of severity sev stops
// retrying: ctx's deadline for fail checks, WarnWait (capped by it) for
// warnings; zero when there is no bound but ctx.
func (g Gate) until(ctx context.Context, sev Severity) time.Time {
	now := g.clock().Now()
	var limit time.Time
	if dl, ok := ctx.Deadline(); ok {
		limit = now.Add(time.Until(dl))
	}
	if sev != SeverityFail {
		w := g.WarnWait
		if w <= 0 {
			w = defaultWarnWait
		}
		if l := now.Add(w); limit.IsZero() || l.Before(limit) {
			limit = l
		}
	}
	return limit
}

// pause waits one retry interval on the gate's clock; false when ctx ended
// or until has passed.
func (g Gate) pause(ctx context.Context, until time.Time) bool {
	clk := g.clock()
	select {
	case <-ctx.Done():
		return false
	case <-clk.After(g.retryInterval()):
		return until.IsZero() || clk.Now().Before(until)
	}
}

func (g Gate) retryInterval() time.Duration {
	if g.RetryInterval <= 0 {
		return defaultRetryInterval
	}
	return g.RetryInterval
}

// progress logs what a check waits for, at most every 5 s (on clk; nil is
// the system clock).
type progress struct {
	log  *slog.Logger
	clk  clock.Clock
	next time.Time
}

func (p *progress) waiting(msg string, args ...any) {
	if now := clock.Or(p.clk).Now(); now.After(p.next) {
		if !p.next.IsZero() {
			p.log.Info(msg, args...)
		}
		p.next = now.Add(progressEvery)
	}
}

package startup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/parity"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
	"github.com/connect-init/connect-init/workerconfig"
)

// checkParity is the group step's settings parity (docs/settings-parity.md):
// this worker's settings fingerprint against the fingerprints the group's
// live, registered workers published in the cluster registry, and its
// connect.protocol against the protocol the group uses now. It reads
// nothing more than the group gate did (its report holds the members and
// the registry's view), except a TCP connect to this worker's own
// advertised address when a live member advertises it too. Errors refuse
// the start before the exec (exit 1); warnings are logged.
//
// It refuses in run, before the exec, in both lock modes; prepare, which
// joins nothing (and whose task often carries only the settings it
// needs), logs the results as warnings. The in-worker lock's child
// (`lock acquire`) runs no group step, and needs none: it reads the very
// worker settings run judged here, and the worker joins the group only
// after it.
//
// With exactly.once.source.support preparing or enabled it also judges
// exactly-once readiness (gate.EOSLook, gate/eos.go).
func checkParity(ctx context.Context, st *state, log *slog.Logger, clk clock.Clock) error {
	rs := parityResults(st.cfg, st.group, func(u string) bool { return listening(ctx, u) })
	nParity := len(rs)
	if st.clients != nil {
		eos, err := gate.EOSLook(ctx, st.cfg, st.clients, st.group, clk)
		if err != nil {
			log.Warn("exactly-once readiness not checked", "group", st.cfg.GroupID, "error", err.Error(),
				"fix", "let the worker's admin client describe __transaction_state and the brokers' configs (DescribeConfigs), or check by hand: docs/settings-parity.md#exactly-once-readiness")
		}
		rs = append(rs, eos...)
	}
	for i, r := range rs {
		if r.Severity == checks.Error && st.withExec {
			continue // the refusal below says it
		}
		if i < nParity {
			log.Warn("worker settings differ from the group's", "group", st.cfg.GroupID, "check", r.ID, "setting", r.Subject,
				"summary", r.Summary, "evidence", r.Evidence, "fix", r.Fix)
		} else {
			log.Warn("exactly-once readiness", "group", st.cfg.GroupID, "check", r.ID, "subject", r.Subject,
				"summary", r.Summary, "evidence", r.Evidence, "fix", r.Fix)
		}
	}
	errs := checks.Errors(rs)
	if len(errs) == 0 || !st.withExec {
		return nil // prepare joins nothing: a prepare task often carries only the settings it needs (no converters)
	}
	fix := errs[0].Fix
	for _, e := range errs[1:] {
		fix += "; " + e.Fix
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Summary
		if e.Evidence != "" {
			msgs[i] += " (" + e.Evidence + ")"
		}
	}
	return &gate.GateError{Gate: step.Group, Err: fmt.Errorf("settings parity: %w", errors.New(strings.Join(msgs, "; "))), Fix: fix}
}

// parityResults judges cfg's worker against rep (the group gate's
// report); listening says whether something answers on an address
// already (this worker's own is not served before the exec).
func parityResults(cfg *settings.Config, rep *gate.GroupReport, listening func(string) bool) []checks.Result {
	if rep == nil {
		return nil
	}
	s := parity.Subject{GroupID: cfg.GroupID, URL: cfg.AdvertisedURL, Settings: parity.Of(cfg.Worker, ""),
		Name: func(k string) string { return settingName(cfg.Flavour, k) }}
	if rep.State == gate.GroupStable {
		s.GroupProtocol = rep.Protocol
	}
	seen := map[string]bool{}
	for _, m := range rep.Members {
		switch {
		case m.URL == "":
		case m.URL == cfg.AdvertisedURL:
			// Another process advertising our address, or this worker's
			// previous life not yet timed out of the group: only the
			// former answers there before our exec.
			if listening(m.URL) {
				s.SharedURL = append(s.SharedURL, fmt.Sprintf("member %s (client host %s), and something answers on that address already", m.MemberID, m.ClientHost))
			}
		case !seen[m.URL]:
			seen[m.URL] = true
			if p, ok := registeredPeer(cfg, rep, m.URL); ok {
				s.Peers = append(s.Peers, p)
			}
		}
	}
	return parity.Results(s)
}

// registeredPeer is the live member at u as the cluster registry knows
// it: registered for our Connect cluster (same config topic), with its
// fingerprint (nil when its connect-init predates it). A member the
// registry does not know is the group gate's to judge, not compared here.
func registeredPeer(cfg *settings.Config, rep *gate.GroupReport, u string) (parity.Peer, bool) {
	if rep.Identity == nil || rep.Identity.Registry == nil {
		return parity.Peer{}, false
	}
	w := rep.Identity.Registry.WorkerByURL(u)
	if w == nil || w.GroupID != cfg.GroupID || w.ConfigTopic != configTopic(cfg) {
		return parity.Peer{}, false
	}
	return parity.Peer{URL: u, Host: w.Host, Settings: w.Settings}, true
}

func configTopic(cfg *settings.Config) string {
	for _, t := range cfg.Topics {
		if t.Role == settings.RoleConfig {
			return t.Name
		}
	}
	return ""
}

// settingName names a worker setting as this image sets it:
// "value.converter (CONNECT_VALUE_CONVERTER)".
func settingName(f workerconfig.Flavour, k string) string {
	switch k {
	case parity.KeyProviderClasses, parity.KeyVersion, parity.KeyAdvertisedURL:
		return k
	}
	if v := workerconfig.EnvNameFor(f, k); v != "" && f.UsesEnv() {
		return k + " (" + v + ")"
	}
	return k
}

// listenTimeout bounds the connect to this worker's own advertised
// address.
const listenTimeout = 2 * time.Second

// listening reports whether something accepts TCP connections on rawURL's
// host and port. A refused or unanswered connect is false.
func listening(ctx context.Context, rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return false
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	ctx, cancel := context.WithTimeout(ctx, listenTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

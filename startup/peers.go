package startup

import (
	"context"
	"crypto/tls"
	"log/slog"
	"strings"
	"time"

	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/gate/peers"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/lock"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

// CheckPeers runs the last gates before the exec, with a fresh timeout
// since the wait for the startup lock may have been long: when group is
// nil (we waited for the lock), the group identity check again (a foreign
// worker may have joined meanwhile); then the peer check with the group's
// current members, leader first, and the startup-lock queue. clk paces the
// group gate and times the check.
func CheckPeers(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, group *gate.GroupReport, queued []string, log *slog.Logger, clk clock.Clock) error {
	clk = clock.Or(clk)
	ctx, cancel := context.WithTimeout(ctx, cfg.Settings.Timeout)
	defer cancel()
	if group == nil {
		var err error
		gg := gate.NewGroupGate(cfg, clients, log, clk)
		gg.UntilCalm = true
		if group, err = gg.Check(ctx); err != nil {
			return err
		}
	}
	own, tlsCfg := cfg.AdvertisedURL, cfg.RESTClientTLS // derived by the settings gate
	self, err := selfProbe(cfg)
	if err != nil {
		return err
	}
	urls := proto.LeaderFirstURLs(group.Decoded)
	var leader string
	var members []string
	for _, u := range urls {
		if u == group.LeaderURL && leader == "" {
			leader = u
			continue
		}
		members = append(members, u)
	}
	start := clk.Now()
	queued = inGroup(queued, urls, log)
	pg := peerGate(cfg, tlsCfg, self, log, clk)
	pg.Left = leftGroup(gate.NewGroupGate(cfg, clients, log, clk).MemberURLs)
	rep, err := pg.Check(ctx, own, leader, members, queued)
	if err != nil {
		return err
	}
	log.Info("peers checked", "own_url", own, "peers", len(rep.Peers), "warnings", rep.Warned, "took", clk.Now().Sub(start).Round(time.Millisecond).String())
	return nil
}

// peerRetry paces the peers step's rounds (the self-probe's, a peer's
// resolution and GET /): the package's default of 1 s made a self-probe
// that missed once (overlay DNS a moment behind) cost a whole second; a
// round on a new connection is cheap, so look again sooner.
const peerRetry = 200 * time.Millisecond

// peerWarnWait bounds a warn-level peer: warnings must not hold the
// worker back for long, so a peer that does not answer within it is
// reported and the worker starts.
const peerWarnWait = 10 * time.Second

// peerGate is the peers gate as the start-up runs it.
func peerGate(cfg *settings.Config, tlsCfg *tls.Config, self peers.SelfProbe, log *slog.Logger, clk clock.Clock) peers.Gate {
	return peers.Gate{Policy: cfg.Settings.PeerCheck, Peers: cfg.Settings.Peers, TLS: tlsCfg, Auth: cfg.Settings.RESTAuth(), Self: self, Log: log, Clock: clk,
		WarnWait: peerWarnWait, RetryInterval: peerRetry}
}

// inGroup keeps the lock queue's ready holders that are members of the
// group now (members: the group's current URLs, read after the wait for
// the lock). A holder released as ready that is no longer in the group has
// left it (in a rolling update, often the worker just replaced): probing
// it would hold this worker for the whole warning wait (peerWarnWait) for
// an answer that cannot come. The members themselves are probed anyway.
func inGroup(queued, members []string, log *slog.Logger) []string {
	in := map[string]bool{}
	for _, m := range members {
		in[urlKey(m)] = true
	}
	var out []string
	for _, q := range queued {
		if in[urlKey(q)] {
			out = append(out, q)
			continue
		}
		log.Info("REST peer not probed", "url", q, "source", string(peers.SourceLockQueue), "why", "released as ready, but not a member of the group now (it left)")
	}
	return out
}

// leftLook bounds one look at the group for peers.Gate.Left, so that a
// slow coordinator delays a peer's next round by little.
const leftLook = 2 * time.Second

// leftGroup is peers.Gate.Left over memberURLs (gate.GroupGate.MemberURLs):
// a URL has left when a look at the group that shows every member's URL
// does not have it (compared as urlKey compares). The group gate read the
// members before the peers step; a worker stopped since (in a restart,
// often the one this worker replaces) leaves the group as it stops, and
// no answer can come from it. A look that cannot tell (the group between
// two generations) says not left: the peer is waited for as before.
func leftGroup(memberURLs func(context.Context) ([]string, bool)) func(context.Context, string) bool {
	return func(ctx context.Context, url string) bool {
		lctx, cancel := context.WithTimeout(ctx, leftLook)
		defer cancel()
		urls, ok := memberURLs(lctx)
		if !ok {
			return false
		}
		for _, u := range urls {
			if urlKey(u) == urlKey(url) {
				return false
			}
		}
		return true
	}
}

// urlKey compares advertised URLs as Connect writes them ("http://h:8083/")
// and as the lock queue holds them: case and a trailing slash aside.
func urlKey(u string) string { return strings.ToLower(strings.TrimRight(u, "/")) }

// releaseReady is the release reason a holder's own readiness check writes
// (lock/ready.go); a hold lease expiry writes "hold lease expired".
const releaseReady = "ready"

// releasedAsReady are the URLs of the lock queue's holders released as
// ready, other than own: only they are expected to answer. A holder whose
// hold lease expired never got ready (it may have crashed), and probing it
// would hold this worker back for the peer check's whole warning wait.
func releasedAsReady(entries []lock.Entry, own string) []string {
	var ready []string
	for _, e := range entries {
		if e.URL != "" && e.URL != own && e.State == lock.StateReleased && e.ReleaseReason == releaseReady {
			ready = append(ready, e.URL)
		}
	}
	return ready
}

// selfProbe binds the listener the worker advertises, as the worker will
// bind it, served over https with the worker's own key store when the
// listener is https. Nothing is read when the peer check is off.
func selfProbe(cfg *settings.Config) (peers.SelfProbe, error) {
	if cfg.Settings.PeerCheck == "off" {
		return peers.SelfProbe{}, nil
	}
	l, err := workerconfig.AdvertisedListener(cfg.Worker)
	if err != nil {
		return peers.SelfProbe{}, err
	}
	sp := peers.SelfProbe{Listen: l.Address(), Listeners: cfg.Worker.Get("listeners", "http://:8083 (the default)"), HTTPS: l.Scheme == "https"}
	if sp.HTTPS {
		sp.ServerTLS = cfg.RESTServerTLS // derived by the settings gate
	}
	return sp, nil
}

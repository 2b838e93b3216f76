package startup

import (
	"context"
	"log/slog"
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
	// Warnings must not hold the worker back for long: a peer that does not
	// answer within 10 s is reported and the worker starts.
	gate := peers.Gate{Policy: cfg.Settings.PeerCheck, Peers: cfg.Settings.Peers, TLS: tlsCfg, Auth: cfg.Settings.RESTAuth(), Self: self, Log: log, Clock: clk, WarnWait: 10 * time.Second}
	rep, err := gate.Check(ctx, own, leader, members, queued)
	if err != nil {
		return err
	}
	log.Info("peers checked", "own_url", own, "peers", len(rep.Peers), "warnings", rep.Warned, "took", clk.Now().Sub(start).Round(time.Millisecond).String())
	return nil
}

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

package gate

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/connect/registry"
	"github.com/connect-init/connect-init/connect/store"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
)

// Group states as DescribeGroups reports them for a classic group.
const (
	GroupStable              = "Stable"
	GroupEmpty               = "Empty"
	GroupDead                = "Dead"
	GroupPreparingRebalance  = "PreparingRebalance"
	GroupCompletingRebalance = "CompletingRebalance"
	// GroupNotFound is what GroupReport.State says when the coordinator
	// does not know the group at all (GROUP_ID_NOT_FOUND): nothing uses
	// the group.id yet.
	GroupNotFound = "NotFound"
)

// Defaults of the group gate.
const (
	// DefaultStableWait bounds how long the gate waits for a Stable
	// snapshot of a rebalancing group: long enough for an ordinary
	// rebalance (Connect's rebalance.timeout.ms is 60s, but most finish in
	// seconds), short enough not to eat the whole startup timeout.
	DefaultStableWait = 30 * time.Second
	// DefaultSettleWait is how long the gate watches a Stable group that
	// runs none of the connectors our config topic created since its
	// assignment: a cluster reading our config topic rebalances within
	// moments of a connector's creation (DistributedHerder wakes its
	// member on the config update), so a group still Stable at the same
	// offset after this long is not reading it.
	DefaultSettleWait = 5 * time.Second
	// defaultGroupPoll is the pause between two DescribeGroups while the
	// group rebalances. A group caught in incident 1's loop is Stable only
	// for the moments between a SyncGroup and the next forced rejoin, so the
	// gate polls quickly to see one of them.
	defaultGroupPoll = 100 * time.Millisecond
)

// GroupGate is the group gate's identity check: before our
// worker joins, every current member of the worker group gets a verdict
// (ours, foreign, unverified; identity.go lists the rules and the
// Connect source behind each), and the gate refuses when any member is
// foreign or the cluster registry gives the group to another Connect
// cluster. A member reading another config topic (another Connect cluster
// with the same group.id, or a stale worker) makes one of the two clusters
// force rebalances forever (incident 1): ours when its topic is longer, its
// own when ours is (issue 13). The gate only reads until the verdict; with
// Identity.Register it then registers this worker.
type GroupGate struct {
	// Admin describes the group when Client is nil.
	Admin sarama.ClusterAdmin
	// Client finds the coordinator and the config topic's leader.
	Client      sarama.Client
	GroupID     string
	ConfigTopic string
	Log         *slog.Logger
	Clock       clock.Clock
	// StableWait bounds the wait for a Stable snapshot of a rebalancing
	// group (default DefaultStableWait; ctx bounds it too). Metadata and
	// assignments are only visible while the group is Stable.
	StableWait time.Duration
	// SyncTimeout is this worker's worker.sync.timeout.ms, taken for the
	// group's (BehindForSync); 0 is Connect's default.
	SyncTimeout time.Duration
	// PollEvery is the pause between looks while the group rebalances
	// (default 100ms).
	PollEvery time.Duration
	// Identity turns on the cluster-identity rules (registry and Connect's
	// own records); nil leaves only the offset rules.
	Identity *Identity
	// SettleWait is how long a Stable group must stay at the same
	// assignment offset before connectors we created after that offset
	// count as evidence (default DefaultSettleWait).
	SettleWait time.Duration
	// ConfirmEvery and StormWindow shape the window of looks after the
	// first Stable snapshot (window.go; defaults DefaultConfirmEvery and
	// DefaultStormWindow). UntilCalm watches a storm with no member to
	// blame until ctx's deadline, so run waits for calm; doctor does not.
	ConfirmEvery, StormWindow time.Duration
	UntilCalm                 bool
	// BeforeRegister, when set, is the caller's own rule over the judged
	// report (run's settings parity), run after the group rules passed and
	// before this worker's registration is written, so that a refused
	// worker leaves no record in the cluster registry.
	BeforeRegister func(ctx context.Context, rep *GroupReport) error

	// coordinator is the coordinator the brokers step found
	// (UseCoordinator): DescribeGroups goes to it without asking sarama's
	// client, which would ask FindCoordinator again. Dropped at the first
	// failed answer, after which the client looks it up as before.
	coordinator atomic.Pointer[FoundCoordinator]

	// describeFn, offsetsFn, identityFn and registerFn replace the Kafka
	// calls in unit tests.
	describeFn func(ctx context.Context) (*sarama.GroupDescription, error)
	offsetsFn  func(ctx context.Context) (hw, lso int64, err error)
	identityFn func(ctx context.Context, rep *GroupReport) *identityInputs
	// configFn replaces the window's read of our config topic
	// (rejoinLookup) in unit tests.
	configFn   func(ctx context.Context) (*store.ConfigLog, error)
	registerFn func(ctx context.Context, me registry.Cluster, claim bool) (*registry.Registration, error)
}

// Check looks at the group until it sees a Stable (or Empty, Dead,
// unknown) snapshot or StableWait passes, then reads our config topic's end
// offsets and judges the members with proto.FindForeign (and, with
// Identity, the identity rules). It returns the refusal decideGroup makes,
// a *GateError (gate "group") naming what is wrong and the checks' fix; the
// report is returned in every case where a snapshot was read.
func (g *GroupGate) Check(ctx context.Context) (*GroupReport, error) {
	clk := clock.Or(g.Clock)
	log := g.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	describe := g.describeFn
	if describe == nil {
		describe = g.describe
	}
	offsets := g.offsetsFn
	if offsets == nil {
		offsets = g.ConfigEndOffsets
	}
	ww := newWindowWatch(clk.Now(), BehindForSync(g.SyncTimeout))
	ww.rejoin = g.rejoinLookup(ctx)
	snap, err := g.waitSnapshot(ctx, ww, describe, clk, log)
	if err != nil {
		return nil, err
	}
	desc, window := g.watchWindow(ctx, ww, snap.desc, describe, clk, log)
	snap.desc = desc
	snap.count = ww.w.Samples
	// The end offsets are read after the snapshot, so they can only be
	// larger than what the snapshot's members could have read from our
	// topic: no false "ahead" from a record written in between.
	rep := NewGroupReport(g.GroupID, g.ConfigTopic, snap.desc)
	rep.Snapshots = snap.count
	rep.Waited = snap.waited
	rep.Window = window
	ahead := g.registryAhead(ctx)
	defer ahead.Stop()
	type ends struct{ hw, lso int64 }
	e, err := lookAgain(ctx, clk, log, step.Group, "the end offset of config topic "+g.ConfigTopic, g.UntilCalm, func() (ends, error) {
		hw, lso, err := offsets(ctx)
		return ends{hw, lso}, err
	})
	hw, lso := e.hw, e.lso
	if err != nil {
		rep.ConfigEndOffset, rep.ConfigStableOffset = -1, -1
		rep.ConfigOffsetsError = err.Error()
	} else {
		rep.ConfigEndOffset, rep.ConfigStableOffset = hw, lso
	}
	if !rep.StableSeen {
		rep.Note = fmt.Sprintf("no Stable snapshot of the group within %s (%d looks; the latest is %s with %d members): the members' config offsets are only visible while the group is Stable, so this decision rests on the latest snapshot and could not check them",
			snap.waited.Round(time.Millisecond), snap.count, rep.State, len(rep.Members))
		log.Warn("no Stable snapshot of the worker group", "group", g.GroupID, "note", rep.Note)
	}
	rep.judge()
	if g.Identity != nil {
		if err := g.identify(ctx, rep, ahead, describe, clk, log); err != nil {
			return rep, err
		}
	} else if err := decideGroup(rep, GroupResults(rep, "", false)); err != nil {
		return rep, err
	}
	log.Info("worker group checked", "group", g.GroupID, "state", rep.State, "protocol", rep.Protocol,
		"members", len(rep.Members), "leader", rep.LeaderURL, "assignment_offset", offsetOrNull(rep.AssignmentOffset),
		"config_end_offset", rep.ConfigEndOffset, "stable_seen", rep.StableSeen,
		"ours", rep.countVerdict(VerdictOurs), "foreign", rep.countVerdict(VerdictForeign), "unverified", rep.countVerdict(VerdictUnverified))
	return rep, nil
}

// groupSnapshot is the description the group gate judges, with how many
// looks it took and how long.
type groupSnapshot struct {
	desc   *sarama.GroupDescription
	count  int
	waited time.Duration
}

// waitSnapshot describes the group until it is settled (Stable, Empty or
// Dead) or StableWait passes, logging every 5 s; it fails only when no
// description arrived at all, or ctx ended first.
func (g *GroupGate) waitSnapshot(ctx context.Context, ww *windowWatch, describe func(context.Context) (*sarama.GroupDescription, error), clk clock.Clock, log *slog.Logger) (groupSnapshot, error) {
	wait := g.StableWait
	if wait <= 0 {
		wait = DefaultStableWait
	}
	poll := g.PollEvery
	if poll <= 0 {
		poll = defaultGroupPoll
	}
	start := clk.Now()
	lastLog := start
	var snap groupSnapshot
	var lastErr error
	for {
		d, err := describe(ctx)
		if err == nil {
			snap.desc, lastErr = d, nil
			snap.count++
			ww.observe(g, d, clk.Now())
			if settled(d.State) {
				break
			}
		} else {
			lastErr = err
			if !kafka.NotYet(err) && ctx.Err() == nil {
				// GROUP_AUTHORIZATION_FAILED and the like: waiting cannot
				// change the answer.
				break
			}
		}
		elapsed := clk.Now().Sub(start)
		// No description yet and the coordinator still loading or moving
		// (COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR...): run looks
		// again until its timeout, not only for StableWait.
		if elapsed >= wait && !(g.UntilCalm && snap.desc == nil && lastErr != nil) {
			break
		}
		if clk.Now().Sub(lastLog) >= 5*time.Second {
			if snap.desc != nil && lastErr == nil {
				log.Info("waiting for a Stable snapshot of the worker group", "group", g.GroupID, "state", snap.desc.State,
					"members", len(snap.desc.Members), "waited", elapsed.Round(time.Second).String(), "max_wait", wait.String())
			} else {
				log.Info("waiting to describe the worker group", "gate", step.Group, "group", g.GroupID, "waiting_for", "the group's coordinator to answer DescribeGroups", "error", kafka.ExplainConnError(lastErr))
			}
			lastLog = clk.Now()
		}
		select {
		case <-ctx.Done():
		case <-clk.After(poll):
		}
		if ctx.Err() != nil {
			cause := "the time is up"
			if lastErr != nil {
				cause = kafka.ExplainConnError(lastErr)
			}
			return snap, &GateError{Gate: step.Group, Err: fmt.Errorf("describe worker group %q: %s (%w)", g.GroupID, cause, ctx.Err())}
		}
	}
	snap.waited = clk.Now().Sub(start)
	if snap.desc == nil {
		return snap, &GateError{Gate: step.Group, Err: fmt.Errorf("describe worker group %q: %s", g.GroupID, kafka.ExplainConnError(lastErr)),
			Fix: "the group's coordinator must answer DescribeGroups; check the brokers' logs and that this principal may DESCRIBE the group"}
	}
	return snap, nil
}

// settled reports whether a state needs no waiting: Stable shows the
// members' metadata; Empty, Dead and unknown groups have no members.
func settled(state string) bool {
	switch state {
	case GroupStable, GroupEmpty, GroupDead, GroupNotFound, "":
		return true
	}
	return false
}

// NewGroupGate returns the group identity gate for cfg's worker group and
// config topic, using the shared clients (Member finds the coordinator and
// reads offsets, as the worker itself would), with the cluster-identity
// rules on and read-only: set Identity.Register to write the registry.
func NewGroupGate(cfg *settings.Config, clients *kafka.Clients, log *slog.Logger, clock clock.Clock) *GroupGate {
	return &GroupGate{Admin: clients.Admin, Client: clients.Member, GroupID: cfg.GroupID, ConfigTopic: cfg.ConfigTopic().Name,
		Log: log, Clock: clock, Identity: NewIdentity(cfg, clients, false), SyncTimeout: cfg.WorkerSyncTimeout}
}

package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/proto"
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

// GroupReport is what the group identity gate saw: one snapshot of the
// worker group (the first Stable one, or the latest if none was Stable in
// time) and the end offsets of our config topic. Offsets that could not be
// read are -1.
type GroupReport struct {
	GroupID string `json:"group_id"`
	// State is the group state of the snapshot decided on (Stable, Empty,
	// Dead, PreparingRebalance, CompletingRebalance, or NotFound).
	State string `json:"state"`
	// ProtocolType is "connect" for a Connect worker group; anything else
	// means the group.id is used by something else (a consumer group).
	ProtocolType string `json:"protocol_type"`
	// Protocol is the selected group protocol (default, compatible,
	// sessioned); empty unless the group is Stable.
	Protocol string `json:"protocol"`
	// StableSeen is true when the snapshot decided on was Stable (or the
	// group was Empty, Dead or unknown, which need no waiting). When false,
	// members' metadata was not available and the decision rests on the
	// latest snapshot; Note says so.
	StableSeen bool `json:"stable_seen"`
	// Snapshots is how many DescribeGroups answers were read.
	Snapshots int `json:"snapshots"`
	// Waited is how long the gate waited for a Stable snapshot.
	Waited time.Duration `json:"waited_ns"`
	// LeaderID and LeaderURL name the leader that computed the current
	// assignments (from the first decoded assignment); empty if unknown.
	LeaderID  string `json:"leader_id,omitempty"`
	LeaderURL string `json:"leader_url,omitempty"`
	// AssignmentOffset is the highest config offset any member's
	// assignment was computed at: what the leader asks every member to
	// reach (-1 is a real value: the leader had read nothing). Null when no
	// assignment was decoded.
	AssignmentOffset *int64 `json:"assignment_offset"`
	// Members are sorted by member id.
	Members []GroupMember `json:"members"`
	// ConfigTopic is our config topic, whose end offsets follow.
	ConfigTopic string `json:"config_topic"`
	// ConfigEndOffset is the high watermark of the config topic's only
	// partition (ListOffsets latest, read_uncommitted): the offset the next
	// record will get, and the highest offset a caught-up worker reports.
	ConfigEndOffset int64 `json:"config_end_offset"`
	// ConfigStableOffset is the last stable offset (ListOffsets latest,
	// read_committed). It is below ConfigEndOffset while a transaction on
	// the config topic is open; a worker reading committed cannot get past it.
	ConfigStableOffset int64 `json:"config_last_stable_offset"`
	// ConfigOffsetsError says why the end offsets are -1 (the topic does not
	// exist, no leader...).
	ConfigOffsetsError string `json:"config_offsets_error,omitempty"`
	// Foreign lists the members that cannot belong to our Connect cluster.
	Foreign []ForeignMember `json:"foreign"`
	// Note explains a decision taken without a Stable snapshot.
	Note string `json:"note,omitempty"`
	// Window is what the looks after the first Stable snapshot saw
	// (window.go); null when the group was not Stable.
	Window *GroupWindow `json:"window,omitempty"`
	// Identity is what the cluster-identity rules read (registry, our
	// config and status topics); null when they are off.
	Identity *IdentityReport `json:"identity,omitempty"`
	// Verdicts has one verdict per member (ours, foreign, unverified) with
	// the rule and evidence; empty when the identity rules are off.
	Verdicts []MemberVerdict `json:"verdicts"`

	// Decoded are the members as connect/proto sees them, for callers that
	// need more than the JSON view (peer checks).
	Decoded []proto.Member `json:"-"`
	// Config is our config topic as the identity rules read it (nil when
	// they did not: no members, identity off, or the read failed), so that
	// the plugins step and doctor take the connectors' configurations from
	// the same read instead of reading the topic again.
	Config *store.ConfigLog `json:"-"`
}

// GroupMember is one member of the worker group with its Connect metadata
// and assignment decoded.
type GroupMember struct {
	MemberID   string `json:"member_id"`
	InstanceID string `json:"group_instance_id,omitempty"`
	ClientID   string `json:"client_id"`
	// ClientHost is the address the coordinator saw the member connect
	// from ("/10.0.0.7"): the way to find a process that advertises a URL
	// nobody recognises.
	ClientHost string `json:"client_host"`
	// URL is the advertised REST URL from the member metadata.
	URL string `json:"url,omitempty"`
	// ProtocolVersion is the version in the member metadata header.
	ProtocolVersion *int16 `json:"protocol_version,omitempty"`
	// ConfigOffset is the config offset the member reported when it joined
	// (-1: it had read nothing); null when its metadata is unknown.
	ConfigOffset *int64 `json:"config_offset"`
	// Leader is true for the member that computed the assignments.
	Leader bool `json:"leader"`
	// Assignment is the member's assignment, null when none was decoded.
	Assignment *MemberAssignment `json:"assignment"`
	// MetadataError and AssignmentError say why bytes did not decode;
	// empty bytes (no Stable snapshot, no assignment yet) are not errors.
	MetadataError   string `json:"metadata_error,omitempty"`
	AssignmentError string `json:"assignment_error,omitempty"`
}

// MemberAssignment is the decoded assignment of one member. Under the
// cooperative protocols (compatible, sessioned) Connectors and Tasks are
// what this rebalance newly assigned, not everything the member runs.
type MemberAssignment struct {
	Version int16 `json:"version"`
	// Error is 0, or 1 (CONFIG_MISMATCH: the leader could not read its
	// config topic up to the highest offset a member reported).
	Error        int16  `json:"error"`
	LeaderID     string `json:"leader_id"`
	LeaderURL    string `json:"leader_url"`
	ConfigOffset int64  `json:"config_offset"`
	// Connectors and Tasks ("<connector>-<n>") assigned.
	Connectors []string `json:"connectors"`
	Tasks      []string `json:"tasks"`
	// RevokedConnectors and RevokedTasks must be stopped (v1+).
	RevokedConnectors []string `json:"revoked_connectors,omitempty"`
	RevokedTasks      []string `json:"revoked_tasks,omitempty"`
	// DelayMs is the scheduled rebalance delay (v1+).
	DelayMs int32 `json:"delay_ms"`
}

// ForeignMember is a member that cannot belong to our Connect cluster, with
// the evidence.
type ForeignMember struct {
	MemberID   string `json:"member_id"`
	ClientID   string `json:"client_id"`
	ClientHost string `json:"client_host"`
	URL        string `json:"url,omitempty"`
	// ConfigOffset is the offset it reported, null if unknown.
	ConfigOffset *int64 `json:"config_offset"`
	// AssignmentOffset is the config offset of its assignment, null if none.
	AssignmentOffset *int64 `json:"assignment_offset"`
	// OurEndOffset is our config topic's end offset it was judged against.
	OurEndOffset int64 `json:"our_config_end_offset"`
	// Reasons are connect/proto's stable reason ids (protocol-type,
	// config-offset-ahead, assignment-offset-ahead, undecodable).
	Reasons []string `json:"reasons"`
	// Message is the one-line explanation.
	Message string `json:"message"`
}

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
	ww := newWindowWatch(clk.Now())
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

func (r *GroupReport) countVerdict(v string) int {
	n := 0
	for _, x := range r.Verdicts {
		if x.Verdict == v {
			n++
		}
	}
	return n
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

// NewGroupReport decodes one snapshot of the group, without the gate's
// waits and reads (for a look that needs only the members and the leader,
// such as the in-run watcher's turn). End offsets are left at -1.
func NewGroupReport(groupID, configTopic string, desc *sarama.GroupDescription) *GroupReport {
	rep := &GroupReport{
		GroupID: groupID, State: desc.State, ProtocolType: desc.ProtocolType, Protocol: desc.Protocol,
		ConfigTopic: configTopic, ConfigEndOffset: -1, ConfigStableOffset: -1,
		Members: []GroupMember{}, Foreign: []ForeignMember{},
	}
	rep.StableSeen = settled(desc.State)
	ids := make([]string, 0, len(desc.Members))
	for id := range desc.Members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		md := desc.Members[id]
		m := proto.Member{MemberID: md.MemberId, ClientID: md.ClientId, ClientHost: md.ClientHost,
			ProtocolType: desc.ProtocolType, Protocol: desc.Protocol}
		if m.MemberID == "" {
			m.MemberID = id
		}
		m.Decode(md.MemberMetadata, md.MemberAssignment)
		rep.Decoded = append(rep.Decoded, m)
		gm := GroupMember{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost}
		if md.GroupInstanceId != nil {
			gm.InstanceID = *md.GroupInstanceId
		}
		if m.Metadata != nil {
			v, off := m.Metadata.Version, m.Metadata.ConfigOffset
			gm.URL, gm.ProtocolVersion, gm.ConfigOffset = m.Metadata.URL, &v, &off
		} else if m.MetadataErr != nil && !errors.Is(m.MetadataErr, proto.ErrEmpty) {
			gm.MetadataError = m.MetadataErr.Error()
		}
		if a := m.Assignment; a != nil {
			gm.Assignment = &MemberAssignment{Version: a.Version, Error: a.Error, LeaderID: a.Leader, LeaderURL: a.LeaderURL,
				ConfigOffset: a.ConfigOffset, Connectors: nonNil(a.Connectors), Tasks: taskNames(a.Tasks),
				RevokedConnectors: a.RevokedConnectors, RevokedTasks: taskNamesOrNil(a.RevokedTasks), DelayMs: a.Delay}
			if rep.AssignmentOffset == nil || a.ConfigOffset > *rep.AssignmentOffset {
				off := a.ConfigOffset
				rep.AssignmentOffset = &off
			}
			if rep.LeaderID == "" && a.Leader != "" {
				rep.LeaderID, rep.LeaderURL = a.Leader, a.LeaderURL
			}
		} else if m.AssignmentErr != nil && !errors.Is(m.AssignmentErr, proto.ErrEmpty) {
			gm.AssignmentError = m.AssignmentErr.Error()
		}
		rep.Members = append(rep.Members, gm)
	}
	for i := range rep.Members {
		rep.Members[i].Leader = rep.LeaderID != "" && rep.Members[i].MemberID == rep.LeaderID
	}
	return rep
}

// judge fills Foreign from the decoded members and the config end offset.
func (r *GroupReport) judge() {
	r.Foreign = []ForeignMember{}
	for _, f := range proto.FindForeign(r.Decoded, r.ConfigEndOffset) {
		fm := ForeignMember{MemberID: f.Member.MemberID, ClientID: f.Member.ClientID, ClientHost: f.Member.ClientHost,
			URL: f.Member.URL(), OurEndOffset: f.OurEndOffset, Message: f.Message}
		if f.Member.Metadata != nil {
			off := f.Member.Metadata.ConfigOffset
			fm.ConfigOffset = &off
		}
		if f.Member.Assignment != nil {
			off := f.Member.Assignment.ConfigOffset
			fm.AssignmentOffset = &off
		}
		for _, reason := range f.Reasons {
			fm.Reasons = append(fm.Reasons, string(reason))
		}
		r.Foreign = append(r.Foreign, fm)
	}
	r.judgeStuckBehind(nil)
}

// forcing is the member and the offsets by which it keeps the group
// rebalancing, for the storm's evidence.
func (f ForeignMember) forcing() string {
	return fmt.Sprintf("member %q (%s, client host %s) reported config offset %s with the assignment at %s [rule %s]",
		f.MemberID, orUnknown(f.URL), orUnknown(f.ClientHost), offsetText(f.ConfigOffset), offsetText(f.AssignmentOffset), strings.Join(f.Reasons, ", "))
}

func offsetText(p *int64) string {
	if p == nil {
		return "unknown"
	}
	return fmt.Sprint(*p)
}

// judgeStuckBehind adds as foreign (RuleStuckBehind; the one place that
// rule is applied) each member the window proved not to read our config
// topic, unless another rule already named it. Two observations prove it:
//   - the member reported the same config offset, behind the assignment's,
//     in Stable snapshots with rebalances between them (Window.StuckBehind);
//   - it stayed behind for BehindFor in a Stable, unchanging group
//     (Window.Behind) while our config topic, cfg, holds between its offset
//     and the assignment's a record that makes every worker reading it
//     rejoin (store.ConfigLog.RejoinRecord): a worker of ours would have
//     read it and rejoined with a higher offset.
//
// The second needs our config topic read: judge runs this with cfg nil,
// the identity rules again with the topic they read. Behind an assignment
// our config topic cannot reach is where our own workers are when the
// leader follows another topic: the offset rules name that leader's
// cluster instead.
func (r *GroupReport) judgeStuckBehind(cfg *store.ConfigLog) {
	if r.Window == nil {
		return
	}
	named := map[string]bool{}
	for _, f := range r.Foreign {
		named[f.MemberID] = true
	}
	add := func(m StuckMember, msg string) {
		named[m.MemberID] = true
		off, asg := m.ConfigOffset, m.AssignmentOffset
		r.Foreign = append(r.Foreign, ForeignMember{MemberID: m.MemberID, ClientHost: m.ClientHost, URL: m.URL,
			ConfigOffset: &off, AssignmentOffset: &asg, OurEndOffset: r.ConfigEndOffset, Reasons: []string{RuleStuckBehind}, Message: msg})
	}
	judged := func(m StuckMember) bool {
		return named[m.MemberID] || r.ConfigEndOffset < 0 || m.AssignmentOffset > r.ConfigEndOffset
	}
	for _, s := range r.Window.StuckBehind {
		if judged(s) {
			continue
		}
		add(s, fmt.Sprintf("group member %q (advertised URL %s, client host %s) reported config offset %d, behind the assignment's %d, across %d rebalances in %s: a worker reading our config topic %q reads it to its end before it rejoins (DistributedHerder.handleRebalanceCompleted, readConfigToEnd) and would have reported at least %d; this one reads another config topic and forces the rebalances (\"does not match group assignment ... Forcing rebalance\")",
			s.MemberID, orUnknown(s.URL), orUnknown(s.ClientHost), s.ConfigOffset, s.AssignmentOffset, s.Rebalances, r.Window.Span.Round(time.Millisecond), r.ConfigTopic, s.AssignmentOffset))
	}
	if cfg == nil {
		return
	}
	for _, b := range r.Window.Behind {
		if judged(b) || b.For < BehindFor {
			continue
		}
		rec := cfg.RejoinRecord(b.ConfigOffset, b.AssignmentOffset)
		if rec == nil {
			continue
		}
		add(b, fmt.Sprintf("group member %q (advertised URL %s, client host %s) reported config offset %d, behind the assignment's %d, for %s of a Stable group, "+
			"though our config topic %q holds at offset %d a %s record of connector %q that makes every worker reading it rejoin with its new offset "+
			"(DistributedHerder.ConfigUpdateListener: needsReconfigRebalance): it does not read our config topic, and rejoins in a loop (\"does not match group assignment ... Forcing rebalance\")",
			b.MemberID, orUnknown(b.URL), orUnknown(b.ClientHost), b.ConfigOffset, b.AssignmentOffset, b.For.Round(100*time.Millisecond), cfg.Topic, rec.Offset, rec.Kind, rec.Connector))
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func taskNames(ts []proto.TaskID) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.String())
	}
	return out
}

func taskNamesOrNil(ts []proto.TaskID) []string {
	if len(ts) == 0 {
		return nil
	}
	return taskNames(ts)
}

// describe sends DescribeGroups for the group to its coordinator, found
// with Client (refreshed when the coordinator moved) or, without a Client,
// through Admin. A group the coordinator does not know is reported with
// state NotFound rather than as an error.
func (g *GroupGate) describe(ctx context.Context) (d *sarama.GroupDescription, err error) {
	var groups []*sarama.GroupDescription
	if g.Client == nil {
		var err error
		if groups, err = g.Admin.DescribeConsumerGroups([]string{g.GroupID}); err != nil {
			return nil, fmt.Errorf("describe group %q: %w", g.GroupID, err)
		}
	} else {
		coord, err := g.coordinatorBroker()
		if err != nil {
			return nil, fmt.Errorf("find coordinator of group %q: %w", g.GroupID, err)
		}
		// bounded, not a Close when ctx ends: the client is shared with
		// the other role (issue 48), and sarama's Close waits for the
		// request's read timeout anyway, then kills the connection under
		// whoever else uses it.
		resp, err := bounded(ctx, func() (*sarama.DescribeGroupsResponse, error) {
			return coord.DescribeGroups(&sarama.DescribeGroupsRequest{Version: 5, Groups: []string{g.GroupID}})
		})
		if err != nil {
			g.coordinator.Store(nil)
			if ctx.Err() == nil {
				_ = g.Client.RefreshCoordinator(g.GroupID)
			}
			return nil, fmt.Errorf("describe group %q at coordinator %d (%s): %w", g.GroupID, coord.ID(), coord.Addr(), err)
		}
		groups = resp.Groups
	}
	defer func() {
		if err != nil {
			g.coordinator.Store(nil)
		}
	}()
	for _, d := range groups {
		if d.GroupId != g.GroupID {
			continue
		}
		kerr := d.Err
		if kerr == sarama.ErrNoError && d.ErrorCode != 0 {
			kerr = sarama.KError(d.ErrorCode)
		}
		switch kerr {
		case sarama.ErrNoError:
			return d, nil
		case sarama.ErrGroupIDNotFound:
			return &sarama.GroupDescription{GroupId: g.GroupID, State: GroupNotFound}, nil
		case sarama.ErrNotCoordinatorForConsumer, sarama.ErrConsumerCoordinatorNotAvailable:
			if g.Client != nil {
				_ = g.Client.RefreshCoordinator(g.GroupID)
			}
		}
		return nil, fmt.Errorf("describe group %q: %w", g.GroupID, kerr)
	}
	return nil, fmt.Errorf("describe group %q: the coordinator's answer does not mention the group", g.GroupID)
}

// UseCoordinator makes DescribeGroups go to c, the coordinator the
// brokers step found (BrokerGate.FindCoordinator), until an answer fails.
func (g *GroupGate) UseCoordinator(c *FoundCoordinator) { g.coordinator.Store(c) }

// coordinatorBroker is the client's connection to the group's
// coordinator: the one UseCoordinator named, while the client knows that
// broker at that address, or the one sarama's client looks up.
func (g *GroupGate) coordinatorBroker() (*sarama.Broker, error) {
	if c := g.coordinator.Load(); c != nil {
		if b, err := g.Client.Broker(c.ID); err == nil && b.Addr() == c.Addr {
			return b, nil
		}
		g.coordinator.Store(nil)
	}
	return g.Client.Coordinator(g.GroupID)
}

// ConfigEndOffsets reads the config topic's partition 0 high watermark
// and last stable offset from its leader. They differ while a transaction
// on the config topic is open; doctor reads them again later to tell a
// hanging transaction from a short one.
//
// One fetch answers both (every fetch answer carries the partition's high
// watermark and last stable offset; read_committed, so the last stable
// offset is the one a read_committed consumer stops at), where two
// ListOffsets (read_uncommitted, then read_committed) were two round trips
// of every start (issue 39). The fetch asks for one byte from offset 0, so
// the answer holds at most the log's first batch. A log that no longer
// starts at 0, or an answer without a last stable offset, is read with the
// two ListOffsets.
func (g *GroupGate) ConfigEndOffsets(ctx context.Context) (hw, lso int64, err error) {
	if g.Client == nil {
		return -1, -1, errors.New("no client to read the config topic's offsets with")
	}
	// The leader the client knows (the topics step has just read the
	// topic's metadata; sarama reads it when it does not know it): a
	// refresh before every read was a round trip of every start (issue
	// 39). An answer that fails refreshes it for the next look.
	leader, err := g.Client.Leader(g.ConfigTopic, 0)
	if err != nil {
		return -1, -1, fmt.Errorf("leader of config topic %q partition 0: %w", g.ConfigTopic, err)
	}
	defer func() {
		if err != nil && ctx.Err() == nil {
			_ = g.Client.RefreshMetadata(g.ConfigTopic)
		}
	}()
	// bounded, not a Close when ctx ends: the connection is shared with
	// the other role (issue 48).
	e, err := bounded(ctx, func() ([2]int64, error) {
		hw, lso, err := g.endOffsetsAt(leader)
		return [2]int64{hw, lso}, err
	})
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("end offsets of config topic %q: %w", g.ConfigTopic, err)
		}
		return -1, -1, err
	}
	return e[0], e[1], nil
}

// endOffsetsAt reads the config topic's high watermark and last stable
// offset from its leader: one read_committed fetch, or the two
// ListOffsets when the fetch's answer cannot tell (ConfigEndOffsets).
func (g *GroupGate) endOffsetsAt(leader *sarama.Broker) (hw, lso int64, err error) {
	req := &sarama.FetchRequest{Version: 11, MaxWaitTime: 0, MinBytes: 0, MaxBytes: 1, Isolation: sarama.ReadCommitted}
	req.AddBlock(g.ConfigTopic, 0, 0, 1, -1)
	resp, err := leader.Fetch(req)
	if err != nil {
		return -1, -1, fmt.Errorf("end offsets of config topic %q: %w", g.ConfigTopic, err)
	}
	b := resp.GetBlock(g.ConfigTopic, 0)
	switch {
	case b == nil:
		return -1, -1, fmt.Errorf("end offsets of config topic %q: no answer for partition 0", g.ConfigTopic)
	case b.Err == sarama.ErrNoError && b.LastStableOffset >= 0:
		return b.HighWaterMarkOffset, b.LastStableOffset, nil
	case b.Err != sarama.ErrNoError && b.Err != sarama.ErrOffsetOutOfRange:
		return -1, -1, fmt.Errorf("end offsets of config topic %q: %w", g.ConfigTopic, b.Err)
	}
	read := func(level sarama.IsolationLevel) (int64, error) {
		req := sarama.NewOffsetRequest(sarama.MaxVersion)
		req.IsolationLevel = level
		req.AddBlock(g.ConfigTopic, 0, sarama.OffsetNewest, 1)
		resp, err := leader.GetAvailableOffsets(req)
		if err != nil {
			return -1, err
		}
		b := resp.GetBlock(g.ConfigTopic, 0)
		if b == nil {
			return -1, errors.New("no answer for partition 0")
		}
		if b.Err != sarama.ErrNoError {
			return -1, b.Err
		}
		if len(b.Offsets) > 0 && b.Offset == 0 {
			return b.Offsets[0], nil
		}
		return b.Offset, nil
	}
	if hw, err = read(sarama.ReadUncommitted); err != nil {
		return -1, -1, fmt.Errorf("end offset of config topic %q: %w", g.ConfigTopic, err)
	}
	if lso, err = read(sarama.ReadCommitted); err != nil {
		return -1, -1, fmt.Errorf("last stable offset of config topic %q: %w", g.ConfigTopic, err)
	}
	return hw, lso, nil
}

// MemberURLs looks at the group once and returns the REST URLs its
// members advertise. ok is false when the look cannot tell who the members
// are: the describe failed, or the group is between two generations
// (DescribeGroups hides the members' metadata unless the group is Stable).
// An Empty, Dead or unknown group has no members: ok, no URLs.
func (g *GroupGate) MemberURLs(ctx context.Context) (urls []string, ok bool) {
	describe := g.describeFn
	if describe == nil {
		describe = g.describe
	}
	d, err := describe(ctx)
	if err != nil || !settled(d.State) {
		return nil, false
	}
	for _, m := range NewGroupReport(g.GroupID, g.ConfigTopic, d).Decoded {
		if m.Metadata == nil {
			return nil, false // a member we cannot read: it may be the one asked about
		}
		urls = append(urls, m.Metadata.URL)
	}
	return urls, true
}

// NewGroupGate returns the group identity gate for cfg's worker group and
// config topic, using the shared clients (Member finds the coordinator and
// reads offsets, as the worker itself would), with the cluster-identity
// rules on and read-only: set Identity.Register to write the registry.
func NewGroupGate(cfg *settings.Config, clients *kafka.Clients, log *slog.Logger, clock clock.Clock) *GroupGate {
	return &GroupGate{Admin: clients.Admin, Client: clients.Member, GroupID: cfg.GroupID, ConfigTopic: cfg.ConfigTopic().Name,
		Log: log, Clock: clock, Identity: NewIdentity(cfg, clients, false)}
}

func offsetOrNull(o *int64) any {
	if o == nil {
		return "unknown"
	}
	return *o
}

// GroupResults runs the group rules (checks.GroupChecks() on the group,
// checks.MemberChecks() on each member) over a judged report, with
// CONNECT_INIT_GROUP_HANDOVER handover and CONNECT_INIT_STRICT strict. The
// group gate refuses on their errors and doctor renders them, so the two
// cannot disagree about the group.
func GroupResults(rep *GroupReport, handover string, strict bool) []checks.Result {
	g := checks.Group{GroupID: rep.GroupID, ConfigTopic: rep.ConfigTopic, State: rep.State, StableSeen: rep.StableSeen,
		Note: rep.Note, Handover: handover, ForeignMembers: len(rep.Foreign), Strict: strict}
	if ir := rep.Identity; ir != nil {
		g.RegistryError = ir.RegistryError
		if c := ir.ClaimedBy; c != nil {
			g.Claim = &checks.GroupClaim{ConfigTopic: c.ConfigTopic, OffsetTopic: c.OffsetTopic, StatusTopic: c.StatusTopic,
				URL: c.URL, Host: c.Host, Offset: c.Offset, FirstSeen: c.FirstSeen}
			if ir.Registry != nil {
				g.Claim.Registry = ir.Registry.Topic
			}
		}
	}
	if w := rep.Window; w.Storm() {
		g.Storm = &checks.GroupStorm{Rebalances: w.Rebalances, Span: w.Span, Samples: w.Samples}
		for _, f := range rep.Foreign {
			g.Storm.Stuck = append(g.Storm.Stuck, f.forcing())
		}
	}
	out := checks.Run(checks.GroupChecks(), g)
	foreign := map[string]bool{}
	for _, f := range rep.Foreign {
		foreign[f.MemberID] = true
		out = append(out, checks.Run(checks.MemberChecks(), checks.GroupMember{MemberID: f.MemberID, URL: f.URL, ClientHost: f.ClientHost,
			ConfigTopic: rep.ConfigTopic, Foreign: true, Reasons: f.Reasons, Message: f.Message, Strict: strict})...)
	}
	unjudged := map[string]bool{}
	if w := rep.Window; w != nil {
		for _, u := range w.Unjudged {
			if foreign[u.MemberID] {
				continue
			}
			unjudged[u.MemberID] = true
			out = append(out, checks.Run(checks.MemberChecks(), checks.GroupMember{MemberID: u.MemberID, URL: u.URL, ClientHost: u.ClientHost,
				ConfigTopic: rep.ConfigTopic, BehindUnjudged: true, Behind: u.unjudgedText(w.Span), Strict: strict})...)
		}
	}
	for _, v := range rep.Verdicts {
		if v.Verdict != VerdictUnverified || foreign[v.MemberID] || unjudged[v.MemberID] {
			continue
		}
		out = append(out, checks.Run(checks.MemberChecks(), checks.GroupMember{MemberID: v.MemberID, URL: v.URL, ClientHost: v.ClientHost,
			ConfigTopic: rep.ConfigTopic, Unverified: true, Evidence: v.Evidence, Strict: strict})...)
	}
	return out
}

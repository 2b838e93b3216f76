package gate

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/connect/store"
)

// What the group gate reports: the report built from one snapshot, the
// offset rules on it, and the group rules' results (GroupResults), which
// the gate decides on and doctor renders.

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

func (r *GroupReport) countVerdict(v string) int {
	n := 0
	for _, x := range r.Verdicts {
		if x.Verdict == v {
			n++
		}
	}
	return n
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
		if judged(b) || b.For < r.Window.behindFor() {
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
				ConfigTopic: rep.ConfigTopic, BehindUnjudged: true, Behind: u.unjudgedText(w.Span, w.behindFor()), Strict: strict})...)
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

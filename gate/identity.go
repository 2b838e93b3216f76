package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/parity"
	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/connect/registry"
	"github.com/connect-init/connect-init/connect/store"
	"github.com/connect-init/connect-init/future"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/step"
)

// Verdicts on a group member.
const (
	VerdictOurs       = "ours"
	VerdictForeign    = "foreign"
	VerdictUnverified = "unverified"
)

// Rules that decide a verdict, stable ids for logs and JSON. Each is true
// because of how Kafka Connect works; the Connect source is named with each.
const (
	// RuleProtocolType, RuleConfigOffsetAhead, RuleAssignmentOffsetAhead and
	// RuleUndecodable are connect/proto's offset and format rules (see
	// proto.FindForeign): IncrementalCooperativeAssignor
	// .performAssignment assigns at the maximum config offset any member
	// reported, and DistributedHerder.handleRebalanceCompleted forces a
	// rebalance while a worker's own config topic cannot reach it.
	RuleProtocolType          = string(proto.ReasonProtocolType)
	RuleConfigOffsetAhead     = string(proto.ReasonConfigOffsetAhead)
	RuleAssignmentOffsetAhead = string(proto.ReasonAssignmentOffsetAhead)
	RuleUndecodable           = string(proto.ReasonUndecodable)
	// RuleUnknownConnector (conclusive): the member runs, or was assigned,
	// a connector or task that no record of our config topic names. A
	// leader assigns only connectors of its config snapshot
	// (IncrementalCooperativeAssignor.performTaskAssignment:
	// configSnapshot.connectors() and configSnapshot.tasks(); EagerAssignor
	// the same), and the snapshot is built from "connector-", "task-",
	// "commit-" and "target-state-" records (KafkaConfigBackingStore
	// .ConsumeCallback). The names come from the assignment
	// (IncrementalCooperativeConnectProtocol.deserializeAssignment) and from
	// the allocation a cooperative member reports when it joins
	// (deserializeMetadata). See store.ConfigLog.Mentions for why
	// compaction cannot hide a name we defined.
	RuleUnknownConnector = "unknown-connector"
	// RuleUnassignedConnectors (strong): the group is Stable, no member has
	// revocations pending or a scheduled-rebalance delay, and connectors our
	// config topic defined below the assignment's config offset (and still
	// defines) run on no member. A leader reading our config topic at that
	// offset assigns every configured connector, STOPPED ones included
	// (performTaskAssignment: configured = configSnapshot.connectors(); lost
	// assignments are held back only under a delay, handleLostAssignments;
	// a revoked connector is reassigned in the follow-up round). A
	// connector's creation or deletion triggers a rebalance
	// (DistributedHerder.ConfigUpdateListener: needsReconfigRebalance), so a
	// Stable group at that offset has seen it. The leader that computed the
	// assignment reads another config topic; members connect-init did not
	// register as ours follow it.
	RuleUnassignedConnectors = "unassigned-connectors"
	// RuleRegistryWorker: the member's advertised URL was last registered
	// by connect-init for another Connect cluster of this group (foreign)
	// or for ours (ours).
	RuleRegistryWorker = "registry-worker"
	// RuleRegistryClaim: the group itself is registered to another Connect
	// cluster; a group-level refusal, whatever the members or offsets say.
	RuleRegistryClaim = "registry-claim"
	// RuleStatusWorkerID (ours): the latest status of one of our connectors
	// or tasks in our status topic was written by the member's worker id
	// (host:port of its advertised URL, AbstractConnectCli). Only a worker
	// whose status.storage.topic is ours writes there
	// (KafkaStatusBackingStore.put/putSafe).
	RuleStatusWorkerID = "status-worker-id"
	// RuleStuckBehind (foreign, conclusive): across the group gate's window
	// the member reported the same config offset, behind the leader's
	// assignment, in Stable snapshots with rebalances between them. A
	// member whose config offset is behind the assignment reads the config
	// topic to its end before it does anything else
	// (DistributedHerder.handleRebalanceCompleted: readConfigToEnd), and
	// rejoins with the offset it then holds; one that still reports the
	// same lower offset after rebalances reads another config topic, and
	// its "does not match group assignment ... Forcing rebalance" is what
	// keeps the group rebalancing.
	RuleStuckBehind = "config-offset-stuck-behind"
)

// Session keys are not used as evidence: the "session-key" record holds
// the key, its algorithm and creation time, nothing naming a worker, and a
// key can only be checked against a worker by sending it a signed internal
// REST request, which would touch the other cluster.

// Identity configures the group gate's cluster-identity rules: the cluster
// registry and the evidence from Connect's own records.
type Identity struct {
	// Registry is the registry topic; nil turns the registry rules off.
	Registry *registry.Store
	// Cluster is this worker's Connect cluster (KafkaClusterID is filled in
	// by the gate).
	Cluster registry.Cluster
	// OwnURL and Host are this worker's advertised REST URL and host name,
	// registered for Cluster.
	OwnURL, Host string
	// Handover is CONNECT_INIT_GROUP_HANDOVER: the config topic of the
	// cluster this one takes the group over from.
	Handover string
	// Register writes the registry once the members are judged (run,
	// prepare); doctor only reads.
	Register bool
	// Strict makes unverified members a refusal (CONNECT_INIT_STRICT).
	Strict bool
	// KnownClusterID is the Kafka cluster id when already known (the
	// brokers step read it); "" asks a broker.
	KnownClusterID string
}

// MemberVerdict is the verdict on one group member.
type MemberVerdict struct {
	MemberID   string `json:"member_id"`
	URL        string `json:"url,omitempty"`
	ClientHost string `json:"client_host"`
	// Verdict is ours, foreign or unverified.
	Verdict string `json:"verdict"`
	// Rule is the rule that decided ("" for unverified).
	Rule string `json:"rule,omitempty"`
	// Evidence says what decided, or for unverified what was compared.
	Evidence string `json:"evidence"`
}

// IdentityReport is what the identity rules read.
type IdentityReport struct {
	KafkaClusterID string `json:"kafka_cluster_id"`
	// Registry is the registry's view of the group, null when it could not
	// be read (RegistryError says why) or is off.
	Registry      *registry.View `json:"registry"`
	RegistryError string         `json:"registry_error,omitempty"`
	// ClaimedBy is the owning claim when it belongs to another cluster.
	ClaimedBy *registry.Claim `json:"claimed_by,omitempty"`
	// ConfigRecords and ConfigConnectors describe our config topic as read.
	ConfigRecords    int    `json:"config_records"`
	ConfigConnectors int    `json:"config_connectors_defined"`
	ConfigError      string `json:"config_error,omitempty"`
	StatusError      string `json:"status_error,omitempty"`
	// Registered says what this run wrote to the registry.
	Registered string `json:"registered,omitempty"`
}

// identityInputs are the reads the rules judge.
type identityInputs struct {
	clusterID string
	view      *registry.View
	viewErr   error
	config    *store.ConfigLog
	configErr error
	status    *store.StatusLog
	statusErr error
}

// NewIdentity returns the identity rules for cfg's cluster: registry topic
// CONNECT_INIT_REGISTRY_TOPIC, handover CONNECT_INIT_GROUP_HANDOVER, strict
// CONNECT_INIT_STRICT.
func NewIdentity(cfg *settings.Config, clients *kafka.Clients, register bool) *Identity {
	id := &Identity{Register: register, Strict: cfg.Settings.Strict, Handover: cfg.Settings.GroupHandover, KnownClusterID: clients.ClusterID}
	id.Cluster.GroupID = cfg.GroupID
	rf := int16(-1)
	for _, t := range cfg.Topics {
		switch t.Role {
		case settings.RoleConfig:
			id.Cluster.ConfigTopic, rf = t.Name, t.ReplicationFactor
		case settings.RoleOffset:
			id.Cluster.OffsetTopic = t.Name
		case settings.RoleStatus:
			id.Cluster.StatusTopic = t.Name
		}
	}
	id.OwnURL = cfg.AdvertisedURL // derived and checked by the settings gate
	id.Host, _ = os.Hostname()
	id.Registry = &registry.Store{Client: clients.Member, Admin: clients.Admin, Brokers: cfg.BootstrapServers,
		Sarama: clients.MemberConfig, Topic: RegistryTopic(cfg), ReplicationFactor: rf, Settings: parity.Of(cfg.Worker, "")}
	return id
}

// RegistryTopic is the cluster registry's topic: CONNECT_INIT_REGISTRY_TOPIC
// or registry.DefaultTopic.
func RegistryTopic(cfg *settings.Config) string {
	if t := cfg.Settings.RegistryTopic; t != "" {
		return t
	}
	return registry.DefaultTopic
}

// judgeIdentity fills rep.Verdicts and rep.Identity from the inputs, and
// extends rep.Foreign with members found foreign by the identity rules.
//
// settledAfter is true when the group was seen Stable at the same
// assignment offset with the same members a settle time after the first
// snapshot: then connectors created at or after that offset count for
// RuleUnassignedConnectors too.
func (r *GroupReport) judgeIdentity(id *Identity, in *identityInputs, settledAfter bool) {
	me := id.Cluster
	me.KafkaClusterID = in.clusterID
	ir := &IdentityReport{KafkaClusterID: in.clusterID, Registry: in.view}
	if in.viewErr != nil {
		ir.RegistryError = in.viewErr.Error()
	}
	if in.configErr != nil {
		ir.ConfigError = in.configErr.Error()
	}
	if in.statusErr != nil {
		ir.StatusError = in.statusErr.Error()
	}
	if in.config != nil {
		ir.ConfigRecords = len(in.config.Records)
		ir.ConfigConnectors = len(in.config.DefinedAt(in.config.End))
	}
	if o := in.view.Owner(); o != nil && !o.Same(me) {
		c := *o
		ir.ClaimedBy = &c
	}
	r.Identity = ir
	r.judgeStuckBehind(in.config)
	r.Config = in.config

	offsetForeign := map[string]ForeignMember{}
	for _, f := range r.Foreign {
		offsetForeign[f.MemberID] = f
	}
	u := unassignedConnectors(r.Decoded, in.config)
	missing, whyNot := u.below, u.whyNot
	if settledAfter {
		missing = append(append([]string{}, missing...), u.after...)
	} else if len(u.after) > 0 && len(u.below) == 0 {
		whyNot = fmt.Sprintf("connector(s) %s were created in our config topic at or after the assignment offset %d and run on no member, but the group was not watched long enough to be sure it did not react", strings.Join(u.after, ", "), u.offset)
	}

	r.Verdicts = []MemberVerdict{}
	for _, m := range r.Decoded {
		v := r.judgeMember(m, me, in, offsetForeign[m.MemberID], u, missing, whyNot)
		r.Verdicts = append(r.Verdicts, v)
		if v.Verdict == VerdictForeign && offsetForeign[m.MemberID].MemberID == "" {
			fm := ForeignMember{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost, URL: m.URL(),
				OurEndOffset: r.ConfigEndOffset, Reasons: []string{v.Rule},
				Message: fmt.Sprintf("group member %q (client id %q, client host %s, advertised URL %s) %s", m.MemberID, m.ClientID, orUnknown(m.ClientHost), orUnknown(m.URL()), v.Evidence)}
			if m.Metadata != nil {
				off := m.Metadata.ConfigOffset
				fm.ConfigOffset = &off
			}
			if m.Assignment != nil {
				off := m.Assignment.ConfigOffset
				fm.AssignmentOffset = &off
			}
			r.Foreign = append(r.Foreign, fm)
		}
	}
}

// judgeMember is one member's verdict by the identity rules, first match
// wins: foreign by its offsets (f), by a connector our config topic never
// names, by the registry; ours by the registry; foreign when the Stable
// assignment runs none of our connectors (missing); ours by the status
// topic; else unverified, with what was compared.
func (r *GroupReport) judgeMember(m proto.Member, me registry.Cluster, in *identityInputs, f ForeignMember, u unassigned, missing []string, whyNot string) MemberVerdict {
	v := MemberVerdict{MemberID: m.MemberID, URL: m.URL(), ClientHost: m.ClientHost}
	var reg *registry.Worker
	if in.view != nil {
		reg = in.view.WorkerByURL(m.URL())
	}
	unknown := unknownConnectors(m, in.config)
	switch {
	case f.MemberID != "":
		v.Verdict, v.Rule, v.Evidence = VerdictForeign, f.Reasons[0], f.Message
	case len(unknown) > 0:
		v.Verdict, v.Rule = VerdictForeign, RuleUnknownConnector
		v.Evidence = fmt.Sprintf("runs or was assigned connector(s) %s (assignment offset %s, leader %s), which no record of our config topic %q (%d records, end offset %d) names: the leader that assigned them reads another config topic",
			strings.Join(unknown, ", "), assignmentOffset(m), leaderOf(m), in.config.Topic, len(in.config.Records), in.config.End)
	case reg != nil && !reg.Same(me):
		v.Verdict, v.Rule = VerdictForeign, RuleRegistryWorker
		v.Evidence = fmt.Sprintf("its URL %s is registered (last seen %s, host %s) for the Connect cluster of group %q with config topic %q, not ours (%q)",
			reg.URL, reg.LastSeen.UTC().Format("2006-01-02T15:04:05Z"), orUnknown(reg.Host), reg.GroupID, reg.ConfigTopic, me.ConfigTopic)
	case reg != nil:
		v.Verdict, v.Rule = VerdictOurs, RuleRegistryWorker
		v.Evidence = fmt.Sprintf("its URL is registered for our cluster (first seen %s, last seen %s, host %s)",
			reg.FirstSeen.UTC().Format("2006-01-02T15:04:05Z"), reg.LastSeen.UTC().Format("2006-01-02T15:04:05Z"), orUnknown(reg.Host))
	case len(missing) > 0:
		v.Verdict, v.Rule = VerdictForeign, RuleUnassignedConnectors
		v.Evidence = fmt.Sprintf("the Stable group's assignment at config offset %d (leader %s) runs none of connector(s) %s, which our config topic %q (end offset %d) defines: a leader reading our config topic would have assigned them (and would have rebalanced for any created since)",
			u.offset, orUnknown(u.leaderURL), strings.Join(missing, ", "), in.config.Topic, in.config.End)
	default:
		wid := store.WorkerID(m.URL())
		if in.status != nil && wid != "" && len(in.status.ByWorker[wid]) > 0 {
			keys := in.status.ByWorker[wid]
			sort.Strings(keys)
			v.Verdict, v.Rule = VerdictOurs, RuleStatusWorkerID
			v.Evidence = fmt.Sprintf("worker id %s wrote the latest status of %d of our connectors/tasks in our status topic %q (%s)",
				wid, len(keys), in.status.Topic, strings.Join(first(keys, 3), ", "))
			return v
		}
		v.Verdict = VerdictUnverified
		v.Evidence = compared(m, r, in, wid, whyNot)
	}
	return v
}

// identify runs the identity rules on a judged snapshot: reads (never
// writes) the registry and our config and status topics, gives every
// member a verdict, refuses on a foreign member or a foreign claim, warns
// on unverified members (refuses under Strict), and only then, with
// Register, writes this worker's registration.
func (g *GroupGate) identify(ctx context.Context, rep *GroupReport, ahead *future.Future[registryRead], describe func(context.Context) (*sarama.GroupDescription, error), clock clock.Clock, log *slog.Logger) error {
	id := g.Identity
	var in *identityInputs
	if g.identityFn != nil {
		in = g.identityFn(ctx, rep)
	} else {
		in = g.readIdentityWith(ctx, rep, ahead)
	}
	rep.judgeIdentity(id, in, false)
	if err := g.settleUnassigned(ctx, rep, in, describe, clock, log); err != nil {
		return err
	}
	for _, v := range rep.Verdicts {
		log.Info("group member judged", "group", g.GroupID, "member", v.MemberID, "url", v.URL, "client_host", v.ClientHost,
			"verdict", v.Verdict, "rule", v.Rule)
	}
	unverified, err := g.decide(rep, log)
	if err != nil {
		return err
	}
	if g.BeforeRegister != nil {
		if err := g.BeforeRegister(ctx, rep); err != nil {
			return err
		}
	}
	if !id.Register || id.Registry == nil && g.registerFn == nil {
		return nil
	}
	return g.register(ctx, rep, in, len(unverified) == 0, log)
}

// settleUnassigned waits SettleWait when a Stable group runs none of the
// connectors our config topic created since its assignment (a cluster that
// just started, or another cluster's group), and judges it again on a
// second, identical snapshot: one snapshot cannot tell the two apart.
func (g *GroupGate) settleUnassigned(ctx context.Context, rep *GroupReport, in *identityInputs, describe func(context.Context) (*sarama.GroupDescription, error), clock clock.Clock, log *slog.Logger) error {
	u := unassignedConnectors(rep.Decoded, in.config)
	if len(rep.Foreign) > 0 || len(u.after) == 0 || len(u.below) > 0 || rep.State != GroupStable {
		return nil
	}
	settle := g.SettleWait
	if settle <= 0 {
		settle = DefaultSettleWait
	}
	log.Info("watching the worker group: it runs none of the connectors our config topic created since its assignment", "group", g.GroupID,
		"connectors", strings.Join(first(u.after, 5), ","), "assignment_offset", u.offset, "config_end_offset", in.config.End, "for", settle.String())
	select {
	case <-ctx.Done():
		return &GateError{Gate: step.Group, Err: fmt.Errorf("watch worker group %q: %w", g.GroupID, ctx.Err())}
	case <-clock.After(settle):
	}
	if d, err := describe(ctx); err == nil && sameSnapshot(rep, NewGroupReport(g.GroupID, g.ConfigTopic, d)) {
		rep.judge()
		rep.judgeIdentity(g.Identity, in, true)
	}
	return nil
}

// decide takes the group gate's one decision (decideGroup) over the rules'
// results (checks.GroupChecks(), checks.MemberChecks(); doctor renders the
// same results), then logs what is only unproven as a warning with the
// check's own fix. It returns the unverified members.
func (g *GroupGate) decide(rep *GroupReport, log *slog.Logger) ([]MemberVerdict, error) {
	id, ir := g.Identity, rep.Identity
	rs := GroupResults(rep, id.Handover, id.Strict)
	if err := decideGroup(rep, rs); err != nil {
		return nil, err
	}
	if ir.ClaimedBy != nil {
		log.Info("handing the worker group over to this cluster", "group", g.GroupID, "from_config_topic", ir.ClaimedBy.ConfigTopic,
			"to_config_topic", id.Cluster.ConfigTopic, "setting", "CONNECT_INIT_GROUP_HANDOVER")
	}
	var unverified []MemberVerdict
	for _, v := range rep.Verdicts {
		if v.Verdict == VerdictUnverified {
			unverified = append(unverified, v)
			log.Warn("group member not verified", "group", g.GroupID, "member", v.MemberID, "url", v.URL, "client_host", v.ClientHost, "compared", v.Evidence,
				"fix", fixOf(rs, checks.IDUnverifiedGroupMember))
		}
	}
	if ir.RegistryError != "" {
		log.Warn("cluster registry unreadable", "group", g.GroupID, "error", ir.RegistryError, "fix", fixOf(rs, checks.IDRegistryUnreadable))
	}
	return unverified, nil
}

// register writes this worker into the cluster registry, claiming the
// group when no member is unverified; a claim by another cluster is
// refused, and an unwritable registry is refused only under Strict.
func (g *GroupGate) register(ctx context.Context, rep *GroupReport, in *identityInputs, claim bool, log *slog.Logger) error {
	id, ir := g.Identity, rep.Identity
	me := id.Cluster
	me.KafkaClusterID = in.clusterID
	if in.clusterID == "" || id.OwnURL == "" {
		log.Warn("not registered in the cluster registry", "group", g.GroupID, "error", "the Kafka cluster id or this worker's advertised URL is unknown",
			"fix", "check the worker's listeners and rest.advertised.* settings and that a broker answers kafka.Metadata")
		return nil
	}
	register := g.registerFn
	if register == nil {
		register = func(ctx context.Context, me registry.Cluster, claim bool) (*registry.Registration, error) {
			// The view readIdentityWith read is the one the verdicts rest on:
			// no second read before the write (confirmRegistration reads
			// back after it).
			return id.Registry.RegisterOver(ctx, in.view, me, id.OwnURL, id.Host, id.Handover, claim)
		}
	}
	reg, err := register(ctx, me, claim)
	var ce *registry.ClaimedError
	switch {
	case errors.As(err, &ce):
		c := ce.Owner
		ir.ClaimedBy = &c
		// The registry did not take the handover from this owner: its
		// claim stands as if none were set.
		return &GateError{Gate: step.Group, Err: err, Fix: fixOf(GroupResults(rep, "", id.Strict), checks.IDGroupRegisteredElsewhere)}
	case err != nil:
		// A registration that fails needs what a registry that cannot be
		// read needs: that check's fix, strict or not.
		fix := fixOf(checks.Run(checks.GroupChecks(), checks.Group{GroupID: g.GroupID, RegistryError: err.Error(), Strict: id.Strict}), checks.IDRegistryUnreadable)
		if id.Strict {
			return &GateError{Gate: step.Group, Err: fmt.Errorf("register in the cluster registry: %w", err), Fix: fix}
		}
		log.Warn("not registered in the cluster registry", "group", g.GroupID, "error", err.Error(), "fix", fix)
		return nil
	}
	ir.Registered = registeredText(reg, claim, id.OwnURL)
	if reg.View != nil {
		ir.Registry = reg.View
	}
	topic := ""
	if id.Registry != nil {
		topic = id.Registry.Topic
	}
	log.Info("registered in the cluster registry", "group", g.GroupID, "url", id.OwnURL, "host", id.Host, "config_topic", me.ConfigTopic,
		"kafka_cluster_id", me.KafkaClusterID, "topic", topic, "what", ir.Registered)
	return nil
}

// registeredText says what the registration did, for the report.
func registeredText(reg *registry.Registration, claim bool, url string) string {
	switch {
	case reg.Unchanged:
		return fmt.Sprintf("%s already registered at %s; not written again (a record under %s old is kept)", url,
			reg.Written.UTC().Format(time.RFC3339), registry.RewriteAfter)
	case reg.HandedOver != "":
		return fmt.Sprintf("took the group over from config topic %q and registered %s", reg.HandedOver, url)
	case reg.Claimed:
		return fmt.Sprintf("claimed the group and registered %s", url)
	case !claim && (reg.View == nil || reg.View.Owner() == nil):
		return fmt.Sprintf("registered %s; did not claim the group while it has unverified members", url)
	}
	return fmt.Sprintf("registered %s", url)
}

// sameSnapshot reports whether b shows the same Stable group as a: same
// members, same assignment offset.
func sameSnapshot(a, b *GroupReport) bool {
	if b.State != GroupStable || len(a.Members) != len(b.Members) || a.AssignmentOffset == nil || b.AssignmentOffset == nil ||
		*a.AssignmentOffset != *b.AssignmentOffset {
		return false
	}
	for i := range a.Members {
		if a.Members[i].MemberID != b.Members[i].MemberID {
			return false
		}
	}
	return true
}

// orUnknown is s, or "unknown" when s is empty, for messages.
func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

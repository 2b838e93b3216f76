package checks

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Ids of the group checks.
const (
	IDForeignGroupMember       = "foreign-group-member"
	IDGroupRegisteredElsewhere = "group-registered-to-another-cluster"
	IDUnverifiedGroupMember    = "unverified-group-member"
	IDRegistryUnreadable       = "cluster-registry-unreadable"
	IDGroupNotStable           = "group-not-stable"
	IDGroupEmpty               = "group-empty"
	IDGroupRebalanceStorm      = "group-rebalance-storm"
	IDMemberBehindUnjudged     = "member-behind-unjudged"
)

// Group is what the group gate decided on about the worker group as a
// whole: the snapshot it judged and the cluster registry's claim.
type Group struct {
	GroupID     string
	ConfigTopic string
	// State is the snapshot's group state; StableSeen says whether it was
	// Stable (or needed no waiting), and Note why the decision rests on a
	// rebalancing snapshot otherwise.
	State      string
	StableSeen bool
	Note       string
	// Claim is the registry's claim when it gives the group to another
	// Connect cluster; nil when the group is unclaimed or ours.
	Claim *GroupClaim
	// Handover is CONNECT_INIT_GROUP_HANDOVER: the config topic of the
	// cluster this one takes the group over from.
	Handover string
	// ForeignMembers is how many members a rule proved foreign: a handover
	// takes the group over only once none is left.
	ForeignMembers int
	// RegistryError says why the registry could not be read.
	RegistryError string
	// Strict is CONNECT_INIT_STRICT: what is only unproven is refused.
	Strict bool
	// Storm is set when the gate's window saw the group rebalance again
	// and again without settling; nil otherwise.
	Storm *GroupStorm
}

// GroupStorm is a window in which the group kept rebalancing.
type GroupStorm struct {
	Rebalances int
	Span       time.Duration
	Samples    int
	// Stuck are the foreign members, each with the offsets by which it
	// keeps the group rebalancing; empty when no member was to blame.
	Stuck []string
}

// GroupClaim is another Connect cluster's claim on the group.
type GroupClaim struct {
	Registry                              string
	ConfigTopic, OffsetTopic, StatusTopic string
	URL, Host                             string
	Offset                                int64
	FirstSeen                             time.Time
}

// GroupMember is one member of the worker group with the identity rules'
// verdict on it.
type GroupMember struct {
	MemberID, URL, ClientHost string
	// ConfigTopic is our config topic, the one the member was judged
	// against.
	ConfigTopic string
	// Foreign: a rule proved the member belongs to another Connect
	// cluster; Reasons are the rules' ids and Message their evidence.
	Foreign bool
	Reasons []string
	Message string
	// Unverified: no rule proved the member ours or foreign; Evidence
	// says what was compared.
	Unverified bool
	Evidence   string
	Strict     bool
	// BehindUnjudged: the member stayed behind the assignment until the
	// gate's timeout without any rule reaching a verdict on it; Behind
	// says what was seen.
	BehindUnjudged bool
	Behind         string
}

// fixForeign is the fix of a member of another Connect cluster.
const fixForeign = "give every Connect cluster its own CONNECT_GROUP_ID (the workers of one cluster share group.id and the config, offset and status topics; two clusters share none of them); or, if it is a stale worker of this cluster, find it by its client host and advertised URL and stop it"

// handover reports whether CONNECT_INIT_GROUP_HANDOVER names the
// claiming cluster's config topic.
func handover(g Group) bool {
	return g.Claim != nil && g.Handover != "" && g.Handover == g.Claim.ConfigTopic
}

// handedOver reports whether the claim is handed over to this cluster: the
// handover names the claiming cluster and no foreign member is left.
func handedOver(g Group) bool {
	return handover(g) && g.ForeignMembers == 0
}

// groupChecks is the table GroupChecks returns: data, not code, so that one rule
// reads as one entry (issue 49).
var groupChecks = []Check[Group]{
	{
		ID: IDGroupRebalanceStorm, Severity: Error,
		Test:    func(g Group) bool { return g.Storm != nil },
		Subject: func(g Group) string { return g.GroupID },
		Summary: func(g Group) string {
			return fmt.Sprintf("the worker group %q rebalanced %d times in %s and did not settle", g.GroupID, g.Storm.Rebalances, g.Storm.Span.Round(100*time.Millisecond))
		},
		Evidence: func(g Group) string {
			ev := fmt.Sprintf("%d looks (DescribeGroups) over %s", g.Storm.Samples, g.Storm.Span.Round(100*time.Millisecond))
			if len(g.Storm.Stuck) == 0 {
				return ev + "; no member stayed behind the assignment"
			}
			return ev + "; forcing it: " + strings.Join(g.Storm.Stuck, "; ")
		},
		Fix: func(g Group) string {
			if len(g.Storm.Stuck) > 0 {
				return "stop the member(s) named, which read another config topic (find them by client host and URL), or give their Connect cluster its own CONNECT_GROUP_ID; every rebalance stops the connectors of the whole group"
			}
			return "look for a worker logging \"Forcing rebalance\" or rejoining in a loop (its client host is in doctor's member list); connect-init doctor --watch follows the group"
		},
	},
	{
		ID: IDGroupRegisteredElsewhere, Severity: Error,
		Test:    func(g Group) bool { return g.Claim != nil && !handedOver(g) },
		Subject: func(g Group) string { return g.GroupID },
		Summary: func(g Group) string {
			return fmt.Sprintf("the worker group %q is registered to another Connect cluster (config topic %q)", g.GroupID, g.Claim.ConfigTopic)
		},
		Evidence: claimEvidence,
		Fix: func(g Group) string {
			if handover(g) {
				return fmt.Sprintf("CONNECT_INIT_GROUP_HANDOVER=%s hands the group over only once no worker of that cluster is in the group: stop its members, then start this worker again", g.Claim.ConfigTopic)
			}
			return fmt.Sprintf("give this cluster its own CONNECT_GROUP_ID; to hand the group over on purpose, stop that cluster's workers and set CONNECT_INIT_GROUP_HANDOVER=%s on this cluster's workers", g.Claim.ConfigTopic)
		},
	},
	{
		ID: IDGroupRegisteredElsewhere, Severity: Info,
		Test:    handedOver,
		Subject: func(g Group) string { return g.GroupID },
		Summary: func(g Group) string {
			return fmt.Sprintf("the worker group %q is registered to another Connect cluster (config topic %q), and CONNECT_INIT_GROUP_HANDOVER hands it over to this one", g.GroupID, g.Claim.ConfigTopic)
		},
		Evidence: claimEvidence,
		Fix:      func(Group) string { return "unset CONNECT_INIT_GROUP_HANDOVER once this cluster's workers run" },
	},
	{
		ID: IDRegistryUnreadable, Severity: Warning,
		Escalate: func(g Group) bool { return g.Strict },
		Test:     func(g Group) bool { return g.RegistryError != "" },
		Subject:  func(g Group) string { return g.GroupID },
		Summary: func(g Group) string {
			return fmt.Sprintf("the cluster registry could not be read, so the worker group %q is not proven to be this cluster's", g.GroupID)
		},
		Evidence: func(g Group) string { return g.RegistryError },
		Fix: func(g Group) string {
			fix := "this principal needs READ and WRITE on the registry topic and CREATE on the cluster (or create the topic: compacted, 1 partition)"
			if g.Strict {
				return fix + "; unset CONNECT_INIT_STRICT to start with a warning"
			}
			return fix + "; CONNECT_INIT_STRICT=true refuses to start until it is readable"
		},
	},
	{
		ID: IDGroupEmpty, Severity: Info,
		Test: func(g Group) bool {
			switch g.State {
			case "Empty", "Dead", "NotFound", "":
				return true
			}
			return false
		},
		Subject:  func(g Group) string { return g.GroupID },
		Summary:  func(g Group) string { return fmt.Sprintf("the worker group %q has no members", g.GroupID) },
		Evidence: func(g Group) string { return "group state " + orUnknown(g.State) },
		Fix:      func(Group) string { return "nothing to do if no worker should be running" },
	},
	{
		ID: IDGroupNotStable, Severity: Warning,
		Test:    func(g Group) bool { return !g.StableSeen },
		Subject: func(g Group) string { return g.GroupID },
		Summary: func(g Group) string {
			return fmt.Sprintf("the worker group %q did not become Stable while it was watched", g.GroupID)
		},
		Evidence: func(g Group) string { return g.Note },
		Fix: func(Group) string {
			return "look again; a group that never settles is rebalancing in a loop: look for a worker logging \"Forcing rebalance\" and at the members' client hosts"
		},
	},
}

// GroupChecks are the rules over the worker group as a whole. The group
// gate refuses on their errors and doctor renders them; a claim by another
// cluster is refused unless this cluster takes the group over on purpose
// (CONNECT_INIT_GROUP_HANDOVER names that cluster's config topic) and no
// member of that cluster is left in the group.
func GroupChecks() []Check[Group] { return slices.Clone(groupChecks) }

func claimEvidence(g Group) string {
	c := g.Claim
	return fmt.Sprintf("cluster registry %q: first claim at offset %d, %s, by %s (host %s); offset topic %q, status topic %q; our config topic %q",
		orUnknown(c.Registry), c.Offset, c.FirstSeen.UTC().Format("2006-01-02T15:04:05Z"), orUnknown(c.URL), orUnknown(c.Host), c.OffsetTopic, c.StatusTopic, g.ConfigTopic)
}

// memberChecks is the table MemberChecks returns: data, not code, so that one rule
// reads as one entry (issue 49).
var memberChecks = []Check[GroupMember]{
	{
		ID: IDForeignGroupMember, Severity: Error,
		Test:    func(m GroupMember) bool { return m.Foreign },
		Subject: func(m GroupMember) string { return m.MemberID },
		Summary: func(m GroupMember) string {
			return fmt.Sprintf("group member %q (%s, client host %s) cannot belong to this Connect cluster", m.MemberID, orUnknown(m.URL), orUnknown(m.ClientHost))
		},
		Evidence: func(m GroupMember) string {
			return m.Message + fmt.Sprintf(" [reasons: %s; our config topic %q]", strings.Join(m.Reasons, ", "), m.ConfigTopic)
		},
		Fix: func(GroupMember) string { return fixForeign },
	},
	{
		// Issue 47: where the evidence never comes in (the member is
		// behind, the group never stays Stable long enough at its
		// offset nor rebalances twice, until the timeout), a worker
		// must not join on a guess.
		ID: IDMemberBehindUnjudged, Severity: Error,
		Test:    func(m GroupMember) bool { return m.BehindUnjudged && !m.Foreign },
		Subject: func(m GroupMember) string { return m.MemberID },
		Summary: func(m GroupMember) string {
			return fmt.Sprintf("group member %q (%s, client host %s) stayed behind the assignment and could not be judged before the timeout", m.MemberID, orUnknown(m.URL), orUnknown(m.ClientHost))
		},
		Evidence: func(m GroupMember) string { return m.Behind },
		Fix: func(m GroupMember) string {
			return "a worker of this cluster catches up within seconds (worker.sync.timeout.ms) or leaves the group; one that stays behind while the group keeps rebalancing reads another config topic: find it by its client host and URL (its log says \"does not match group assignment ... Forcing rebalance\") and stop it, or give its cluster its own CONNECT_GROUP_ID; if it is a worker of this cluster still reading a large config topic, raise CONNECT_INIT_TIMEOUT"
		},
	},
	{
		ID: IDUnverifiedGroupMember, Severity: Warning,
		Escalate: func(m GroupMember) bool { return m.Strict },
		Test:     func(m GroupMember) bool { return m.Unverified && !m.Foreign },
		Subject:  func(m GroupMember) string { return m.MemberID },
		Summary: func(m GroupMember) string {
			return fmt.Sprintf("group member %q (%s, client host %s) is not proven to belong to this Connect cluster", m.MemberID, orUnknown(m.URL), orUnknown(m.ClientHost))
		},
		Evidence: func(m GroupMember) string { return m.Evidence },
		Fix: func(m GroupMember) string {
			if m.Strict {
				return "start every worker of this cluster through connect-init so the cluster registry knows it, or stop the unverified workers; unset CONNECT_INIT_STRICT to start with a warning"
			}
			return "start every worker of this cluster through connect-init so the cluster registry knows it; CONNECT_INIT_STRICT=true makes run and prepare refuse beside unverified members"
		},
	},
}

// MemberChecks are the rules over one member of the worker group: a
// member of another Connect cluster is refused (a worker joining beside it
// makes one of the two clusters force rebalances forever, incident 1); one
// that is only unproven is a warning, refused under CONNECT_INIT_STRICT.
func MemberChecks() []Check[GroupMember] { return slices.Clone(memberChecks) }

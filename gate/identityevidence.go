package gate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/connect/store"
)

// The evidence the identity rules compare a member with: its connectors
// against our config topic, and what an unverified member was compared
// with.

func assignmentOffset(m proto.Member) string {
	if m.Assignment == nil {
		return "unknown"
	}
	return fmt.Sprint(m.Assignment.ConfigOffset)
}

func leaderOf(m proto.Member) string {
	if m.Assignment == nil {
		return "unknown"
	}
	return orUnknown(m.Assignment.LeaderURL)
}

// compared says, for an unverified member, what was compared.
func compared(m proto.Member, r *GroupReport, in *identityInputs, wid, whyNot string) string {
	var parts []string
	if in.config != nil {
		names := memberConnectors(m)
		if len(names) > 0 {
			parts = append(parts, fmt.Sprintf("its %d connector(s) (%s) are all named in our config topic", len(names), strings.Join(first(names, 5), ", ")))
		} else {
			parts = append(parts, "it runs no connector to compare with our config topic")
		}
		if whyNot != "" {
			parts = append(parts, "the unassigned-connector rule did not apply: "+whyNot)
		}
	} else {
		parts = append(parts, "our config topic could not be read")
	}
	if m.Metadata != nil {
		parts = append(parts, fmt.Sprintf("its config offset %d does not pass our config topic's end %d", m.Metadata.ConfigOffset, r.ConfigEndOffset))
	}
	switch {
	case in.view == nil && in.viewErr != nil:
		parts = append(parts, "the cluster registry could not be read")
	case in.view == nil:
		parts = append(parts, "the cluster registry is off")
	default:
		parts = append(parts, "its URL is not in the cluster registry")
	}
	if in.status != nil {
		parts = append(parts, fmt.Sprintf("worker id %s wrote no latest status in our status topic", orUnknown(wid)))
	}
	return "not proven ours or foreign: " + strings.Join(parts, "; ")
}

func first(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string{}, s[:n]...), fmt.Sprintf("%d more", len(s)-n))
}

// memberConnectors returns the connector names a member's assignment,
// revocations and reported allocation mention, sorted.
func memberConnectors(m proto.Member) []string {
	set := map[string]bool{}
	add := func(a *proto.Assignment) {
		if a == nil {
			return
		}
		for _, c := range a.Connectors {
			set[c] = true
		}
		for _, t := range a.Tasks {
			set[t.Connector] = true
		}
		for _, c := range a.RevokedConnectors {
			set[c] = true
		}
		for _, t := range a.RevokedTasks {
			set[t.Connector] = true
		}
	}
	add(m.Assignment)
	if m.Metadata != nil {
		add(m.Metadata.Allocation)
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// unknownConnectors returns the member's connectors our config topic never
// names (RuleUnknownConnector).
func unknownConnectors(m proto.Member, cfg *store.ConfigLog) []string {
	if cfg == nil || m.ProtocolType != proto.ProtocolType {
		return nil
	}
	var out []string
	for _, c := range memberConnectors(m) {
		if !cfg.Mentions(c) {
			out = append(out, c)
		}
	}
	return out
}

// unassigned is RuleUnassignedConnectors applied to a group snapshot.
type unassigned struct {
	// below are connectors our config topic defined below the assignment
	// offset (and still defines) that no member runs: strong at once.
	below []string
	// after are connectors our config topic created at or after the
	// assignment offset (and still defines) that no member runs: strong
	// only if the group is still Stable at the same offset a settle time
	// later, since their creation triggers a rebalance in a cluster reading
	// our config topic.
	after     []string
	offset    int64
	leaderURL string
	whyNot    string
}

// unassignedConnectors applies RuleUnassignedConnectors' preconditions and
// sets.
func unassignedConnectors(members []proto.Member, cfg *store.ConfigLog) unassigned {
	if cfg == nil {
		return unassigned{whyNot: "our config topic could not be read"}
	}
	if len(members) == 0 {
		return unassigned{whyNot: "no members"}
	}
	var u unassigned
	running := map[string]bool{}
	for i, m := range members {
		if m.ProtocolType != proto.ProtocolType || m.Metadata == nil || m.Assignment == nil {
			return unassigned{whyNot: "not every member's metadata and assignment are known (the group was not seen Stable)"}
		}
		a := m.Assignment
		if a.Error != proto.AssignmentNoError {
			return unassigned{whyNot: "an assignment carries an error"}
		}
		if a.Delay > 0 {
			return unassigned{whyNot: fmt.Sprintf("the leader holds departed workers' connectors back for %d ms (scheduled.rebalance.max.delay.ms)", a.Delay)}
		}
		if len(a.RevokedConnectors) > 0 || len(a.RevokedTasks) > 0 {
			return unassigned{whyNot: "a member has revocations pending: the follow-up rebalance reassigns them"}
		}
		if i == 0 {
			u.offset, u.leaderURL = a.ConfigOffset, a.LeaderURL
		} else if a.ConfigOffset != u.offset {
			return unassigned{whyNot: "the members' assignments were computed at different config offsets"}
		}
		if m.Metadata.Allocation != nil {
			for _, c := range m.Metadata.Allocation.Connectors {
				running[c] = true
			}
		}
		for _, c := range a.Connectors {
			running[c] = true
		}
	}
	below := map[string]bool{}
	for _, c := range cfg.DefinedAt(u.offset) {
		below[c] = true
		if !running[c] && cfg.Defined(c) {
			u.below = append(u.below, c)
		}
	}
	for _, c := range cfg.DefinedAt(cfg.End) {
		if !below[c] && !running[c] {
			u.after = append(u.after, c)
		}
	}
	if len(u.below) == 0 && len(u.after) == 0 {
		u.whyNot = "every connector our config topic defines runs on a member"
	}
	return u
}

package proto

import (
	"errors"
	"fmt"
	"strings"
)

// Member is one member of the worker group as DescribeGroups shows it, with
// its Connect metadata and assignment decoded. Kafka keeps one protocol type
// and one protocol per group, so ProtocolType and Protocol are the group's,
// copied into each member.
type Member struct {
	// MemberID is the id the coordinator gave the member; assignments name
	// the leader by it.
	MemberID string
	// ClientID is the member's client.id (Connect's default: "connect-N" or
	// "connect-<advertised URL>"), helpful to identify a process.
	ClientID string
	// ClientHost is the address the coordinator saw the member connect from,
	// as Kafka prints it (usually "/10.0.0.7").
	ClientHost string
	// ProtocolType is the group's protocol type; Connect workers use
	// [ProtocolType].
	ProtocolType string
	// Protocol is the group's selected protocol ("default", "compatible",
	// "sessioned" for Connect).
	Protocol string
	// Metadata is the decoded member metadata, nil if absent or undecodable.
	Metadata *MemberMetadata
	// Assignment is the decoded assignment, nil if absent or undecodable.
	Assignment *Assignment
	// MetadataErr is why Metadata is nil, if it is (errors.Is ErrEmpty when
	// the bytes were empty).
	MetadataErr error
	// AssignmentErr is why Assignment is nil, if it is (errors.Is ErrEmpty
	// when the member has no assignment yet).
	AssignmentErr error
}

// Decode fills Metadata/MetadataErr and Assignment/AssignmentErr from the
// raw DescribeGroups bytes. It decodes only when ProtocolType is
// [ProtocolType]: another type's bytes are not Connect's and their decoding
// errors would only be noise.
func (m *Member) Decode(metadata, assignment []byte) {
	m.Metadata, m.MetadataErr, m.Assignment, m.AssignmentErr = nil, nil, nil, nil
	if m.ProtocolType != ProtocolType {
		return
	}
	if md, err := DecodeMemberMetadata(metadata); err != nil {
		m.MetadataErr = err
	} else {
		m.Metadata = &md
	}
	if a, err := DecodeAssignment(assignment); err != nil {
		m.AssignmentErr = err
	} else {
		m.Assignment = &a
	}
}

// URL returns the member's advertised REST URL, or "" when its metadata is
// unknown.
func (m Member) URL() string {
	if m.Metadata == nil {
		return ""
	}
	return m.Metadata.URL
}

// Reason says why a group member cannot belong to our Connect cluster. The
// values are stable identifiers, usable in logs and JSON.
type Reason string

const (
	// ReasonProtocolType: the group's protocol type is not "connect"; the
	// group.id is used by something that is not a Connect worker (a consumer
	// group, typically), and our worker cannot join it at all.
	ReasonProtocolType Reason = "protocol-type"
	// ReasonConfigOffsetAhead: the member reports a config offset greater
	// than our config topic's end offset. It read another config topic (a
	// different Connect cluster sharing the group.id) or one that has since
	// been deleted and recreated (a stale worker). As long as it is in the
	// group the leader assigns at its offset and our workers loop forever on
	// "Forcing rebalance".
	ReasonConfigOffsetAhead Reason = "config-offset-ahead"
	// ReasonAssignmentOffsetAhead: the member holds an assignment computed
	// at a config offset our topic cannot reach; the message names the leader
	// that made it, which is where the foreign state comes from.
	ReasonAssignmentOffsetAhead Reason = "assignment-offset-ahead"
	// ReasonUndecodable: the group says "connect" but the member's metadata
	// or assignment is not Connect's format, so it cannot be vouched for.
	// Empty bytes (no Stable snapshot, no assignment yet) never count.
	ReasonUndecodable Reason = "undecodable"
)

// Foreign is one group member that cannot belong to our Connect cluster,
// with every reason found.
type Foreign struct {
	// Member is the offending member as given to [FindForeign].
	Member Member
	// Reasons lists each problem found, in the order of the Reason
	// constants; never empty.
	Reasons []Reason
	// OurEndOffset is the config-topic end offset the member was judged
	// against.
	OurEndOffset int64
	// Message is a one-line human explanation naming the member id, client
	// id and host, advertised URL, and the offsets compared.
	Message string
}

// Has reports whether r is among f's reasons.
func (f Foreign) Has(r Reason) bool {
	for _, x := range f.Reasons {
		if x == r {
			return true
		}
	}
	return false
}

// String returns the Message.
func (f Foreign) String() string { return f.Message }

// FindForeign returns one entry per member that cannot belong to the Connect
// cluster whose config topic has end offset ourConfigEndOffset, in the order
// of members. It is the heart of the group identity gate: a worker joining a
// group with such a member would never start (incident 1).
//
// ourConfigEndOffset is the config topic's end offset (ListOffsets latest,
// read_uncommitted: the high watermark): the offset the next record would
// get, 0 for an empty topic. A caught-up worker reports at most this (see the
// package documentation), so only a reported offset strictly greater is
// unreachable. A negative ourConfigEndOffset means "unknown" and disables
// both offset checks. Members reporting -1 (nothing read) are never
// foreign by offset. Offsets alone cannot catch a foreign member whose
// config topic is shorter than ours: the group gate's identity rules
// (gate/identity.go: the cluster registry, and the assigned connectors
// compared with our config topic's records) do.
func FindForeign(members []Member, ourConfigEndOffset int64) []Foreign {
	var out []Foreign
	for _, m := range members {
		var reasons []Reason
		var clauses []string
		if m.ProtocolType != ProtocolType {
			reasons = append(reasons, ReasonProtocolType)
			clauses = append(clauses, fmt.Sprintf("belongs to a group of protocol type %q (protocol %q), not %q: something other than a Connect worker uses this group.id",
				m.ProtocolType, m.Protocol, ProtocolType))
		} else {
			known := ourConfigEndOffset >= 0
			if known && m.Metadata != nil && m.Metadata.ConfigOffset > ourConfigEndOffset {
				reasons = append(reasons, ReasonConfigOffsetAhead)
				clauses = append(clauses, "reports a config offset beyond the end of our config topic: it reads a different config topic (another Connect cluster with the same group.id) or is a stale worker")
			}
			// A CONFIG_MISMATCH assignment carries the highest offset any
			// member reported, not the leader's (IncrementalCooperativeAssignor
			// .performAssignment: fillAssignments(..., CONFIG_MISMATCH, ...,
			// maxOffset)): it says nothing of the topic the leader reads, and
			// the member reporting that offset is caught by the rule above.
			if known && m.Assignment != nil && m.Assignment.Error != AssignmentConfigMismatch && m.Assignment.ConfigOffset > ourConfigEndOffset {
				reasons = append(reasons, ReasonAssignmentOffsetAhead)
				clauses = append(clauses, fmt.Sprintf("holds an assignment at config offset %d from leader %q (%s), which our config topic cannot reach: our workers would force rebalances forever",
					m.Assignment.ConfigOffset, m.Assignment.Leader, orUnknown(m.Assignment.LeaderURL)))
			}
			var bad []string
			if m.MetadataErr != nil && !errors.Is(m.MetadataErr, ErrEmpty) {
				bad = append(bad, "metadata: "+m.MetadataErr.Error())
			}
			if m.AssignmentErr != nil && !errors.Is(m.AssignmentErr, ErrEmpty) {
				bad = append(bad, "assignment: "+m.AssignmentErr.Error())
			}
			if len(bad) > 0 {
				reasons = append(reasons, ReasonUndecodable)
				clauses = append(clauses, "declares protocol type \"connect\" but sent bytes that are not Connect's group protocol ("+strings.Join(bad, "; ")+")")
			}
		}
		if len(reasons) == 0 {
			continue
		}
		out = append(out, Foreign{
			Member:       m,
			Reasons:      reasons,
			OurEndOffset: ourConfigEndOffset,
			Message:      describe(m, ourConfigEndOffset) + " " + strings.Join(clauses, "; and "),
		})
	}
	return out
}

func describe(m Member, ourEnd int64) string {
	offset := "unknown"
	if m.Metadata != nil {
		offset = fmt.Sprint(m.Metadata.ConfigOffset)
	}
	end := "unknown"
	if ourEnd >= 0 {
		end = fmt.Sprint(ourEnd)
	}
	return fmt.Sprintf("group member %q (client id %q, client host %s, advertised URL %s, reported config offset %s vs our config topic's end offset %s)",
		m.MemberID, m.ClientID, orUnknown(m.ClientHost), orUnknown(m.URL()), offset, end)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// LeaderFirstURLs returns the distinct advertised REST URLs of the group's
// Connect members, the leader's first: the leader is where followers forward
// REST requests, so it is the first peer that must resolve and answer. The
// leader is the one named by the first decoded assignment; its URL is taken
// from the assignment, so it is listed even when the leader is not (or no
// longer) among members. Members without decoded metadata or of another
// protocol type contribute nothing; empty URLs are skipped.
func LeaderFirstURLs(members []Member) []string {
	var urls []string
	seen := map[string]bool{}
	add := func(u string) {
		if u != "" && !seen[u] {
			seen[u] = true
			urls = append(urls, u)
		}
	}
	for _, m := range members {
		if m.ProtocolType == ProtocolType && m.Assignment != nil && m.Assignment.Leader != "" {
			leaderURL := m.Assignment.LeaderURL
			for _, l := range members {
				if l.MemberID == m.Assignment.Leader && l.ProtocolType == ProtocolType && l.URL() != "" {
					leaderURL = l.URL()
					break
				}
			}
			add(leaderURL)
			break
		}
	}
	for _, m := range members {
		if m.ProtocolType == ProtocolType {
			add(m.URL())
		}
	}
	return urls
}

package gate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/connect-init/connect-init/connect/proto"
)

// The open group (CONNECT_INIT_LOCK_JOINS=first).
//
// Incident 1's remedy was "start one worker, let it finish, then the
// others": the endless rebalance needed a member reading another config
// topic, and a group that a worker of ours founded and settled is proof
// that the members are ours and caught up. Once such a group exists, a
// join at a time buys nothing that the group gate (before the lock) and
// the in-worker child's re-check after it do not already refuse, and it
// costs a JVM start per worker. So a worker waiting in the startup lock's
// queue stops waiting as soon as the group is open: Stable, at least one
// member, and every member proven ours exactly as the group gate proves it.

// GroupOpenness is one look at whether the worker group is open.
type GroupOpenness struct {
	// Open: Stable, at least one member, every member caught up with its
	// assignment and judged ours, no refusal of the group gate's rules.
	Open bool
	// Members is the number of members seen; Leader the leader's URL;
	// AssignmentOffset the assignment's config offset (-1: none). The
	// DescribeGroups answer has no generation: the assignment offset and
	// the member set stand for it.
	Members          int
	Leader           string
	AssignmentOffset int64
	// Why says why the group is not open (or, open, what proved it).
	Why string
}

// GroupOpener looks at the worker group for the startup lock. It reuses
// the group gate's reads and rules (NewGroupReport, judge, the identity
// rules, decideGroup) and keeps, between looks, the member set it last
// found not proven, so a group that does not change is not read again
// four times a second.
type GroupOpener struct {
	Gate *GroupGate
	// notProven is the key of the last snapshot the identity rules did not
	// prove ours, and why.
	notProven, notProvenWhy string
	// proven is the key of a snapshot the group gate proved ours and
	// caught up a moment ago (Seed); "" when none.
	proven string
}

// Seed gives the opener the group gate's judged report of this start
// (the group step runs just before the lock step): when the next look
// finds the same snapshot (the same assignment offset and members) and
// that report proved every member ours and caught up, the group is open
// without reading the registry and our config and status topics again
// (the group step had just read them: issue 49). A report that proved
// less seeds nothing, and the look reads as before.
func (o *GroupOpener) Seed(rep *GroupReport) {
	if rep == nil || caughtUpStable(rep) != "" || provenOurs(rep) != "" {
		return
	}
	o.proven = snapshotKey(rep)
}

// NewGroupOpener returns the opener on g (NewGroupGate: identity rules on,
// read-only).
func NewGroupOpener(g *GroupGate) *GroupOpener { return &GroupOpener{Gate: g} }

// Look describes the group once and judges whether it is open. An error is
// a failed read: the caller treats it as not open and looks again.
func (o *GroupOpener) Look(ctx context.Context) (GroupOpenness, error) {
	g := o.Gate
	describe := g.describeFn
	if describe == nil {
		describe = g.describe
	}
	res := GroupOpenness{AssignmentOffset: -1}
	desc, err := describe(ctx)
	if err != nil {
		return res, err
	}
	rep := NewGroupReport(g.GroupID, g.ConfigTopic, desc)
	res.Members, res.Leader = len(rep.Members), rep.LeaderURL
	if rep.AssignmentOffset != nil {
		res.AssignmentOffset = *rep.AssignmentOffset
	}
	if why := caughtUpStable(rep); why != "" {
		res.Why = why
		return res, nil
	}
	key := snapshotKey(rep)
	if key == o.proven {
		res.Open = true
		res.Why = fmt.Sprintf("every one of the %d members of the Stable group is ours and caught up with the assignment at config offset %d (the group step's proof; the group has not changed since)", res.Members, res.AssignmentOffset)
		return res, nil
	}
	if key == o.notProven {
		res.Why = o.notProvenWhy
		return res, nil
	}
	res.Why = o.judgeOpen(ctx, rep)
	if res.Why != "" {
		o.notProven, o.notProvenWhy = key, res.Why
		return res, nil
	}
	res.Open = true
	res.Why = fmt.Sprintf("every one of the %d members of the Stable group is ours and caught up with the assignment at config offset %d", res.Members, res.AssignmentOffset)
	return res, nil
}

// caughtUpStable is the cheap part, from the description alone: the group
// is a Stable Connect group with members, each with an error-free
// assignment at the config offset it reported (it read our config topic
// to the assignment: WorkerReadiness's rule), all at one offset. It
// returns why not, or "".
func caughtUpStable(rep *GroupReport) string {
	if rep.State != GroupStable {
		return fmt.Sprintf("the group is %s", orUnknown(rep.State))
	}
	if rep.ProtocolType != proto.ProtocolType {
		return fmt.Sprintf("the group's protocol type is %q, not Connect's", rep.ProtocolType)
	}
	if len(rep.Decoded) == 0 {
		return "the group has no member"
	}
	for _, m := range rep.Decoded {
		if m.Metadata == nil || m.Assignment == nil {
			return fmt.Sprintf("member %s has no readable metadata or assignment", m.MemberID)
		}
		if m.Assignment.Error != proto.AssignmentNoError {
			return fmt.Sprintf("member %s's assignment has error %d", m.MemberID, m.Assignment.Error)
		}
		if !proto.CaughtUp(m.Metadata, m.Assignment) || rep.AssignmentOffset == nil || m.Assignment.ConfigOffset != *rep.AssignmentOffset {
			return fmt.Sprintf("member %s reports config offset %d, its assignment %d: not caught up", m.MemberID, m.Metadata.ConfigOffset, m.Assignment.ConfigOffset)
		}
	}
	return ""
}

// judgeOpen runs the group gate's rules on the snapshot: the offset rules
// against our config topic's end offset, the identity rules (registry, our
// config and status topics), the gate's decision; then every member must
// be ours (an unverified member is not proof). It returns why not, or "".
func (o *GroupOpener) judgeOpen(ctx context.Context, rep *GroupReport) string {
	g := o.Gate
	if g.Identity == nil {
		return "the identity rules are off: no member can be proven ours"
	}
	offsets := g.offsetsFn
	if offsets == nil {
		offsets = g.ConfigEndOffsets
	}
	ahead := g.registryAhead(ctx)
	defer ahead.Stop()
	hw, lso, err := offsets(ctx)
	if err != nil {
		return "our config topic's end offset could not be read: " + err.Error()
	}
	rep.ConfigEndOffset, rep.ConfigStableOffset = hw, lso
	rep.judge()
	var in *identityInputs
	if g.identityFn != nil {
		in = g.identityFn(ctx, rep)
	} else {
		in = g.readIdentityWith(ctx, rep, ahead)
	}
	rep.judgeIdentity(g.Identity, in, false)
	if err := decideGroup(rep, GroupResults(rep, g.Identity.Handover, g.Identity.Strict)); err != nil {
		return "the group gate would refuse it: " + err.Error()
	}
	return provenOurs(rep)
}

// provenOurs is the last part of an open group's proof, on a report the
// identity rules judged: the registry gives the group to no other
// cluster, and every member is judged ours (an unverified member is not
// proof). It returns why not, or "".
func provenOurs(rep *GroupReport) string {
	if rep.Identity == nil {
		return "the identity rules did not run"
	}
	if c := rep.Identity.ClaimedBy; c != nil {
		return fmt.Sprintf("the registry gives the group to the cluster of config topic %q", c.ConfigTopic)
	}
	for _, v := range rep.Verdicts {
		if v.Verdict != VerdictOurs {
			return fmt.Sprintf("member %s (%s) is %s, not proven ours", v.MemberID, orUnknown(v.URL), v.Verdict)
		}
	}
	if len(rep.Verdicts) != len(rep.Decoded) {
		return "not every member was judged"
	}
	return ""
}

// snapshotKey names a snapshot by its assignment offset and member ids.
func snapshotKey(rep *GroupReport) string {
	ids := make([]string, 0, len(rep.Decoded))
	for _, m := range rep.Decoded {
		ids = append(ids, m.MemberID)
	}
	slices.Sort(ids)
	off := int64(-1)
	if rep.AssignmentOffset != nil {
		off = *rep.AssignmentOffset
	}
	return fmt.Sprintf("%d|%s", off, strings.Join(ids, ","))
}

package gate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/registry"
	"github.com/connect-init/connect-init/step"
)

// groupRefusal is one refusal of the group gate: the check ids it refuses
// on, in the order its message tells them, and the message, built from the
// report the results were judged on.
type groupRefusal struct {
	ids     []string
	message func(rep *GroupReport, rs []checks.Result) string
}

// groupRefusals is the group gate's one ordered list of refusals. When
// several hold at once the gate refuses with the first, the most
// fundamental cause, because fixing it is what an operator must do first
// and it often removes the others:
//
//  1. The group belongs to another Connect cluster (the registry's claim),
//     told together with the foreign members: both say that two Connect
//     clusters share one group.id, and the claim is the fact the members
//     only show. Its fix (give this cluster its own CONNECT_GROUP_ID, or
//     hand the group over) holds whatever the members do, even in an
//     empty group.
//  2. A member of another Connect cluster (foreign-group-member, by any
//     rule: offsets, config-offset-stuck-behind, unknown connector,
//     registry, unassigned connectors): a worker joining beside it loops
//     forever. It is the cause of a storm when there is one (the storm's
//     evidence names it), so it comes before the storm.
//  3. A member behind the assignment that no rule could judge before the
//     timeout (member-behind-unjudged): the evidence never came in, and
//     a join is not decided on a guess (issue 47). It may be the cause of
//     a storm, so it comes before the storm.
//  4. A rebalance storm with no member to blame: the group does not
//     settle, and joining it now is one more rebalance.
//  5. What is only unproven, refused under CONNECT_INIT_STRICT: the
//     registry unreadable, members not verified as ours.
//
// Every refusal's fix is its results' own (checks.Result.Fix, the checks'
// definitions), so run and doctor give one fix for one check id.
func groupRefusals() []groupRefusal {
	return []groupRefusal{
		{ids: []string{checks.IDGroupRegisteredElsewhere, checks.IDForeignGroupMember}, message: notOursMessage},
		{ids: []string{checks.IDMemberBehindUnjudged}, message: unjudgedMessage},
		{ids: []string{checks.IDGroupRebalanceStorm}, message: stormMessage},
		{ids: []string{checks.IDRegistryUnreadable, checks.IDUnverifiedGroupMember}, message: unprovenMessage},
	}
}

// decideGroup is the group gate's one decision over the group rules'
// results for a judged report (GroupResults): the first of groupRefusals
// whose checks have an error result, as a *GateError (gate "group") whose
// fix is those results' fixes; nil when no error result holds.
func decideGroup(rep *GroupReport, rs []checks.Result) error {
	errs := checks.Errors(rs)
	if len(errs) == 0 {
		return nil
	}
	for _, ref := range groupRefusals() {
		var hit []checks.Result
		for _, id := range ref.ids {
			for _, r := range errs {
				if r.ID == id {
					hit = append(hit, r)
				}
			}
		}
		if len(hit) > 0 {
			return &GateError{Gate: step.Group, Err: errors.New(ref.message(rep, hit)), Fix: joinFixes(hit)}
		}
	}
	// An error of a group rule no refusal names: refused all the same,
	// with the rule's own words.
	return &GateError{Gate: step.Group, Err: fmt.Errorf("worker group %q: %s", rep.GroupID, summaries(errs)), Fix: joinFixes(errs)}
}

// joinFixes renders the distinct fixes of rs in order: one fix as it is,
// several each after its check id in brackets, as doctor lists them.
func joinFixes(rs []checks.Result) string {
	var ids, fixes []string
	for _, r := range rs {
		if r.Fix == "" || slices.Contains(fixes, r.Fix) {
			continue
		}
		ids, fixes = append(ids, r.ID), append(fixes, r.Fix)
	}
	if len(fixes) == 1 {
		return fixes[0]
	}
	parts := make([]string, len(fixes))
	for i := range fixes {
		parts[i] = "[" + ids[i] + "] " + fixes[i]
	}
	return strings.Join(parts, "; ")
}

// fixOf is the fix of the first result with check id id, "" if none.
func fixOf(rs []checks.Result, id string) string {
	for _, r := range rs {
		if r.ID == id {
			return r.Fix
		}
	}
	return ""
}

func has(rs []checks.Result, id string) bool {
	return slices.ContainsFunc(rs, func(r checks.Result) bool { return r.ID == id })
}

// summaries renders results as "summary (evidence)", joined by "; ".
func summaries(rs []checks.Result) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.Summary + " (" + r.Evidence + ")"
	}
	return strings.Join(parts, "; ")
}

// notOursMessage tells a group that is not this Connect cluster's: the
// registry's claim on it, then its foreign members with their evidence.
func notOursMessage(rep *GroupReport, rs []checks.Result) string {
	var msgs []string
	if ir := rep.Identity; ir != nil && ir.ClaimedBy != nil && has(rs, checks.IDGroupRegisteredElsewhere) {
		msgs = append(msgs, (&registry.ClaimedError{Owner: *ir.ClaimedBy}).Error())
	}
	foreign := has(rs, checks.IDForeignGroupMember)
	if foreign {
		for _, f := range rep.Foreign {
			msgs = append(msgs, f.Message+" [rule "+strings.Join(f.Reasons, ", ")+"]")
		}
	}
	end := "unknown"
	if rep.ConfigEndOffset >= 0 {
		end = fmt.Sprint(rep.ConfigEndOffset)
	}
	msg := fmt.Sprintf("worker group %q is not this Connect cluster's (config topic %q, end offset %s): ", rep.GroupID, rep.ConfigTopic, end)
	if foreign {
		msg += fmt.Sprintf("%d foreign member(s); a worker joining beside them would force rebalances forever in one of the two clusters (\"Current config state offset ... does not match group assignment ... Forcing rebalance\"): ", len(rep.Foreign))
	}
	msg += strings.Join(msgs, "; ")
	if rep.Note != "" {
		msg += " [" + rep.Note + "]"
	}
	return msg
}

// stormMessage tells a group that kept rebalancing through the window with
// no member to blame: the storm check's own summary and evidence.
func stormMessage(_ *GroupReport, rs []checks.Result) string {
	return rs[0].Summary + " (" + rs[0].Evidence + "); this worker does not join a group that does not settle"
}

// unjudgedMessage tells the members behind the assignment that the
// window watched until the timeout without a verdict.
func unjudgedMessage(rep *GroupReport, rs []checks.Result) string {
	return fmt.Sprintf("worker group %q: %d member(s) behind the assignment could not be judged ours or foreign before the timeout, and this worker does not join on a guess: %s",
		rep.GroupID, len(rs), summaries(rs))
}

// unprovenMessage tells what CONNECT_INIT_STRICT refuses: the registry
// unreadable, members not verified as ours.
func unprovenMessage(rep *GroupReport, _ []checks.Result) string {
	var problems []string
	if ir := rep.Identity; ir != nil && ir.RegistryError != "" {
		problems = append(problems, "the cluster registry could not be read: "+ir.RegistryError)
	}
	n := 0
	for _, v := range rep.Verdicts {
		if v.Verdict == VerdictUnverified {
			n++
			problems = append(problems, fmt.Sprintf("member %q (%s, client host %s): %s", v.MemberID, orUnknown(v.URL), orUnknown(v.ClientHost), v.Evidence))
		}
	}
	return fmt.Sprintf("worker group %q: %d member(s) not verified as this Connect cluster's, and CONNECT_INIT_STRICT=true: %s", rep.GroupID, n, strings.Join(problems, "; "))
}

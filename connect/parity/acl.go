package parity

import (
	"fmt"
	"strings"
)

// TransactionalID is the transactional id of the leader's config-topic
// producer under exactly.once.source.support preparing or enabled:
// DistributedConfig.transactionalProducerId ("connect-cluster-" +
// group.id). Each exactly-once task's producer uses
// <group.id>-<connector>-<task> (DistributedConfig.taskTransactionalId);
// those are not known before the connectors exist.
func TransactionalID(group string) string { return "connect-cluster-" + group }

// The operations the exactly-once leader needs on its TransactionalId
// (KIP-618, "ACL requirements": Write and Describe; the producer's
// FindCoordinator needs Describe, InitProducerId and the transaction
// requests need Write).
const (
	OpWrite    = "Write"
	OpDescribe = "Describe"
	opAll      = "All"
)

// ACL is one access control entry on a TransactionalId, as DescribeAcls
// returns it.
type ACL struct {
	// Resource is the resource name ("*" with a literal pattern matches
	// every name); Prefixed says whether the pattern is a prefix.
	Resource string
	Prefixed bool
	// Principal ("User:alice", or "User:*"), Host ("*" or an address) and
	// Operation ("Write", "Describe", "All", ...).
	Principal, Host, Operation string
	Allow                      bool
}

func (a ACL) String() string {
	kind, pattern := "DENY", "LITERAL"
	if a.Allow {
		kind = "ALLOW"
	}
	if a.Prefixed {
		pattern = "PREFIXED"
	}
	return fmt.Sprintf("%s %s %s from %s on TransactionalId:%s:%s", kind, a.Principal, a.Operation, a.Host, pattern, a.Resource)
}

// Verdict is the authorizer's answer for one operation.
type Verdict int

const (
	// NoACL: no ACL names the resource at all; the broker's
	// allow.everyone.if.no.acl.found decides (default false: denied).
	NoACL Verdict = iota
	// Allowed by an ALLOW ACL and no DENY.
	Allowed
	// DeniedByACL: a DENY ACL matches (DENY wins over ALLOW).
	DeniedByACL
	// NotAllowed: ACLs name the resource, none allows the principal.
	NotAllowed
)

// Decision is a verdict and the ACL it rests on (zero for NoACL and
// NotAllowed). OtherHost, for NotAllowed, is an ALLOW that would apply
// from another host: the host a broker sees is not known for sure here
// (NAT, proxies), so such a verdict is not a refusal.
type Decision struct {
	Verdict   Verdict
	Rule      ACL
	OtherHost *ACL
}

// Authorize judges principal's op on resource from host as KRaft's
// StandardAuthorizer does (StandardAuthorizerData.findAclRule and
// findResult; ZooKeeper's AclAuthorizer judges the same way): an ACL
// applies when its name equals the resource (literal), is a prefix of it
// (prefixed) or is the literal wildcard "*"; its principal is principal or
// "User:*"; its host is host or "*"; its operation is op or All, and an
// ALLOW of Read, Write, Delete or Alter also allows Describe (an ALLOW
// only: a DENY of Write does not deny Describe). A matching DENY wins;
// else a matching ALLOW allows; else, when any ACL names the resource
// (whoever it is for), the answer is denied; else the broker's default
// (NoACL). Super users (super.users) pass before any ACL: the caller
// learns that from the broker (TxnAccess).
func Authorize(acls []ACL, resource, principal, host, op string) Decision {
	var allow, elsewhere *ACL
	named := false
	for i, a := range acls {
		if !resourceMatches(a, resource) {
			continue
		}
		named = true
		if a.Principal != principal && a.Principal != "User:*" || !opMatches(a, op) {
			continue
		}
		if a.Host != "*" && a.Host != host {
			if a.Allow && elsewhere == nil {
				elsewhere = &acls[i]
			}
			continue
		}
		if !a.Allow {
			return Decision{Verdict: DeniedByACL, Rule: a}
		}
		if allow == nil {
			allow = &acls[i]
		}
	}
	switch {
	case allow != nil:
		return Decision{Verdict: Allowed, Rule: *allow}
	case named:
		return Decision{Verdict: NotAllowed, OtherHost: elsewhere}
	}
	return Decision{Verdict: NoACL}
}

func resourceMatches(a ACL, resource string) bool {
	if a.Prefixed {
		return strings.HasPrefix(resource, a.Resource)
	}
	return a.Resource == resource || a.Resource == "*"
}

func opMatches(a ACL, op string) bool {
	switch {
	case strings.EqualFold(a.Operation, opAll), strings.EqualFold(a.Operation, op):
		return true
	case a.Allow && strings.EqualFold(op, OpDescribe):
		switch strings.ToLower(a.Operation) {
		case "read", "write", "delete", "alter":
			return true
		}
	}
	return false
}

// Probe is what the broker itself answered when this worker's principal
// asked to describe the transactional id (DescribeTransactions, which
// needs Describe on it and changes nothing).
type Probe int

const (
	// ProbeNotAsked: not asked (no __transaction_state yet: finding a
	// transaction coordinator would create it).
	ProbeNotAsked Probe = iota
	// ProbeAllowed: the broker let the principal describe it.
	ProbeAllowed
	// ProbeDenied: TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
	ProbeDenied
)

// TxnAccess is the judgement of the principal's access to the
// transactional id: the operations it lacks, the ones the ACLs leave to
// the broker's default (NoACL, with no broker answer to settle them), and
// the rule each rests on.
type TxnAccess struct {
	Missing   []string
	Undecided []string
	Rules     []string
}

// JudgeTxnAccess judges Write and Describe on id for principal from host,
// from the ACLs and the broker's own answer to a Describe (probe). The
// broker's answer settles what the ACLs cannot show: a principal the
// broker lets describe the id although no ACL allows it is a super user or
// meets the default allow.everyone.if.no.acl.found=true, and either way may
// Write too; one the broker refuses lacks Describe, whatever the ACLs seem
// to say.
func JudgeTxnAccess(acls []ACL, id, principal, host string, probe Probe) TxnAccess {
	var out TxnAccess
	desc := Authorize(acls, id, principal, host, OpDescribe)
	if probe == ProbeAllowed && desc.Verdict != Allowed {
		out.Rules = append(out.Rules, "the broker lets "+principal+" describe it although no ACL allows it: a super user, or allow.everyone.if.no.acl.found=true")
		return out
	}
	for _, op := range []string{OpWrite, OpDescribe} {
		d := Authorize(acls, id, principal, host, op)
		// A broker that refuses the Describe lacks it whatever the ACLs
		// seem to say (our host may not be the one it sees); with no ACL
		// on the id, its default denies (allow.everyone.if.no.acl.found
		// is false), Write as well.
		if probe == ProbeDenied && (d.Verdict == NoACL || op == OpDescribe && d.Verdict != DeniedByACL) {
			d = Decision{Verdict: NotAllowed}
		}
		switch d.Verdict {
		case Allowed:
			out.Rules = append(out.Rules, op+" allowed by "+d.Rule.String())
		case DeniedByACL:
			out.Missing = append(out.Missing, op)
			out.Rules = append(out.Rules, op+" denied by "+d.Rule.String())
		case NotAllowed:
			if d.OtherHost != nil {
				out.Undecided = append(out.Undecided, op)
				out.Rules = append(out.Rules, op+" allowed only from host "+d.OtherHost.Host+" by "+d.OtherHost.String()+" (this worker's address as seen from here: "+host+")")
				continue
			}
			out.Missing = append(out.Missing, op)
			out.Rules = append(out.Rules, op+": no ACL allows "+principal)
		case NoACL:
			out.Undecided = append(out.Undecided, op)
			out.Rules = append(out.Rules, op+": no ACL names the id, so "+principal+" may only if the brokers set allow.everyone.if.no.acl.found=true or it is a super user (super.users)")
		}
	}
	return out
}

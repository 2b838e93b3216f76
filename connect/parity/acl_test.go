package parity

import (
	"strings"
	"testing"
)

// Authorize follows StandardAuthorizerData.findAclRule/findResult.
func TestAuthorize(t *testing.T) {
	const id, me, host = "connect-cluster-g", "User:connect", "10.0.0.7"
	allow := func(res string, prefixed bool, p, h, op string) ACL {
		return ACL{Resource: res, Prefixed: prefixed, Principal: p, Host: h, Operation: op, Allow: true}
	}
	deny := func(res string, prefixed bool, p, h, op string) ACL {
		a := allow(res, prefixed, p, h, op)
		a.Allow = false
		return a
	}
	for _, tc := range []struct {
		name string
		acls []ACL
		op   string
		want Verdict
	}{
		{"no acl at all", nil, OpWrite, NoACL},
		{"acl on another id only", []ACL{allow("connect-cluster-h", false, me, "*", "Write")}, OpWrite, NoACL},
		{"literal allow", []ACL{allow(id, false, me, "*", "Write")}, OpWrite, Allowed},
		{"literal of a prefix is not a match", []ACL{allow("connect-cluster-", false, me, "*", "Write")}, OpWrite, NoACL},
		{"prefixed allow", []ACL{allow("connect-cluster-", true, me, "*", "Write")}, OpWrite, Allowed},
		{"prefixed longer than the id", []ACL{allow(id+"x", true, me, "*", "Write")}, OpWrite, NoACL},
		{"wildcard resource", []ACL{allow("*", false, me, "*", "Write")}, OpWrite, Allowed},
		{"prefixed star is a literal prefix, not a wildcard", []ACL{allow("*", true, me, "*", "Write")}, OpWrite, NoACL},
		{"wildcard principal", []ACL{allow(id, false, "User:*", "*", "Write")}, OpWrite, Allowed},
		{"other principal: resource named, not allowed", []ACL{allow(id, false, "User:other", "*", "Write")}, OpWrite, NotAllowed},
		{"principal case matters", []ACL{allow(id, false, "User:Connect", "*", "Write")}, OpWrite, NotAllowed},
		{"host matches", []ACL{allow(id, false, me, host, "Write")}, OpWrite, Allowed},
		{"other host", []ACL{allow(id, false, me, "10.0.0.8", "Write")}, OpWrite, NotAllowed},
		{"deny from this host", []ACL{allow(id, false, me, "*", "Write"), deny(id, false, me, host, "Write")}, OpWrite, DeniedByACL},
		{"All allows Write", []ACL{allow(id, false, me, "*", "All")}, OpWrite, Allowed},
		{"Read does not allow Write", []ACL{allow(id, false, me, "*", "Read")}, OpWrite, NotAllowed},
		{"Write implies Describe", []ACL{allow(id, false, me, "*", "Write")}, OpDescribe, Allowed},
		{"deny Write does not deny Describe", []ACL{deny(id, false, me, "*", "Write"), allow(id, false, me, "*", "Describe")}, OpDescribe, Allowed},
		{"deny over allow", []ACL{allow(id, false, me, "*", "Write"), deny("connect-", true, "User:*", "*", "Write")}, OpWrite, DeniedByACL},
		{"deny All", []ACL{allow(id, false, me, "*", "Write"), deny("*", false, me, "*", "All")}, OpWrite, DeniedByACL},
		{"deny from another host does not apply", []ACL{allow(id, false, me, "*", "Write"), deny(id, false, me, "10.9.9.9", "Write")}, OpWrite, Allowed},
		{"deny of another principal does not apply", []ACL{allow(id, false, me, "*", "Write"), deny(id, false, "User:other", "*", "Write")}, OpWrite, Allowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Authorize(tc.acls, id, me, host, tc.op); got.Verdict != tc.want {
				t.Errorf("got %v (%v), want %v", got.Verdict, got.Rule, tc.want)
			}
		})
	}
}

// The broker's own answer settles what the ACLs cannot: super users and
// the default rule.
func TestJudgeTxnAccess(t *testing.T) {
	const id, me = "connect-cluster-g", "User:connect"
	other := []ACL{{Resource: id, Principal: "User:other", Host: "*", Operation: "Write", Allow: true}}
	for _, tc := range []struct {
		name               string
		acls               []ACL
		probe              Probe
		missing, undecided string
		rule               string
	}{
		{"granted", []ACL{{Resource: id, Principal: me, Host: "*", Operation: "Write", Allow: true}}, ProbeAllowed, "", "", "Write allowed by ALLOW User:connect Write"},
		{"named for another", other, ProbeNotAsked, "Write Describe", "", "no ACL allows User:connect"},
		{"broker denies", other, ProbeDenied, "Write Describe", "", ""},
		{"super user or default allow", other, ProbeAllowed, "", "", "super user"},
		{"no acl, not asked", nil, ProbeNotAsked, "", "Write Describe", ""},
		{"no acl, broker allows", nil, ProbeAllowed, "", "", "allow.everyone.if.no.acl.found"},
		{"no acl, broker denies (default deny)", nil, ProbeDenied, "Write Describe", "", ""},
		{"allowed only from another host: not a refusal", []ACL{{Resource: id, Principal: me, Host: "10.9.9.9", Operation: "Write", Allow: true}}, ProbeNotAsked,
			"", "Write Describe", "Write allowed only from host 10.9.9.9"},
		{"another host, and the broker denies", []ACL{{Resource: id, Principal: me, Host: "10.9.9.9", Operation: "Write", Allow: true}}, ProbeDenied,
			"Describe", "Write", ""},
		{"deny Write", []ACL{{Resource: id, Principal: me, Host: "*", Operation: "All", Allow: true}, {Resource: id, Principal: "User:*", Host: "*", Operation: "Write"}}, ProbeAllowed,
			"Write", "", "Write denied by DENY User:* Write from * on TransactionalId:LITERAL:connect-cluster-g"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := JudgeTxnAccess(tc.acls, id, me, "h", tc.probe)
			if got := strings.Join(a.Missing, " "); got != tc.missing {
				t.Errorf("missing %q, want %q (%v)", got, tc.missing, a.Rules)
			}
			if got := strings.Join(a.Undecided, " "); got != tc.undecided {
				t.Errorf("undecided %q, want %q", got, tc.undecided)
			}
			if !strings.Contains(strings.Join(a.Rules, "; "), tc.rule) {
				t.Errorf("rules %v lack %q", a.Rules, tc.rule)
			}
		})
	}
}

package gate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/parity"
	"github.com/connect-init/connect-init/internal/clock"
)

type fakeEOS struct {
	exists   bool
	isr      map[int32]int
	minISR   int
	live, rf int
	lso      int64
	lsoAsked int
	acls     []parity.ACL
	aclErr   error
	probe    parity.Probe
	probed   int
	versions map[int32]map[int16]int16
}

func (f *fakeEOS) APIVersions() (map[int32]map[int16]int16, error) { return f.versions, nil }

func (f *fakeEOS) TxnState() (bool, map[int32]int, int, error) { return f.exists, f.isr, f.minISR, nil }
func (f *fakeEOS) Brokers() (int, int, error)                  { return f.live, f.rf, nil }
func (f *fakeEOS) StableOffset(string) (int64, error) {
	f.lsoAsked++
	return f.lso, nil
}

func (f *fakeEOS) TxnACLs() ([]parity.ACL, error) { return f.acls, f.aclErr }
func (f *fakeEOS) DescribeTxn(string) (parity.Probe, error) {
	f.probed++
	return f.probe, nil
}
func (f *fakeEOS) Host() string { return "10.0.0.7" }

func eosIDs(rs []checks.Result) map[string]bool {
	out := map[string]bool{}
	for _, r := range rs {
		if r.Severity == checks.Error {
			out[r.ID] = true
		}
	}
	return out
}

func TestEOSReadiness(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	open := &GroupReport{ConfigTopic: "c", ConfigEndOffset: 10, ConfigStableOffset: 7}
	for _, tc := range []struct {
		name    string
		support string
		f       fakeEOS
		rep     *GroupReport
		want    []string
	}{
		{"disabled: nothing read", "disabled", fakeEOS{}, open, nil},
		{"a broker without transactions", "enabled", fakeEOS{exists: true, versions: map[int32]map[int16]int16{
			1: {2: 9, 10: 6, 22: 5, 24: 5, 26: 5}, 2: {2: 9, 10: 6}}}, nil, []string{parity.IDBrokersTooOld}},
		{"no authorizer", "enabled", fakeEOS{exists: true, aclErr: sarama.ErrSecurityDisabled}, nil, nil},
		{"acl missing", "enabled", fakeEOS{exists: true, probe: parity.ProbeDenied,
			acls: []parity.ACL{{Resource: "connect-cluster-g", Principal: "User:other", Host: "*", Operation: "Write", Allow: true}}}, nil,
			[]string{parity.IDTxnIDNotAuthorized}},
		{"acl granted", "enabled", fakeEOS{exists: true, probe: parity.ProbeAllowed,
			acls: []parity.ACL{{Resource: "connect-cluster-", Prefixed: true, Principal: "User:connect", Host: "*", Operation: "Write", Allow: true}}}, nil, nil},
		{"ready", "enabled", fakeEOS{exists: true, isr: map[int32]int{0: 3, 1: 3}, minISR: 2}, &GroupReport{ConfigEndOffset: 5, ConfigStableOffset: 5}, nil},
		{"cannot be created", "preparing", fakeEOS{live: 1, rf: 3}, nil, []string{parity.IDTxnStateCannotBeCreated}},
		{"can be created", "enabled", fakeEOS{live: 3, rf: 3}, nil, nil},
		{"below min isr", "enabled", fakeEOS{exists: true, isr: map[int32]int{0: 1, 1: 3}, minISR: 2}, nil, []string{parity.IDTxnStateBelowMinISR}},
		{"hanging", "enabled", fakeEOS{exists: true, isr: map[int32]int{0: 3}, minISR: 2, lso: 7}, open, []string{parity.IDConfigTopicTxnHanging}},
		{"committed within the window", "enabled", fakeEOS{exists: true, isr: map[int32]int{0: 3}, minISR: 2, lso: 10}, open, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewStepping(start)
			f := tc.f
			rs, err := EOSResults(ctx, EOSWorker{Group: "g", Support: tc.support, Principal: "User:connect"}, tc.rep, &f, clk)
			if err != nil {
				t.Fatal(err)
			}
			got := eosIDs(rs)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v: %s", got, tc.want, checks.Join(rs))
			}
			for _, id := range tc.want {
				if !got[id] {
					t.Errorf("missing %s: %s", id, checks.Join(rs))
				}
			}
			if tc.rep == open && tc.support != "disabled" && (f.lsoAsked != 1 || clk.Waited() != EOSHangWindow) {
				t.Errorf("an open transaction: asked again %d time(s) after %v, want once after %v", f.lsoAsked, clk.Waited(), EOSHangWindow)
			}
		})
	}
}

// The transactional id's ACLs: what cannot be judged is a warning, never
// a refusal, and the refusal names the missing operation and the
// kafka-acls line; the broker is asked (DescribeTransactions) only when
// __transaction_state exists.
func TestEOSTransactionalIDACL(t *testing.T) {
	ctx := context.Background()
	other := []parity.ACL{{Resource: "connect-cluster-g", Principal: "User:other", Host: "*", Operation: "All", Allow: true}}
	for _, tc := range []struct {
		name      string
		w         EOSWorker
		f         fakeEOS
		sev       checks.Severity
		id        string
		wants     []string
		wantProbe int
	}{
		{name: "principal unknown", w: EOSWorker{NoPrincipal: "sasl.mechanism=GSSAPI maps ..."}, f: fakeEOS{exists: true, acls: other},
			sev: checks.Warning, id: parity.IDTxnIDUnchecked, wants: []string{"cannot tell the principal", "GSSAPI"}},
		{name: "acls unreadable", w: EOSWorker{Principal: "User:connect"}, f: fakeEOS{exists: true, aclErr: sarama.ErrClusterAuthorizationFailed},
			sev: checks.Warning, id: parity.IDTxnIDUnchecked, wants: []string{"DescribeAcls"}},
		{name: "no acl names it, not asked", w: EOSWorker{Principal: "User:connect"}, f: fakeEOS{},
			sev: checks.Warning, id: parity.IDTxnIDUnchecked, wants: []string{"allow.everyone.if.no.acl.found", "super.users"}},
		{name: "refused", w: EOSWorker{Principal: "User:connect", Bootstrap: "k1:9092"}, f: fakeEOS{exists: true, acls: other, probe: parity.ProbeDenied},
			sev: checks.Error, id: parity.IDTxnIDNotAuthorized, wantProbe: 1,
			wants: []string{"User:connect may not Write or Describe TransactionalId connect-cluster-g",
				"kafka-acls --bootstrap-server k1:9092 --command-config <an admin's client properties> --add --allow-principal 'User:connect' --operation Write --operation Describe --transactional-id connect-cluster-g"}},
		{name: "super user", w: EOSWorker{Principal: "User:connect"}, f: fakeEOS{exists: true, acls: other, probe: parity.ProbeAllowed}, wantProbe: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.w.Group, tc.w.Support = "g", "enabled"
			f := tc.f
			f.minISR = 2
			rs, err := EOSResults(ctx, tc.w, nil, &f, clock.NewStepping(time.Now()))
			if err != nil {
				t.Fatal(err)
			}
			if f.probed != tc.wantProbe {
				t.Errorf("DescribeTransactions asked %d time(s), want %d", f.probed, tc.wantProbe)
			}
			if tc.id == "" {
				if len(rs) != 0 {
					t.Fatalf("want no result: %s", checks.Join(rs))
				}
				return
			}
			if len(rs) != 1 || rs[0].ID != tc.id || rs[0].Severity != tc.sev {
				t.Fatalf("want one %s %s: %s", tc.sev, tc.id, checks.Join(rs))
			}
			text := rs[0].Summary + " | " + rs[0].Evidence + " | " + rs[0].Fix
			for _, want := range tc.wants {
				if !strings.Contains(text, want) {
					t.Errorf("lacks %q: %s", want, text)
				}
			}
		})
	}
}

func TestACLPrincipal(t *testing.T) {
	plain := sarama.NewConfig()
	plain.Net.SASL.Enable, plain.Net.SASL.Mechanism, plain.Net.SASL.User = true, sarama.SASLTypePlaintext, "alice"
	oauth := sarama.NewConfig()
	oauth.Net.SASL.Enable, oauth.Net.SASL.Mechanism = true, sarama.SASLTypeOAuth
	for _, tc := range []struct {
		cfg       *sarama.Config
		want, why string
	}{
		{sarama.NewConfig(), "User:ANONYMOUS", ""},
		{plain, "User:alice", ""},
		{oauth, "", "OAUTHBEARER"},
	} {
		p, why := ACLPrincipal(tc.cfg)
		if p != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("got %q (%q), want %q (%q)", p, why, tc.want, tc.why)
		}
	}
}

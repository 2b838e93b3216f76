package doctor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/parity"
	"github.com/connect-init/connect-init/connect/registry"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/workerconfig"
)

func parityReport(values map[string]string) *gate.GroupReport {
	g := &gate.GroupReport{GroupID: "g", ConfigTopic: "c", Identity: &gate.IdentityReport{Registry: &registry.View{Exists: true}}}
	for u, vc := range values {
		g.Members = append(g.Members, gate.GroupMember{MemberID: "m-" + u, URL: u})
		w := registry.Worker{Cluster: registry.Cluster{GroupID: "g", ConfigTopic: "c"}, URL: u}
		if vc != "" {
			w.Settings = parity.Of(workerconfig.Properties{"value.converter": vc, "key.converter": "K", "group.id": "g",
				"config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s"}, "")
		}
		g.Identity.Registry.Workers = append(g.Identity.Registry.Workers, w)
	}
	return g
}

// doctor shows the group's settings side by side, one row per differing
// setting and one column per worker, and one finding per setting and rule.
func TestParitySideBySide(t *testing.T) {
	g := parityReport(map[string]string{"http://w1:8083": "J", "http://w2:8083": "J", "http://w3:8083": "A", "http://old:8083": ""})
	rs := Diagnose(&Snapshot{Group: g})
	var found []checks.Result
	for _, r := range rs {
		if r.ID == parity.IDSettingDiffers {
			found = append(found, r)
		}
	}
	if len(found) != 1 || found[0].Severity != checks.Error || !strings.Contains(found[0].Subject, "value.converter") {
		t.Fatalf("findings: %s", checks.Join(rs))
	}
	var b bytes.Buffer
	printParity(&printer{w: &b}, g)
	out := b.String()
	for _, want := range []string{"differ on 1 setting", "http://old:8083", "http://w3:8083", "value.converter", "unknown"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "key.converter") {
		t.Errorf("a setting the workers agree on is shown:\n%s", out)
	}
	b.Reset()
	printParity(&printer{w: &b}, parityReport(map[string]string{"http://w1:8083": "J", "http://w2:8083": "J"}))
	if !strings.Contains(b.String(), "agree on every setting") {
		t.Errorf("agreeing workers:\n%s", b.String())
	}
}

// doctor renders the exactly-once readiness look (gate.EOSLook's results)
// as findings, and a look that could not be taken as a check failure.
func TestEOSFindings(t *testing.T) {
	r := checks.Result{ID: parity.IDTxnIDNotAuthorized, Severity: checks.Error, Subject: "TransactionalId connect-cluster-g"}
	rs := Diagnose(&Snapshot{EOS: []checks.Result{r}})
	found := false
	for _, f := range rs {
		found = found || f.ID == parity.IDTxnIDNotAuthorized && f.Severity == checks.Error
	}
	if !found {
		t.Errorf("no %s finding: %s", parity.IDTxnIDNotAuthorized, checks.Join(rs))
	}
	rs = Diagnose(&Snapshot{EOSErr: "describe __transaction_state: EOF"})
	found = false
	for _, f := range rs {
		found = found || f.ID == IDCheckFailed && strings.Contains(f.Evidence, "EOF")
	}
	if !found {
		t.Errorf("no check-failed finding: %s", checks.Join(rs))
	}
}

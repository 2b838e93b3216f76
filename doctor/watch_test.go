package doctor

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
)

func docWith(state string, members []string, findings ...checks.Result) *Document {
	g := &gate.GroupReport{State: state}
	for _, m := range members {
		g.Members = append(g.Members, gate.GroupMember{MemberID: m})
	}
	return &Document{Cluster: Cluster{Group: g}, Findings: findings}
}

func TestDiff(t *testing.T) {
	storm := checks.Result{ID: checks.IDGroupRebalanceStorm, Severity: checks.Error, Subject: "g", Summary: "storming"}
	behind := checks.Result{ID: IDMemberConfigOffsetBehind, Severity: checks.Warning, Subject: "q1", Summary: "behind"}
	a := docWith("Stable", []string{"p1", "q1"}, behind)
	b := docWith("PreparingRebalance", []string{"p1", "p2"}, storm)
	c := Diff(a, b)
	if len(c.Appeared) != 1 || c.Appeared[0].ID != storm.ID || len(c.Cleared) != 1 || c.Cleared[0].ID != behind.ID ||
		strings.Join(c.Joined, ",") != "p2" || strings.Join(c.Left, ",") != "q1" || c.StateFrom != "Stable" || c.StateTo != "PreparingRebalance" {
		t.Fatalf("diff %+v", c)
	}
	var out bytes.Buffer
	if err := c.WriteText(&out, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"group Stable -> PreparingRebalance", "member joined p2", "member left q1", "+ ERROR [group-rebalance-storm] storming", "- cleared [member-config-offset-behind]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, out.String())
		}
	}
	if !Diff(a, a).Empty() {
		t.Errorf("a look equal to the one before is a change: %+v", Diff(a, a))
	}
}

// Watch emits the first look and then only looks that differ, paced on
// the clock, until its context ends.
func TestWatchEmitsOnlyChanges(t *testing.T) {
	storm := checks.Result{ID: checks.IDGroupRebalanceStorm, Severity: checks.Error, Subject: "g"}
	looks := []*Document{docWith("Stable", []string{"p1"}), docWith("Stable", []string{"p1"}), docWith("Stable", []string{"p1", "q1"}, storm),
		docWith("Stable", []string{"p1", "q1"}, storm), docWith("Stable", []string{"p1"})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clock.NewStepping(time.Unix(0, 0))
	n := 0
	look := func(context.Context) *Document {
		d := looks[n]
		if n++; n == len(looks) {
			cancel()
		}
		return d
	}
	var emitted []int
	err := Watch(ctx, 5*time.Second, clk, look, func(d *Document, c *Change) error {
		emitted = append(emitted, n-1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := emitted; len(got) != 2 || got[0] != 0 || got[1] != 2 {
		t.Fatalf("emitted looks %v, want [0 2] (the last look came after the context ended)", got)
	}
	if clk.Waited() != 4*5*time.Second {
		t.Errorf("waited %s on the clock, want 20s", clk.Waited())
	}
}

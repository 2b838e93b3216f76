package doctor

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/internal/clocktest"
)

// Waiting costs nothing (issue 48): `doctor --watch` on a cluster whose
// brokers stay down for two hours of injected time (each look the same
// error finding) looks once every --interval (5 s, its default and its
// floor is 1 s) and prints what it found once, not once a look: the
// output grows with changes, not with time.
func TestWatchBrokersDownPace(t *testing.T) {
	const horizon, interval = 2 * time.Hour, 5 * time.Second
	down := checks.Result{ID: IDBrokerUnreachable, Severity: checks.Error, Subject: "k1:9092", Summary: "no broker answers (test)"}
	looks := int(horizon/interval) + 1
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktest.NewHorizon(horizon, 2*looks, cancel)
	var looked atomic.Int64
	look := func(context.Context) *Document {
		looked.Add(1)
		return &Document{Findings: []checks.Result{down}}
	}
	var out bytes.Buffer
	emits := 0
	err := Watch(ctx, interval, clk, look, func(d *Document, c *Change) error {
		emits++
		return c.WriteText(&out, clk.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	clk.AssertReached(t)
	clk.AssertPace(t, interval, int(time.Minute/interval)+1)
	if n := int(looked.Load()); n > looks+1 {
		t.Errorf("%d looks in %v, want at most %d (one every %v)", n, horizon, looks+1, interval)
	}
	if emits != 1 || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("emitted %d times, %d lines, want the first look's one line only:\n%s", emits, strings.Count(out.String(), "\n"), out.String())
	}
	t.Logf("%d looks, %d emits in %v of injected time", looked.Load(), emits, clk.Elapsed())
}

package startup

import (
	"context"
	"testing"
	"time"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/parity"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
)

type fakeEOS struct {
	exists   bool
	isr      map[int32]int
	minISR   int
	live, rf int
	lso      int64
	lsoAsked int
}

func (f *fakeEOS) txnState() (bool, map[int32]int, int, error) { return f.exists, f.isr, f.minISR, nil }
func (f *fakeEOS) brokers() (int, int, error)                  { return f.live, f.rf, nil }
func (f *fakeEOS) stableOffset(string) (int64, error) {
	f.lsoAsked++
	return f.lso, nil
}

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
	open := &gate.GroupReport{ConfigTopic: "c", ConfigEndOffset: 10, ConfigStableOffset: 7}
	for _, tc := range []struct {
		name    string
		support string
		f       fakeEOS
		rep     *gate.GroupReport
		want    []string
	}{
		{"disabled: nothing read", "disabled", fakeEOS{}, open, nil},
		{"ready", "enabled", fakeEOS{exists: true, isr: map[int32]int{0: 3, 1: 3}, minISR: 2}, &gate.GroupReport{ConfigEndOffset: 5, ConfigStableOffset: 5}, nil},
		{"cannot be created", "preparing", fakeEOS{live: 1, rf: 3}, nil, []string{parity.IDTxnStateCannotBeCreated}},
		{"can be created", "enabled", fakeEOS{live: 3, rf: 3}, nil, nil},
		{"below min isr", "enabled", fakeEOS{exists: true, isr: map[int32]int{0: 1, 1: 3}, minISR: 2}, nil, []string{parity.IDTxnStateBelowMinISR}},
		{"hanging", "enabled", fakeEOS{exists: true, isr: map[int32]int{0: 3}, minISR: 2, lso: 7}, open, []string{parity.IDConfigTopicTxnHanging}},
		{"committed within the window", "enabled", fakeEOS{exists: true, isr: map[int32]int{0: 3}, minISR: 2, lso: 10}, open, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewStepping(start)
			f := tc.f
			rs, err := eosResults(ctx, "g", tc.support, tc.rep, &f, clk)
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
			if tc.rep == open && tc.support != "disabled" && (f.lsoAsked != 1 || clk.Waited() != hangWindow) {
				t.Errorf("an open transaction: asked again %d time(s) after %v, want once after %v", f.lsoAsked, clk.Waited(), hangWindow)
			}
		})
	}
}

package peers

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A member, or the leader, that does not answer and has left the group
// since the group was read (in a restart, the worker this one replaces)
// is not waited for: the check ends with StatusLeft, no warning, no
// failure, as soon as a look at the group no longer has it.
func TestLeftPeerNotWaitedFor(t *testing.T) {
	for _, tc := range []struct {
		name          string
		leader        func(w *peerWorld) string
		members       func(w *peerWorld) []string
		leftAfter     int64 // Left says "left" from this call on
		wantLeftCalls int64
	}{
		{"member", func(w *peerWorld) string { return w.url("good") }, func(w *peerWorld) []string { return []string{w.url("down")} }, 3, 3},
		{"leader (fail severity)", func(w *peerWorld) string { return w.url("down") }, func(w *peerWorld) []string { return nil }, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newPeerWorld(t)
			g := gate(t, "", w.r, peerAddrs)
			// Without Left the member would be waited for the whole warn
			// wait, the leader until ctx's deadline (and then fail).
			g.WarnWait = time.Hour
			var calls atomic.Int64
			down := w.url("down")
			g.Left = func(_ context.Context, url string) bool {
				if url != down {
					t.Errorf("Left asked about %s, which answers", url)
					return false
				}
				return calls.Add(1) >= tc.leftAfter
			}
			rep, err := g.Check(ctxFor(t, time.Minute), "", tc.leader(w), tc.members(w), nil)
			if err != nil {
				t.Fatal(err)
			}
			got := find(t, rep, down)
			if got.Status != StatusLeft || got.Severity != SeverityOK || got.Error != "" || got.Fix != "" {
				t.Errorf("left peer = %+v, want status left, severity ok", got)
			}
			if rep.Warned != 0 || rep.Failed != 0 {
				t.Errorf("warned %d, failed %d; want none", rep.Warned, rep.Failed)
			}
			if n := calls.Load(); n != tc.wantLeftCalls {
				t.Errorf("Left asked %d times, want %d (once per failed round until it said left)", n, tc.wantLeftCalls)
			}
		})
	}
}

// A peer still a member is waited for as before (the warn wait), and
// reported.
func TestPeerStillMemberWaitedFor(t *testing.T) {
	w := newPeerWorld(t)
	g := gate(t, "", w.r, peerAddrs)
	var calls atomic.Int64
	g.Left = func(context.Context, string) bool { calls.Add(1); return false }
	rep, err := g.Check(ctxFor(t, time.Minute), "", w.url("good"), []string{w.url("down")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := find(t, rep, w.url("down")); got.Status != StatusUnreachable || got.Severity != SeverityWarn {
		t.Errorf("down member = %+v, want unreachable, warn", got)
	}
	if calls.Load() < 2 {
		t.Errorf("Left asked %d times, want once per failed round", calls.Load())
	}
}

// A configured peer is a name or an address, not a member's advertised
// URL: Left is not asked about it.
func TestLeftNotAskedForConfiguredPeers(t *testing.T) {
	w := newPeerWorld(t)
	g := gate(t, "", w.r, peerAddrs)
	g.Peers = []string{"down.test:" + w.down}
	g.Left = func(_ context.Context, url string) bool { t.Errorf("Left asked about %s", url); return true }
	rep, err := g.Check(ctxFor(t, time.Minute), "", w.url("good"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Warned != 1 {
		t.Errorf("warned %d, want the configured peer's warning", rep.Warned)
	}
}

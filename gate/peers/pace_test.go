package peers

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/clocktest"
)

// Waiting costs nothing (issue 48): the peers step's two wait loops, the
// probe of a peer and the self-probe, each driven through two hours of
// injected time with the default retry interval (1 s): one round a second
// at most, and one wait line every 5 s, not one a round.

const peersHorizon = 2 * time.Hour

// peersMost is the most rounds the horizon allows at one a second, plus
// the first.
const peersMost = int(peersHorizon/defaultRetryInterval) + 2

// assertWaitLines checks msg was logged at least once and at most once
// every progressEvery, and that the loop wrote little else.
func assertWaitLines(t *testing.T, logs *clocktest.Logs, msg string) {
	t.Helper()
	n, most := logs.Count(msg), int(peersHorizon/progressEvery)+2
	if n == 0 || n > most {
		t.Errorf("%d %q lines in %v, want between 1 and %d (one every %v)", n, msg, peersHorizon, most, progressEvery)
	}
	if all := logs.Total(); all > n+10 {
		t.Errorf("%d log lines in all, %d of them wait lines: the loop logs more than its wait line", all, n)
	}
}

// A peer whose name never resolves (a worker of the group that is gone
// from DNS) is looked up once a second until the deadline.
func TestPeerWaitPace(t *testing.T) {
	w := newPeerWorld(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktest.NewHorizon(peersHorizon, 2*peersMost, cancel)
	logs := &clocktest.Logs{}
	g := gate(t, "fail", w.r, peerAddrs)
	g.Clock, g.Log, g.RetryInterval = clk, logs.Logger(), 0
	rep, err := g.Check(ctx, w.own, w.url("missing"), nil, nil)
	if err == nil {
		t.Fatalf("Check passed with a peer that never resolves: %+v", rep.Peers)
	}
	clk.AssertReached(t)
	clk.AssertPace(t, defaultRetryInterval, int(time.Minute/defaultRetryInterval)+1)
	if n := w.r.count("missing.test"); n > peersMost {
		t.Errorf("%d look-ups of the peer in %v, want at most %d (one a second)", n, peersHorizon, peersMost)
	}
	assertWaitLines(t, logs, "waiting for REST peer")
	t.Logf("%d look-ups, %d wait lines, %d lines in all in %v of injected time", w.r.count("missing.test"),
		logs.Count("waiting for REST peer"), logs.Total(), clk.Elapsed())
}

// Our advertised URL never resolves (a per-task name that DNS does not
// know yet, for ever): the self-probe asks once a second, a round of
// defaultSelfRequests look-ups, until the deadline, and says so every 5 s
// of the clock it waits on. Before issue 48 the wait line's 5 s were read
// on the wall clock while the loop waited on the injected one.
func TestSelfProbeWaitPace(t *testing.T) {
	p := freePort(t)
	r := newResolver(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktest.NewHorizon(peersHorizon, 2*peersMost, cancel)
	logs := &clocktest.Logs{}
	g := gate(t, "", r, ourAddrs)
	g.Log, g.RetryInterval = logs.Logger(), 0
	g.Self = SelfProbe{Listen: "127.0.0.1:" + p, Listeners: "http://127.0.0.1:" + p, Token: func() (string, error) { return "token-ours", nil }, Clock: clk}
	rep, err := g.Check(ctx, "http://connect-1:"+p+"/", "", nil, nil)
	if err == nil {
		t.Fatalf("Check passed with an own name that never resolves: %+v", rep.Peers)
	}
	clk.AssertReached(t)
	clk.AssertPace(t, defaultRetryInterval, int(time.Minute/defaultRetryInterval)+1)
	if n, most := r.count("connect-1"), peersMost*defaultSelfRequests; n > most {
		t.Errorf("%d look-ups of our name in %v, want at most %d (a round a second)", n, peersHorizon, most)
	}
	assertWaitLines(t, logs, "waiting for our advertised URL to reach this container")
	// The listener is released: a next check may bind the port.
	if l, err := net.Listen("tcp", "127.0.0.1:"+p); err != nil {
		t.Errorf("the self-probe's listener is still bound after the check: %v", err)
	} else {
		l.Close()
	}
	t.Logf("%d look-ups, %d wait lines, %d lines in all in %v of injected time", r.count("connect-1"),
		logs.Count("waiting for our advertised URL to reach this container"), logs.Total(), clk.Elapsed())
}

package startup

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/connect-init/connect-init/gate/peers"
	"github.com/connect-init/connect-init/lock"
	"github.com/connect-init/connect-init/settings"
)

// Only holders released as ready are probed: a holder whose hold lease
// expired never got ready, a waiter or holder has no REST server yet, and
// our own URL is not a peer.
func TestReleasedAsReady(t *testing.T) {
	entries := []lock.Entry{
		{URL: "http://a:8083", State: lock.StateReleased, ReleaseReason: "ready"},
		{URL: "http://b:8083", State: lock.StateReleased, ReleaseReason: "hold lease expired"},
		{URL: "http://c:8083", State: lock.StateHolding},
		{URL: "http://d:8083", State: lock.StateWaiting},
		{URL: "http://me:8083", State: lock.StateReleased, ReleaseReason: "ready"},
		{URL: "", State: lock.StateReleased, ReleaseReason: "ready"},
		{URL: "http://e:8083", State: lock.StateReleased, ReleaseReason: "ready"},
	}
	got := releasedAsReady(entries, "http://me:8083")
	if want := []string{"http://a:8083", "http://e:8083"}; !slices.Equal(got, want) {
		t.Fatalf("releasedAsReady = %v, want %v", got, want)
	}
}

// A lock-queue holder released as ready that has left the group (in a
// rolling update, the worker just replaced) is not probed: it would hold
// the start for the whole warning wait. Members are compared as Connect
// and the lock write them (trailing slash, case).
func TestInGroupDropsDepartedHolders(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	queued := []string{"http://a:8083/", "http://Gone:8083/", "http://b:8083"}
	members := []string{"http://A:8083", "http://b:8083/", "http://c:8083/"}
	got := inGroup(queued, members, log)
	if want := []string{"http://a:8083/", "http://b:8083"}; !slices.Equal(got, want) {
		t.Fatalf("inGroup = %v, want %v", got, want)
	}
	if !strings.Contains(buf.String(), `msg="REST peer not probed" url=http://Gone:8083/`) {
		t.Errorf("the departed holder was dropped silently:\n%s", buf.String())
	}
	if got := inGroup(queued, nil, log); len(got) != 0 {
		t.Errorf("an empty group kept %v", got)
	}
}

// The peers step paces its rounds (the self-probe's included) at
// peerRetry, not the package's 1 s, and bounds warnings at 10 s.
func TestPeerGatePacing(t *testing.T) {
	g := peerGate(&settings.Config{}, nil, peers.SelfProbe{}, slog.New(slog.DiscardHandler), nil)
	if g.RetryInterval <= 0 || g.RetryInterval > 250*time.Millisecond {
		t.Errorf("retry interval %v, want at most 250ms (0 is the package's 1s)", g.RetryInterval)
	}
	if g.WarnWait != 10*time.Second {
		t.Errorf("warn wait %v, want 10s", g.WarnWait)
	}
}

func TestLeftGroup(t *testing.T) {
	look := func(urls []string, ok bool) func(context.Context) ([]string, bool) {
		return func(context.Context) ([]string, bool) { return urls, ok }
	}
	for _, tc := range []struct {
		name string
		urls []string
		ok   bool
		url  string
		want bool
	}{
		{"gone from a Stable look", []string{"http://10.0.0.7:8083/"}, true, "http://10.0.0.8:8083/", true},
		{"still a member (case and slash aside)", []string{"http://W1:8083/"}, true, "http://w1:8083", false},
		{"empty group: everyone left", nil, true, "http://10.0.0.8:8083/", true},
		{"a look that cannot tell: not left", nil, false, "http://10.0.0.8:8083/", false},
	} {
		if got := leftGroup(look(tc.urls, tc.ok))(context.Background(), tc.url); got != tc.want {
			t.Errorf("%s: left = %v, want %v", tc.name, got, tc.want)
		}
	}
}

package startup

import (
	"slices"
	"testing"

	"github.com/connect-init/connect-init/lock"
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

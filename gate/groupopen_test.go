package gate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/connect/registry"
)

// The group is open only when Stable, with members that are all caught up
// and all proven ours by the group gate's rules; anything less keeps a
// worker in the queue.
func TestGroupOpener(t *testing.T) {
	now := time.Unix(1700000000, 0)
	other := us
	other.ConfigTopic = "f-configs"
	view := &registry.View{Exists: true, Workers: []registry.Worker{
		{Cluster: us, URL: "http://mine:8083/", FirstSeen: now, LastSeen: now},
		{Cluster: us, URL: "http://mine2:8083/", FirstSeen: now, LastSeen: now},
		{Cluster: other, URL: "http://f:8083/", FirstSeen: now, LastSeen: now},
	}}
	cfg := configLog("a")
	mine := worker("mine", "http://mine:8083/", 4, []string{"a"}, nil, nil)
	mine2 := worker("mine2", "http://mine2:8083/", 4, nil, nil, nil)
	cases := []struct {
		name    string
		desc    *sarama.GroupDescription
		in      *identityInputs
		open    bool
		why     string
		members int
	}{
		{"one registered member", stableGroup(mine), &identityInputs{config: cfg, view: view}, true, "every one of the 1 members", 1},
		{"two registered members", stableGroup(mine, mine2), &identityInputs{config: cfg, view: view}, true, "every one of the 2 members", 2},
		{"no member", stableGroup(), &identityInputs{config: cfg, view: view}, false, "no member", 0},
		{"rebalancing", &sarama.GroupDescription{GroupId: "connect-cluster", State: "PreparingRebalance", ProtocolType: proto.ProtocolType, Members: map[string]*sarama.GroupMemberDescription{"mine": mine}},
			&identityInputs{config: cfg, view: view}, false, "the group is PreparingRebalance", 1},
		{"a member behind its assignment", stableGroup(mine, worker("mine2", "http://mine2:8083/", 4, nil, nil, func(a *proto.Assignment) { a.ConfigOffset = 5 })),
			&identityInputs{config: cfg, view: view}, false, "not caught up", 2},
		{"a foreign member", stableGroup(mine, worker("f", "http://f:8083/", 4, []string{"a"}, nil, nil)), &identityInputs{config: cfg, view: view}, false, "would refuse", 2},
		{"an unverified member", stableGroup(mine, worker("u", "http://u:8083/", 4, nil, nil, nil)), &identityInputs{config: cfg, view: view}, false, "not proven ours", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, _, _ := identityGate(identityCase{in: c.in})
			g.describeFn = func(context.Context) (*sarama.GroupDescription, error) { return c.desc, nil }
			o := NewGroupOpener(g)
			got, err := o.Look(context.Background())
			if err != nil || got.Open != c.open || !strings.Contains(got.Why, c.why) || got.Members != c.members {
				t.Fatalf("Look = %+v, %v; want open %v, why containing %q, %d members", got, err, c.open, c.why, c.members)
			}
		})
	}
}

// A snapshot the identity rules did not prove is not read again while it
// stays the same, and is judged again once it changes.
func TestGroupOpenerRemembersAnUnprovenSnapshot(t *testing.T) {
	cfg := configLog("a")
	now := time.Unix(1700000000, 0)
	view := &registry.View{Exists: true, Workers: []registry.Worker{{Cluster: us, URL: "http://mine:8083/", FirstSeen: now, LastSeen: now}}}
	reads := 0
	g, _, _ := identityGate(identityCase{in: &identityInputs{config: cfg, view: view}})
	g.identityFn = func(context.Context, *GroupReport) *identityInputs {
		reads++
		return &identityInputs{clusterID: "kc", config: cfg, view: view}
	}
	desc := stableGroup(worker("mine", "http://mine:8083/", 4, []string{"a"}, nil, nil), worker("u", "http://u:8083/", 4, nil, nil, nil))
	g.describeFn = func(context.Context) (*sarama.GroupDescription, error) { return desc, nil }
	o := NewGroupOpener(g)
	for range 3 {
		if got, _ := o.Look(context.Background()); got.Open {
			t.Fatalf("open with an unverified member: %+v", got)
		}
	}
	if reads != 1 {
		t.Fatalf("identity read %d times for one unchanged snapshot, want 1", reads)
	}
	desc = stableGroup(worker("mine", "http://mine:8083/", 4, []string{"a"}, nil, nil))
	if got, _ := o.Look(context.Background()); !got.Open || reads != 2 {
		t.Fatalf("after the unverified member left: %+v, %d reads", got, reads)
	}
}

// Seeded with the group step's report of the same snapshot, proven ours,
// the first look finds the group open without reading the end offsets,
// the registry or our config and status topics again (issue 49: the lock
// step read everything the group step had just read). A changed snapshot,
// or a report that proved less, is read and judged as before.
func TestGroupOpenerSeededWithTheGroupStepsProof(t *testing.T) {
	cfg := configLog("a")
	now := time.Unix(1700000000, 0)
	view := &registry.View{Exists: true, Workers: []registry.Worker{
		{Cluster: us, URL: "http://mine:8083/", FirstSeen: now, LastSeen: now},
		{Cluster: us, URL: "http://mine2:8083/", FirstSeen: now, LastSeen: now}}}
	mine := worker("mine", "http://mine:8083/", 4, []string{"a"}, nil, nil)
	mine2 := worker("mine2", "http://mine2:8083/", 4, nil, nil, nil)
	unverified := worker("u", "http://u:8083/", 4, nil, nil, nil)
	for _, c := range []struct {
		name              string
		judged, looked    *sarama.GroupDescription
		wantOpen          bool
		wantReads         int
		wantWhyContaining string
	}{
		{"the same snapshot, proven ours", stableGroup(mine), stableGroup(mine), true, 0, "the group step's proof"},
		{"a member joined since", stableGroup(mine), stableGroup(mine, mine2), true, 1, "every one of the 2 members"},
		{"the group step proved less (an unverified member)", stableGroup(mine, unverified), stableGroup(mine, unverified), false, 1, "not proven ours"},
	} {
		t.Run(c.name, func(t *testing.T) {
			reads := 0
			g, _, _ := identityGate(identityCase{in: &identityInputs{config: cfg, view: view}})
			g.identityFn = func(context.Context, *GroupReport) *identityInputs {
				reads++
				return &identityInputs{clusterID: "kc", config: cfg, view: view}
			}
			g.offsetsFn = func(context.Context) (int64, int64, error) { reads++; return 5, 5, nil }
			// The group step's report, judged as the gate judges it.
			rep := NewGroupReport(g.GroupID, g.ConfigTopic, c.judged)
			rep.ConfigEndOffset, rep.ConfigStableOffset = 5, 5
			rep.judge()
			rep.judgeIdentity(g.Identity, &identityInputs{clusterID: "kc", config: cfg, view: view}, false)
			desc := c.looked
			g.describeFn = func(context.Context) (*sarama.GroupDescription, error) { return desc, nil }
			o := NewGroupOpener(g)
			o.Seed(rep)
			got, err := o.Look(context.Background())
			// offsetsFn and identityFn count one each per judged look.
			if err != nil || got.Open != c.wantOpen || reads != 2*c.wantReads || !strings.Contains(got.Why, c.wantWhyContaining) {
				t.Fatalf("Look = %+v, %v after %d reads; want open %v after %d, why containing %q", got, err, reads, c.wantOpen, 2*c.wantReads, c.wantWhyContaining)
			}
		})
	}
}

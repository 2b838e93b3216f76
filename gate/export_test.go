package gate

import (
	"context"
	"errors"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/connect/proto"
	"github.com/connect-init/connect-init/connect/registry"
	"github.com/connect-init/connect-init/connect/store"
)

// GroupScenario is one worker group the group gate judges, for the test
// in package bootstrap_test that holds the gate and doctor to one verdict
// (doctor imports bootstrap, so that test cannot live in this package).
type GroupScenario struct {
	Name     string
	Handover string
	// Gate returns a fresh gate over the scenario's snapshot and identity
	// reads, with CONNECT_INIT_STRICT strict.
	Gate func(strict bool) *GroupGate
}

// GroupScenarios are the group rules' cases: ours, foreign by two rules,
// claimed by another cluster (refused, handed over, or handed over with
// the old cluster's worker still in), unverified, the registry unreadable,
// a group never seen Stable, and one that rebalances without settling.
func GroupScenarios() []GroupScenario {
	now := time.Unix(1700000000, 0)
	other := us
	other.ConfigTopic = "f-configs"
	view := &registry.View{Exists: true, Workers: []registry.Worker{
		{Cluster: us, URL: "http://mine:8083/", FirstSeen: now, LastSeen: now},
		{Cluster: other, URL: "http://f:8083/", FirstSeen: now, LastSeen: now, Host: "fhost"},
	}}
	claimed := &registry.View{Exists: true, Claims: []registry.Claim{{Cluster: other, Offset: 3, FirstSeen: now, URL: "http://f:8083/"}}}
	cfg := configLog("a")
	mine := func() *sarama.GroupMemberDescription {
		return worker("mine", "http://mine:8083/", 4, []string{"a"}, nil, nil)
	}
	with := func(in func() *identityInputs, handover string, members ...func() *sarama.GroupMemberDescription) func(bool) *GroupGate {
		return func(strict bool) *GroupGate {
			ms := make([]*sarama.GroupMemberDescription, len(members))
			for i, m := range members {
				ms[i] = m()
			}
			g, _, _ := identityGate(identityCase{in: in(), strict: strict, handover: handover}, ms...)
			return g
		}
	}
	empty := func(g *GroupGate) *GroupGate {
		g.describeFn = func(context.Context) (*sarama.GroupDescription, error) {
			return &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupEmpty}, nil
		}
		return g
	}
	return []GroupScenario{
		{Name: "our registered worker", Gate: with(func() *identityInputs { return &identityInputs{config: cfg, view: view} }, "", mine)},
		{Name: "a connector our config topic does not define", Gate: with(func() *identityInputs {
			return &identityInputs{config: configLog("a", "b", "c", "d", "e"), view: &registry.View{}}
		}, "", func() *sarama.GroupMemberDescription {
			return worker("f", "http://f:8083/", 4, []string{"f-1"}, nil, nil)
		})},
		{Name: "a URL registered for another cluster", Gate: with(func() *identityInputs { return &identityInputs{config: cfg, view: view} }, "",
			func() *sarama.GroupMemberDescription {
				return worker("f", "http://f:8083/", 4, []string{"a"}, nil, nil)
			})},
		{Name: "claimed by another cluster", Gate: func(strict bool) *GroupGate {
			return empty(with(func() *identityInputs { return &identityInputs{view: claimed} }, "")(strict))
		}},
		{Name: "claimed, and handed over", Handover: "f-configs", Gate: func(strict bool) *GroupGate {
			return empty(with(func() *identityInputs { return &identityInputs{view: claimed} }, "f-configs")(strict))
		}},
		{Name: "an unverified member", Gate: with(func() *identityInputs {
			return &identityInputs{config: cfg, view: &registry.View{}, status: &store.StatusLog{ByWorker: map[string][]string{}}}
		}, "", func() *sarama.GroupMemberDescription {
			return worker("w", "http://w:8083/", 4, []string{"a"}, nil, nil)
		})},
		{Name: "the registry unreadable", Gate: func(strict bool) *GroupGate {
			return empty(with(func() *identityInputs { return &identityInputs{viewErr: errors.New("TOPIC_AUTHORIZATION_FAILED")} }, "")(strict))
		}},
		{Name: "claimed, handed over, the old cluster's worker still in", Handover: "f-configs", Gate: with(func() *identityInputs {
			return &identityInputs{config: cfg, view: &registry.View{Exists: true, Claims: claimed.Claims, Workers: view.Workers}}
		}, "f-configs", func() *sarama.GroupMemberDescription {
			return worker("f", "http://f:8083/", 4, []string{"a"}, nil, nil)
		})},
		{Name: "a group that rebalances without settling", Gate: func(strict bool) *GroupGate {
			// Our own worker, rejoining at offsets 3 and 4 in turn: a storm
			// with no member to blame.
			g := with(func() *identityInputs { return &identityInputs{config: cfg, view: view} }, "", mine)(strict)
			looks := 0
			g.describeFn = func(context.Context) (*sarama.GroupDescription, error) {
				looks++
				return stableGroup(worker("mine", "http://mine:8083/", int64(3+looks%2), []string{"a"}, nil, nil)), nil
			}
			return g
		}},
		{Name: "a member behind that no rule judges before the timeout", Gate: func(strict bool) *GroupGate {
			// Seen Stable once behind the assignment, then a rebalance
			// that never completes: neither two rebalances nor BehindFor
			// at its offset, until the window's bound.
			g := with(func() *identityInputs { return &identityInputs{config: cfg, view: view} }, "", mine)(strict)
			looks := 0
			g.describeFn = func(context.Context) (*sarama.GroupDescription, error) {
				looks++
				if looks == 1 {
					return stableGroup(worker("mine", "http://mine:8083/", 4, []string{"a"}, nil, nil),
						worker("slow", "http://slow:8083/", 2, nil, nil, func(a *proto.Assignment) { a.ConfigOffset = 4 })), nil
				}
				return &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupPreparingRebalance, ProtocolType: "connect"}, nil
			}
			return g
		}},
		{Name: "a group that never settles", Gate: func(strict bool) *GroupGate {
			g := with(func() *identityInputs { return &identityInputs{config: cfg, view: view} }, "", mine)(strict)
			g.describeFn = func(context.Context) (*sarama.GroupDescription, error) {
				return &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupPreparingRebalance, ProtocolType: "connect"}, nil
			}
			return g
		}},
	}
}

// ErrorCheckIDs is errorCheckIDs, for the external tests.
func ErrorCheckIDs() []string { return errorCheckIDs() }

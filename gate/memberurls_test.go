package gate

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/IBM/sarama"
)

func TestMemberURLs(t *testing.T) {
	a := connectMember("a", "http://10.0.0.7:8083/", 5, "a", "http://10.0.0.7:8083/", 5)
	b := connectMember("b", "http://10.0.0.8:8083/", 5, "a", "http://10.0.0.7:8083/", 5)
	rebalancing := &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupPreparingRebalance, ProtocolType: "connect",
		Members: map[string]*sarama.GroupMemberDescription{"a": {MemberId: "a"}}}
	empty := &sarama.GroupDescription{GroupId: "connect-cluster", State: GroupEmpty, ProtocolType: "connect"}
	unreadable := stableGroup(&sarama.GroupMemberDescription{MemberId: "x", MemberMetadata: []byte{0, 9, 1}})
	for _, tc := range []struct {
		name string
		desc *sarama.GroupDescription
		err  error
		want []string
		ok   bool
	}{
		{"stable: every member's URL", stableGroup(a, b), nil, []string{"http://10.0.0.7:8083/", "http://10.0.0.8:8083/"}, true},
		{"empty: no members", empty, nil, nil, true},
		// Between two generations the members' metadata is hidden: who is
		// a member cannot be told, so nobody is said to have left.
		{"rebalancing: cannot tell", rebalancing, nil, nil, false},
		{"a member's metadata unreadable: cannot tell", unreadable, nil, nil, false},
		{"describe failed: cannot tell", nil, errors.New("coordinator not available"), nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &GroupGate{GroupID: "connect-cluster", ConfigTopic: "_connect-configs"}
			g.describeFn = func(context.Context) (*sarama.GroupDescription, error) { return tc.desc, tc.err }
			got, ok := g.MemberURLs(context.Background())
			slices.Sort(got)
			if ok != tc.ok || !slices.Equal(got, tc.want) {
				t.Fatalf("MemberURLs = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

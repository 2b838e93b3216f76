package repair

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clock"
)

// scriptedCluster fails Describe with the given errors first, then
// answers as its fakeCluster.
type scriptedCluster struct {
	*fakeCluster
	errs  []error
	looks int
}

func (c *scriptedCluster) Describe(ctx context.Context, topics []string) (State, error) {
	c.looks++
	if c.looks <= len(c.errs) {
		return State{}, c.errs[c.looks-1]
	}
	return c.fakeCluster.Describe(ctx, topics)
}

// repair's reads of the cluster look again on "not yet" (a leader being
// elected, the controller moving) and fail at once on a final answer.
func TestLookLooksAgainOnNotYet(t *testing.T) {
	req := Request{Topics: []TopicRequest{{Name: "__consumer_offsets", TargetRF: 3}}}
	cases := []struct {
		name      string
		errs      []error
		wantErr   bool
		wantLooks int
	}{
		{"a leader being elected", []error{fmt.Errorf("topic __consumer_offsets: %w", sarama.ErrLeaderNotAvailable), sarama.ErrNotController}, false, 3},
		{"an ACL", []error{fmt.Errorf("read the cluster's metadata: %w", sarama.ErrClusterAuthorizationFailed)}, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := &scriptedCluster{fakeCluster: newFake(3, 4, 1, 1, 2, 3), errs: c.errs}
			x := &Executor{Cluster: cl, Clock: clock.NewStepping(time.Unix(0, 0))}
			_, _, err := x.Look(context.Background(), req)
			if (err != nil) != c.wantErr || cl.looks != c.wantLooks {
				t.Fatalf("Look = %v after %d looks, want error %v after %d", err, cl.looks, c.wantErr, c.wantLooks)
			}
		})
	}
}

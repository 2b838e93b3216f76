package lock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clocktest"
)

// refusingAdmin answers every CreateTopic with a "not yet" code (a
// controller moving for ever); every other method panics through the nil
// embedded interface.
type refusingAdmin struct {
	sarama.ClusterAdmin
	creates atomic.Int64
}

func (a *refusingAdmin) CreateTopic(string, *sarama.TopicDetail, bool) error {
	a.creates.Add(1)
	return sarama.ErrNotController
}

// Waiting costs nothing (issue 48): the lock topic's creation, refused
// with a "not yet" answer for two hours of injected time, is tried again
// every 200 ms, never sooner. Before, it paced on the wall clock
// (time.After), so no test could drive it through a long wait.
func TestEnsureTopicWaitPace(t *testing.T) {
	const horizon = 2 * time.Hour
	most := int(horizon/ensureTopicEvery) + 2
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktest.NewHorizon(horizon, 2*most, cancel)
	admin := &refusingAdmin{}
	err := ensureTopic(ctx, clk, admin, testTopic, 3)
	if err == nil {
		t.Fatal("ensureTopic: no error while every creation is refused")
	}
	clk.AssertReached(t)
	clk.AssertPace(t, ensureTopicEvery, int(time.Minute/ensureTopicEvery)+1)
	if n := int(admin.creates.Load()); n > most {
		t.Errorf("%d CreateTopic in %v, want at most %d (one every %v)", n, horizon, most, ensureTopicEvery)
	}
	t.Logf("%d tries in %v: %v", admin.creates.Load(), clk.Elapsed(), err)
}

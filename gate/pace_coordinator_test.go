package gate

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connect-init/connect-init/internal/clocktest"
	"github.com/connect-init/connect-init/kafka"
)

// countingLost is lostClient counting its coordinator look-ups.
type countingLost struct {
	lostClient
	asked atomic.Int64
}

func (c *countingLost) RefreshCoordinator(g string) error {
	c.asked.Add(1)
	return c.lostClient.RefreshCoordinator(g)
}

// Waiting costs nothing (issue 48): the coordinator step, with the group's
// __consumer_offsets partition leaderless for two hours of injected time,
// asks for the coordinator every 150-250 ms (jittered) and writes one progress
// line every 5 s.
func TestCoordinatorWaitPace(t *testing.T) {
	const group = "connect-cluster"
	p := GroupPartition(group, 50)
	regs := []kafka.Registration{{ID: 1, Addr: "k1:9092"}, {ID: 3, Addr: "k3:9092", Fenced: true}}
	const horizon = 2 * time.Hour
	limit := int(horizon/(150*time.Millisecond)) + 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktest.NewHorizon(horizon, 2*limit, cancel)
	logs := &clocktest.Logs{}
	client := &countingLost{}
	g := &CoordinatorGate{Client: client, Admin: &offsetsAdmin{partition: p, leader: -1, replicas: []int32{3}, isr: []int32{3}, partitionsTotal: 50},
		GroupID: group, Log: slog.New(logs), Clock: clk, Wait: true,
		registrations: func() ([]kafka.Registration, error) { return regs, nil }}
	if _, err := g.Check(ctx); err == nil {
		t.Fatal("Check: no error with the coordinator lost")
	}
	clk.AssertReached(t)
	clk.AssertPace(t, 150*time.Millisecond, int(time.Minute/(150*time.Millisecond))+1)
	if n := client.asked.Load(); n > int64(limit) {
		t.Errorf("%d look-ups in %v, want at most %d", n, horizon, limit)
	}
	if n, most := logs.Count("waiting for the group coordinator"), int(horizon/(5*time.Second))+2; n > most || n == 0 {
		t.Errorf("%d progress lines in %v, want between 1 and %d", n, horizon, most)
	}
}

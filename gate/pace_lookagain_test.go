package gate

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clocktest"
)

// Waiting costs nothing (issue 48): lookAgain, the loop of the topics,
// coordinator and plugins steps' reads, answered "not yet" for two hours
// of injected time, looks every 150-250 ms (jittered) and writes one wait line
// every 5 s.
func TestLookAgainPace(t *testing.T) {
	const horizon = 2 * time.Hour
	limit := int(horizon/(lookAgainEvery*3/4)) + 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktest.NewHorizon(horizon, 2*limit, cancel)
	logs := &clocktest.Logs{}
	// Atomic: lookAgain runs each look through bounded, whose goroutine
	// may still be counting when ctx ends (bounded's contract: f must not
	// write what the caller reads, so the count is synchronized).
	var looks atomic.Int64
	_, err := lookAgain(ctx, clk, slog.New(logs), "topics", "a leader", true, func() (int, error) {
		looks.Add(1)
		return 0, sarama.ErrLeaderNotAvailable
	})
	if err == nil {
		t.Fatal("lookAgain: no error after the horizon")
	}
	clk.AssertReached(t)
	clk.AssertPace(t, lookAgainEvery*3/4, int(time.Minute/(lookAgainEvery*3/4))+1)
	if n := int(looks.Load()); n > limit {
		t.Errorf("%d looks in %v, want at most %d", n, horizon, limit)
	}
	if n, most := logs.Count("waiting for the cluster to finish creating or moving"), int(horizon/waitLineEvery)+2; n > most {
		t.Errorf("%d wait lines in %v, want at most %d", n, horizon, most)
	}
}

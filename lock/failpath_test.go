package lock

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clock"
)

// A broker's hiccup (UNKNOWN_SERVER_ERROR, INVALID_REQUEST) while the
// lock topic is opened is looked at again until UnavailableAfter, not a
// refusal that stops the worker at once (issue 48: kafka/notyet counted
// every code Kafka's clients do not retry as final).
func TestOpenRetriesABrokerHiccup(t *testing.T) {
	for _, code := range []sarama.KError{sarama.ErrUnknown, sarama.ErrInvalidRequest} {
		t.Run(code.Error(), func(t *testing.T) {
			h := newMemHarness(t)
			cfg := h.config("w")
			cfg.UnavailableAfter = 20 * time.Second
			cfg.Clock = clock.NewStepping(time.Unix(1700000000, 0))
			l := h.newLock(cfg)
			opened := 0
			l.open = func() (recordLog, logBounds, error) {
				opened++
				return nil, logBounds{}, fmt.Errorf("lock: reading the end offset: %w", code)
			}
			_, _, _, err := l.openRetrying(context.Background())
			if errors.Is(err, ErrRefused) || !errors.Is(err, ErrUnavailable) {
				t.Fatalf("openRetrying = %v, want ErrUnavailable after 20 s of retries, not a refusal", err)
			}
			if opened < 10 {
				t.Errorf("opened %d times in 20 s, want about one a second", opened)
			}
		})
	}
}

package lock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

func TestNewValidates(t *testing.T) {
	ok := Config{Brokers: []string{"b:9092"}, Topic: "t", Scope: "s", Identity: "i"}
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string // error substring; "" = valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"no brokers", func(c *Config) { c.Brokers = nil }, "no brokers"},
		{"no topic", func(c *Config) { c.Topic = "" }, "must all be set"},
		{"no scope", func(c *Config) { c.Scope = "" }, "must all be set"},
		{"no identity", func(c *Config) { c.Identity = "" }, "must all be set"},
		{"negative permits", func(c *Config) { c.Permits = -1 }, "permits"},
		{"tiny lease", func(c *Config) { c.Lease = 100 * time.Millisecond }, "minimum"},
		{"poll too slow for lease", func(c *Config) { c.Lease = 3 * time.Second; c.PollInterval = 2 * time.Second }, "poll interval"},
		{"hold lease below lease", func(c *Config) { c.Lease = time.Minute; c.HoldLease = 30 * time.Second }, "hold lease"},
		{"negative log interval", func(c *Config) { c.LogInterval = -1 }, "negative"},
		{"short lease, fast poll", func(c *Config) {
			c.Lease = 3 * time.Second
			c.PollInterval = time.Second
			c.HoldLease = 3 * time.Second
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mod(&c)
			l, err := New(c)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if l.cfg.Permits != 1 || l.cfg.HoldLease == 0 || l.cfg.Clock == nil {
					t.Errorf("defaults not applied: %+v", l.cfg)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

func TestProducerConfigOverridesBase(t *testing.T) {
	base := sarama.NewConfig()
	base.ClientID = "mine"
	base.Producer.RequiredAcks = sarama.NoResponse
	base.Net.MaxOpenRequests = 5
	l, err := New(Config{Brokers: []string{"b:9092"}, Topic: "t", Scope: "s", Identity: "i", Sarama: base})
	if err != nil {
		t.Fatal(err)
	}
	c := l.sarama
	if c.ClientID != "mine" || !c.Producer.Idempotent || c.Producer.RequiredAcks != sarama.WaitForAll ||
		c.Net.MaxOpenRequests != 1 || c.Version != sarama.MaxVersion || c.Producer.Timeout > DefaultLease/3 {
		t.Errorf("derived config: %+v", c)
	}
	if base.Producer.Idempotent || base.Net.MaxOpenRequests != 5 {
		t.Error("base configuration was modified")
	}
}

func TestAcquireOnlyOnce(t *testing.T) {
	l, err := New(Config{Brokers: []string{"127.0.0.1:1"}, Topic: "t", Scope: "s", Identity: "i"})
	if err != nil {
		t.Fatal(err)
	}
	opened := 0
	boom := fmt.Errorf("%w: no topic here", errLayout) // final: not retried
	l.open = func() (recordLog, logBounds, error) {
		opened++
		return nil, logBounds{}, boom
	}
	if err := l.Acquire(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("first Acquire = %v, want it to try the topic and fail with %v", err, boom)
	}
	if err := l.Acquire(context.Background()); !errors.Is(err, ErrAcquired) {
		t.Fatalf("second Acquire = %v, want ErrAcquired", err)
	}
	if opened != 1 {
		t.Fatalf("the topic was opened %d times, want once (by the first Acquire only)", opened)
	}
}

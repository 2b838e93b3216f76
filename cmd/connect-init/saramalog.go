package main

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/IBM/sarama"
)

// saramaHandler is the handler sarama's package-wide logger writes to: the
// last command's logger. sarama reads its Logger variable from goroutines
// that can outlive a command (a dial abandoned at the brokers gate's
// deadline still refreshes metadata), so the variable is set once and only
// the handler behind it changes, atomically. Assigning sarama.Logger per
// command raced with those goroutines (CI's unit step, 2026-12-04).
var saramaHandler atomic.Pointer[slog.Handler]

func init() {
	var discard slog.Handler = slog.DiscardHandler
	saramaHandler.Store(&discard)
	sarama.Logger = slog.NewLogLogger(switchHandler{}, slog.LevelDebug)
}

// setSaramaHandler routes sarama's debug lines to h from now on.
func setSaramaHandler(h slog.Handler) { saramaHandler.Store(&h) }

// switchHandler forwards to the handler saramaHandler holds at each call.
type switchHandler struct{}

func (switchHandler) current() slog.Handler { return *saramaHandler.Load() }

func (s switchHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return s.current().Enabled(ctx, l)
}

func (s switchHandler) Handle(ctx context.Context, r slog.Record) error {
	return s.current().Handle(ctx, r)
}

func (s switchHandler) WithAttrs(as []slog.Attr) slog.Handler { return s.current().WithAttrs(as) }

func (s switchHandler) WithGroup(name string) slog.Handler { return s.current().WithGroup(name) }

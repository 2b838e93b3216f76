package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/startup"
	"github.com/connect-init/connect-init/step"
)

// errWorkerGone is the cancellation cause when the worker that runs `lock
// acquire` has died (its end of our stdin closed).
var errWorkerGone = errors.New("the worker exited (stdin closed)")

// lockCommand is `connect-init lock acquire [--watch-stdin] [flags]`: the
// in-worker startup lock's waiter, run by the worker's config provider. It
// waits for the brokers (the JVM may have taken a while), takes the
// startup lock like run does, checks the group and the peers again as run
// does after the lock, and exits 0 when the worker may join its group.
// With --watch-stdin, the end of stdin (the worker died) withdraws the
// request; so does SIGTERM.
func (c *cli) lockCommand(ctx context.Context, args []string) int {
	env, stderr := c.env, c.stderr
	if len(args) == 0 || args[0] != "acquire" {
		fmt.Fprintln(stderr, "connect-init: usage: connect-init lock acquire [--watch-stdin] [flags]: the in-worker startup lock, run by the worker's config provider")
		return startup.ExitConfig
	}
	env = startup.WithoutInWorkerWiring(env)
	settings, err := settings.LoadSettings(env)
	if err != nil {
		fmt.Fprintln(stderr, "connect-init:", err)
		return startup.ExitConfig
	}
	fs := flag.NewFlagSet("connect-init lock acquire", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bindFlags(fs, &settings)
	watch := fs.Bool("watch-stdin", false, "withdraw when stdin ends (the worker that runs this died)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return startup.ExitOK
		}
		return startup.ExitConfig
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "connect-init: lock acquire takes no arguments (got %q)\n", fs.Args())
		return startup.ExitConfig
	}
	if err := settings.Validate(); err != nil {
		fmt.Fprintln(stderr, "connect-init:", err)
		return startup.ExitConfig
	}
	log := newLogger(stderr, settings)
	sarama.Logger = slog.NewLogLogger(log.Handler(), slog.LevelDebug)
	if *watch {
		var cancel context.CancelCauseFunc
		ctx, cancel = c.withdrawOnStdinEnd(ctx)
		defer cancel(nil)
	}
	cfg, clients, err := startup.LoadConfig(c.options, env, settings, log)
	if err != nil {
		logConfigError(log, err)
		return startup.ExitConfig
	}
	defer clients.Close()
	log.Info("waiting in the worker for its turn to join the group", "group", cfg.GroupID, "topic", settings.LockTopic)
	return acquireInWorker(ctx, cfg, clients, log)
}

// withdrawOnStdinEnd is --watch-stdin: the context it returns ends with
// errWorkerGone once stdin ends, that is when the worker that runs us died.
func (c *cli) withdrawOnStdinEnd(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		_, _ = io.Copy(io.Discard, c.stdin)
		cancel(errWorkerGone)
	}()
	return ctx, cancel
}

// acquireInWorker is lock acquire's work once the settings are loaded:
// reach the brokers, take the startup lock, check the peers again, and
// exit 0 when the worker may join its group.
func acquireInWorker(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, log *slog.Logger) int {
	if err := connectForLock(ctx, cfg, clients, log); err != nil {
		return lockFailed(ctx, log, err)
	}
	queued, err := startup.TakeLock(ctx, cfg, clients, log)
	if err != nil {
		return lockFailed(ctx, log, err)
	}
	if err := startup.CheckPeers(ctx, cfg, clients, nil, queued, log); err != nil {
		return lockFailed(ctx, log, err)
	}
	log.Info("the worker joins its group now")
	return startup.ExitOK
}

// connectForLock waits, within the gates' timeout, until the brokers answer
// and opens the clients the lock uses.
func connectForLock(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.Settings.Timeout)
	defer cancel()
	bg := &gate.BrokerGate{Config: clients.MemberConfig, Bootstrap: cfg.BootstrapServers, Expected: cfg.ExpectedBrokers,
		Topics: cfg.TopicNames(), Log: log, Clock: clock.System{}}
	if _, err := bg.Wait(ctx); err != nil {
		return err
	}
	if err := clients.Connect(cfg.BootstrapServers, cfg.TopicNames()); err != nil {
		return &gate.GateError{Gate: step.Brokers, Err: err}
	}
	return nil
}

func lockFailed(ctx context.Context, log *slog.Logger, err error) int {
	if errors.Is(context.Cause(ctx), errWorkerGone) {
		log.Warn("the worker exited while it waited for the startup lock: request withdrawn")
		return startup.ExitGate
	}
	return startup.Failed(ctx, log, step.Lock, err)
}

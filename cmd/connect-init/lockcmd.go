package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/connect-init/connect-init/exitcode"
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
	if len(args) == 1 && isHelpFlag(args[0]) {
		fmt.Fprintln(c.stdout, "usage of connect-init lock: connect-init lock acquire [flags]: the in-worker startup lock, run by the worker's config provider (connect-init lock acquire -h lists its flags)")
		return exitcode.OK
	}
	if len(args) == 0 || args[0] != "acquire" {
		return c.usageError(fmt.Sprintf("lock takes the subcommand acquire (got %q)", args), "run connect-init lock acquire [flags]: the in-worker startup lock, run by the worker's config provider")
	}
	// The secrets run handed over are read (and their file removed) once,
	// before anything reads the settings.
	env, err := startup.LockChildEnv(c.env)
	if err != nil {
		reportProblems(c.earlyLogger(settings.Read(startup.WithoutInWorkerWiring(c.env)), args), err)
		return exitcode.Config
	}
	c.env = env
	var watch bool
	spec := command{name: settings.LockAcquire, usage: "lock acquire [flags]", hidden: []string{"watch-stdin"}, flags: func(fs *flag.FlagSet) {
		fs.BoolVar(&watch, "watch-stdin", false, "withdraw when stdin ends (the worker that runs this died)")
	}}
	s, fs, code, done, _ := c.bootstrap(spec, args[1:], false)
	if done {
		return code
	}
	if fs.NArg() > 0 {
		reportProblems(c.earlyLogger(s, args), &settings.ConfigError{Setting: "command line", Problem: fmt.Sprintf("lock acquire takes no arguments (got %q)", fs.Args()), Fix: "see connect-init lock acquire -h"})
		return exitcode.Config
	}
	log := c.logger(s)
	if watch {
		var cancel context.CancelCauseFunc
		ctx, cancel = c.withdrawOnStdinEnd(ctx)
		defer cancel(nil)
	}
	cfg, clients, err := startup.LoadConfig(c.options, c.startupEnv(spec), s, log)
	if err != nil {
		logConfigError(log, err)
		return exitcode.Config
	}
	defer clients.Close()
	log.Info("waiting in the worker for its turn to join the group", "group", cfg.GroupID, "topic", s.LockTopic)
	return c.acquireInWorker(ctx, cfg, clients, log)
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
func (c *cli) acquireInWorker(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, log *slog.Logger) int {
	p := startup.NewProfile(c.clock) // the start-up profile line of the worker's turn
	if err := p.Time(step.Brokers, func() error { return c.connectBrokers(ctx, cfg, clients, log) }); err != nil {
		return lockFailed(ctx, log, err)
	}
	var queued []string
	err := p.Time(step.Lock, func() (err error) {
		// The child reads the group itself: nothing of run's group step
		// reaches it (startup.LockSeen{}).
		queued, _, err = startup.TakeLockProfiled(ctx, cfg, clients, log, c.clock, p, startup.LockSeen{})
		return err
	})
	if err != nil {
		return lockFailed(ctx, log, err)
	}
	if err := p.Time(step.Peers, func() error { return startup.CheckPeers(ctx, cfg, clients, nil, queued, log, c.clock) }); err != nil {
		return lockFailed(ctx, log, err)
	}
	p.Log(ctx, log, startup.WhereInWorkerLock)
	log.Info("the worker joins its group now")
	return exitcode.OK
}

// connectBrokers is the start-up's brokers step (startup.ConnectBrokers)
// within the gates' timeout and on the command's clock: the brokers
// answer, and the clients the lock and apply use connect, every dial under
// the command's context.
func (c *cli) connectBrokers(ctx context.Context, cfg *settings.Config, clients *kafka.Clients, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.Settings.Timeout)
	defer cancel()
	return startup.ConnectBrokers(ctx, cfg, clients, log, c.clock)
}

func lockFailed(ctx context.Context, log *slog.Logger, err error) int {
	if errors.Is(context.Cause(ctx), errWorkerGone) {
		log.Warn("the worker exited while it waited for the startup lock: request withdrawn")
		return exitcode.Failed
	}
	return startup.Failed(ctx, log, step.Lock, err)
}

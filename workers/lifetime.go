package workers

import (
	"context"
	"errors"
	"os"

	"github.com/connect-init/connect-init/internal/clock"
)

// ErrWorkerExited is the cause of a context ended by WhileWorkerLives.
const ErrWorkerExited = constError("the worker exited (this process was reparented)")

// WhileWorkerLives ends ctx, with the cause ErrWorkerExited, once this
// process is reparented: run's apply child has the worker as its parent
// after the exec, and outlives it otherwise. It looks every Poll on clk.
// The one home of that rule for the child's wait, apply and watch.
func WhileWorkerLives(ctx context.Context, clk clock.Clock) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	parent := os.Getppid()
	clk = clock.Or(clk)
	go func() {
		for os.Getppid() == parent {
			select {
			case <-ctx.Done():
				return
			case <-clk.After(Poll):
			}
		}
		cancel(ErrWorkerExited)
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// WorkerExited reports whether ctx ended because the worker exited.
func WorkerExited(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), ErrWorkerExited)
}

// constError is an error that is a constant, so that no importer can
// replace a sentinel that errors.Is compares against.
type constError string

func (e constError) Error() string { return string(e) }

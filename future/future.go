// Package future runs one read beside other work and hands its result to
// the step that waits for it.
//
// The start-up overlaps reads that do not need each other (issue 39): the
// brokers step reads the topics' settings and the coordinator for later
// steps, the topics step reads every broker's view while it judges, the
// coordinator check runs beside the topics step, the group step reads the
// registry beside the config topic. Each of those was a hand-rolled type
// of its own (issue 49); this is the one shape they share: started once,
// waited for by whoever needs the value, stopped by a step that fails so
// that nothing keeps running (or logging) behind it.
package future

import "context"

// Future is a value being read in the background.
type Future[T any] struct {
	cancel context.CancelFunc
	done   chan struct{}
	val    T
	err    error
}

// Go starts read under a context of its own, derived from ctx, and
// returns at once. The context ends when read returns or Stop is called.
func Go[T any](ctx context.Context, read func(ctx context.Context) (T, error)) *Future[T] {
	rctx, cancel := context.WithCancel(ctx)
	f := &Future[T]{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		defer cancel()
		f.val, f.err = read(rctx)
	}()
	return f
}

// Done returns what Go returned: the value, given at once.
func Done[T any](val T, err error) *Future[T] {
	f := &Future[T]{cancel: func() {}, done: make(chan struct{}), val: val, err: err}
	close(f.done)
	return f
}

// Wait returns the read's outcome once it has one. Any number of callers
// may wait, at once or one after the other: each gets the same outcome.
func (f *Future[T]) Wait() (T, error) {
	<-f.done
	return f.val, f.err
}

// WaitContext is Wait, or ctx's error as soon as ctx ends, whichever
// comes first; the read goes on (for reads that cannot be interrupted,
// such as a sarama client's metadata refresh).
func (f *Future[T]) WaitContext(ctx context.Context) (T, error) {
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		select {
		case <-f.done: // ended as ctx did: keep its outcome
			return f.val, f.err
		default:
			var zero T
			return zero, ctx.Err()
		}
	}
}

// Stop ends the read and waits for it: the read's context is cancelled,
// and Stop returns once the read has returned, so that a step that fails
// leaves nothing running behind it. A nil Future does nothing.
func (f *Future[T]) Stop() {
	if f == nil {
		return
	}
	f.cancel()
	<-f.done
}

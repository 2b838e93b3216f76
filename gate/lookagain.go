package gate

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka"
)

// Pauses of lookAgain: between two looks, and between two wait lines.
const (
	lookAgainEvery = 200 * time.Millisecond
	waitLineEvery  = 5 * time.Second
)

// lookAgainJitter returns a number in [0,1) that spreads the pauses of the
// steps' fixed-pace loops; a variable so that tests fix it.
var lookAgainJitter = rand.Float64

// jittered is d spread over [0.75, 1.25) of it: workers started together
// (a compose up, a rolling update) do not look at the cluster in step,
// and the pace stays bounded both ways (issue 48).
func jittered(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.75 + 0.5*lookAgainJitter()))
}

// pace is the one rule of how often a wait loop of the gates looks
// again: the first pause is first, each next one doubles, up to max, and
// each is spread by jitter over [0.5, 1.5) of it (never above max), so
// that N workers started together do not knock on a broker that starts
// slowly in step. The doubling saturates at max: an unbounded one
// overflowed time.Duration after about 38 looks, and the broker gate then
// looked again at once, without end, burning a core and writing sarama's
// "Failed to connect to broker" line per dial (issue 48).
type pace struct {
	first, max time.Duration
	// jitter returns a number in [0,1); nil spreads nothing (0.5 is the
	// middle of the range, the pause itself).
	jitter func() float64
	next   time.Duration
}

// wait returns the next pause: in [first/2, max], never zero.
func (p *pace) wait() time.Duration {
	if p.next <= 0 {
		p.next = p.first
	}
	spread := 1.0
	if p.jitter != nil {
		spread = 0.5 + p.jitter()
	}
	d := min(time.Duration(float64(p.next)*spread), p.max)
	if d <= 0 {
		d = max(p.first, time.Millisecond)
	}
	if p.next < p.max {
		p.next = min(2*p.next, p.max)
	}
	return d
}

// notYetGap is a look that found the cluster still at work without an
// error code to show for it (a partition with no leader yet, a topic
// with fewer partitions than created): kafka.NotYet says "not yet".
type notYetGap struct{ what string }

func (e *notYetGap) Error() string { return e.what }

// lookAgain is the one loop of every read a step makes of something the
// cluster may still be creating or moving: it calls look until its answer
// is final (no error, or an error kafka.NotYet calls final), or ctx ends.
// While the answer is "not yet" it logs, at the second look and then at
// least every 5 s, one constant wait line naming the step, what it waits
// for and the last answer. At ctx's end it returns the last "not yet"
// error (ctx's own error when there was none), so the step's message says
// what the cluster last answered. wait false is doctor's one look.
func lookAgain[T any](ctx context.Context, clk clock.Clock, log *slog.Logger, step, what string, wait bool, look func() (T, error)) (T, error) {
	clk = clock.Or(clk)
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var lastLog time.Time
	var last error
	for n := 0; ; n++ {
		v, err := bounded(ctx, look)
		if ctx.Err() != nil && err != nil && last != nil {
			return v, last
		}
		if err == nil || !kafka.NotYet(err) || !wait || ctx.Err() != nil {
			return v, err
		}
		last = err
		if n == 1 || n > 1 && clk.Now().Sub(lastLog) >= waitLineEvery {
			log.Info("waiting for the cluster to finish creating or moving", "gate", step, "waiting_for", what, "answer", kafka.ExplainConnError(err))
			lastLog = clk.Now()
		}
		select {
		case <-ctx.Done():
			return v, last
		case <-clk.After(jittered(lookAgainEvery)):
		}
	}
}

// lookFailed is the message of a look that ended in err: a "not yet"
// answer (the deadline came first, or doctor's one look) says that the
// cluster was still at work, so nobody blames a cluster that only needed
// more time; a final answer is shown as it is. The cause stays in the
// chain (errors.Is sees the Kafka code).
func lookFailed(what string, err error) error {
	if kafka.NotYet(err) {
		return &lookError{msg: fmt.Sprintf("%s: not yet, the cluster is still creating or moving it: %s", what, kafka.ExplainConnError(err)), err: err}
	}
	return &lookError{msg: fmt.Sprintf("%s: %s", what, kafka.ExplainConnError(err)), err: err}
}

// lookError is lookFailed's error: its words, and the cause underneath.
type lookError struct {
	msg string
	err error
}

func (e *lookError) Error() string { return e.msg }
func (e *lookError) Unwrap() error { return e.err }

// LookAgain is lookAgain for a step outside this package (the plugins
// step's read of the config topic): look until the answer is final or ctx
// ends, with the same wait line; the error is lookFailed's.
func LookAgain[T any](ctx context.Context, clk clock.Clock, log *slog.Logger, step, what string, look func() (T, error)) (T, error) {
	v, err := lookAgain(ctx, clk, log, step, what, true, look)
	if err != nil {
		return v, lookFailed(what, err)
	}
	return v, nil
}

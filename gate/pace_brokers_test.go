package gate

import (
	"bytes"
	"context"
	"log"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clocktest"
	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/workerconfig"
)

// lockedBuffer is sarama's log, written from its goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// closedPort is a loopback address nobody listens on: a broker that is
// not up yet.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Waiting costs nothing (issue 48): the broker gate, waiting for a broker
// that is not up, over two hours of injected time, pauses at least 25 ms
// (the first pause's lower bound) and then settles at a few looks a
// second, with one wait line every 5 s and one sarama "Failed to connect"
// line per look. Before the fix the backoff doubled without bound, the
// time.Duration overflowed after about 38 looks and every later pause was
// zero or negative: the loop spun (prepare: 12.6 s of CPU in 30 s) and
// sarama logged 5,000 lines a second.
func TestBrokerGateWaitPace(t *testing.T) {
	addr := closedPort(t)
	cfg, err := kafka.SaramaConfig(workerconfig.Properties{"bootstrap.servers": addr}, workerconfig.ClientMember)
	if err != nil {
		t.Fatal(err)
	}
	var saramaLog lockedBuffer
	old := sarama.Logger
	sarama.Logger = log.New(&saramaLog, "", 0)
	defer func() { sarama.Logger = old }()

	const horizon = 2 * time.Hour
	const maxBackoff = 400 * time.Millisecond
	// The most looks the horizon allows at the slowest legal pace (every
	// pause at least max/2 once the pace has grown), plus the first ones.
	limit := int(horizon/(maxBackoff/2)) + 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktest.NewHorizon(horizon, 2*limit, cancel)
	logs := &clocktest.Logs{}
	g := &BrokerGate{Config: cfg, Bootstrap: []string{addr}, Expected: 1, Log: slog.New(logs), Clock: clk,
		Jitter: func() float64 { return 0 }, MaxBackoff: maxBackoff}
	before := cpuTime(t)
	rep, err := g.Wait(ctx)
	cpu := cpuTime(t) - before
	if err == nil {
		t.Fatalf("Wait: ready %+v against a closed port", rep)
	}
	clk.AssertReached(t)
	waited := clk.Elapsed()
	clk.AssertPace(t, 25*time.Millisecond, int(time.Minute/(maxBackoff/2))+10)
	if n := clk.Pauses(); n > limit {
		t.Errorf("%d looks in %v, want at most %d", n, horizon, limit)
	}
	if n, most := logs.Count("waiting for brokers"), int(horizon/(5*time.Second))+2; n > most {
		t.Errorf("%d wait lines in %v, want at most %d (one every 5 s)", n, horizon, most)
	}
	// The target of issue 48: waiting 60 s for a broker that never
	// answers costs under 1 s of CPU. The looks of two injected hours ran
	// for real (a dial of a closed port each); their CPU time, whatever
	// the machine's load, per injected minute is what a minute of waiting
	// costs.
	if perMinute := cpu / time.Duration(horizon/time.Minute); perMinute >= time.Second {
		t.Errorf("%v of CPU per minute of waiting (%v for %v), want under 1 s", perMinute, cpu, horizon)
	}
	looks := rep.Attempts
	if n := strings.Count(saramaLog.String(), "Failed to connect to broker"); n > looks+1 {
		t.Errorf("sarama logged %d \"Failed to connect\" lines in %d looks, want at most one a look (a retry of its own would multiply them)", n, looks)
	}
	t.Logf("%d looks, %d wait lines, %d sarama lines in %v of injected time; %v of CPU", looks, logs.Count("waiting for brokers"),
		strings.Count(saramaLog.String(), "Failed to connect to broker"), waited, cpu)
}

// cpuTime is the CPU time, user and system, this process has used.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The pace never pauses zero or less and never above its max, however
// long it runs: the doubling saturates.
func TestPaceSaturates(t *testing.T) {
	for _, j := range []func() float64{nil, func() float64 { return 0 }, func() float64 { return 0.999999 }} {
		p := pace{first: 50 * time.Millisecond, max: 3 * time.Second, jitter: j}
		for i := range 100000 {
			d := p.wait()
			if d < 25*time.Millisecond || d > 3*time.Second {
				t.Fatalf("pause %d is %v, want within [25ms, 3s]", i, d)
			}
		}
	}
}

package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"time"
)

// benchReaction is row 2: a `connect-init prepare` waits for 3 brokers
// while node 3 is down; node 3 is started, and the row is the time from
// node 3 accepting TCP connections on its client port to connect-init
// logging "all brokers up" (lines timestamped on receipt through a pipe).
func benchReaction(ctx context.Context, b *bed, o options, rep *report) error {
	props, err := b.cluster.WorkerProps(freshGroup("react"))
	if err != nil {
		return err
	}
	env := gateEnv(props, "CONNECT_INIT_LOCK=false")
	// Topics first, so each round waits on the broker gate only.
	if r, err := timeRun(ctx, []string{b.binary, "prepare"}, env); err != nil || r.code != 0 {
		if r2, err2 := timeRun(ctx, []string{b.binary, "prepare"}, env); err2 != nil || r2.code != 0 {
			return fmt.Errorf("prepare for the reaction row failed: %v %v\n%s", err, err2, tailString(r2.out, 3000))
		}
	}
	const node = 3
	addr := b.cluster.Addr(node, "PLAINTEXT")
	var reaction, startToAccept []float64
	for i := 0; i < o.reactRuns; i++ {
		b.cluster.Stop(node)
		p, err := startLive("prepare-react", []string{b.binary, "prepare"}, env, filepath.Join(b.logDir, fmt.Sprintf("react-%d.log", i)))
		if err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		// Its first report of the broker gate says what it waits for.
		if _, err := p.waitLine(wctx, "component=connect-init"); err != nil {
			cancel()
			p.kill()
			return err
		}
		time.Sleep(1500 * time.Millisecond) // let it settle into its polling
		if _, up := p.find("all brokers up"); up {
			cancel()
			p.kill()
			return fmt.Errorf("connect-init saw all brokers up while node %d was stopped:\n%s", node, p.tail(3000))
		}
		launched := time.Now()
		if err := b.cluster.Start(node); err != nil {
			cancel()
			p.kill()
			return err
		}
		accepted, err := pollAccept(wctx, addr, 2*time.Millisecond)
		if err != nil {
			cancel()
			p.kill()
			return err
		}
		l, err := p.waitLine(wctx, "all brokers up")
		cancel()
		if err != nil {
			p.kill()
			return err
		}
		reaction = append(reaction, ms(l.at.Sub(accepted)))
		startToAccept = append(startToAccept, float64(accepted.Sub(launched))/float64(time.Second))
		dctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		select {
		case <-p.done:
		case <-dctx.Done():
		}
		cancel()
		p.kill()
		progress("reaction round %d/%d: node %d accepted %.1fs after launch; connect-init reported all brokers up %.0f ms later",
			i+1, o.reactRuns, node, last(startToAccept), last(reaction))
		sctx, cancel := context.WithTimeout(ctx, 90*time.Second)
		err = b.cluster.WaitStarted(sctx, node)
		cancel()
		if err != nil {
			return err
		}
	}
	rep.add("2a", "reaction: last expected broker accepts TCP → `prepare` logs \"all brokers up\"", "ms", reaction,
		fmt.Sprintf("node %d stopped and restarted each round; its port polled every 2 ms", node))
	rep.add("2b", "(context) that broker's JVM launch → its client port accepts", "s", startToAccept, "Kafka's own start time, not connect-init's")
	return nil
}

// pollAccept dials addr every interval until it accepts a connection and
// returns the instant it did.
func pollAccept(ctx context.Context, addr string, every time.Duration) (time.Time, error) {
	d := net.Dialer{Timeout: 100 * time.Millisecond}
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			at := time.Now()
			c.Close()
			return at, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%s never accepted connections: %w", addr, ctx.Err())
		case <-time.After(every):
		}
	}
}

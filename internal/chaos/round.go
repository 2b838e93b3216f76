//go:build integration

package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/connect-init/connect-init/internal/testbed"
)

// Faults are the faults a round may inject.
type Faults struct {
	KillLeader      bool // kill -9 the lock partition's leader at a handoff, restart it 15 s later
	KillCoordinator bool // kill -9 the group coordinator's broker during the gates, restart it 15 s later
	MoveLeader      bool // move the lock partition's leader (reassignment + preferred election)
	StopWaiter      bool // SIGSTOP a waiter for longer than its lease
	StopHolder      bool // SIGSTOP a holder (a slow start) past its hold lease
	HolderDies      bool // kill -9 a holder before it is ready
	CutOff          bool // cut one contender off from every broker for a while
	Slow            bool // slow links for that contender
}

// Names lists the faults set.
func (f Faults) Names() []string {
	var n []string
	for _, x := range []struct {
		on   bool
		name string
	}{{f.KillLeader, "kill-lock-leader"}, {f.KillCoordinator, "kill-coordinator"}, {f.MoveLeader, "move-lock-leader"},
		{f.StopWaiter, "stop-waiter"}, {f.StopHolder, "stop-holder"}, {f.HolderDies, "holder-dies"}, {f.CutOff, "cut-off"}, {f.Slow, "slow-link"}} {
		if x.on {
			n = append(n, x.name)
		}
	}
	return n
}

// RandomFaults draws a mix: each fault with probability one half, at least one.
func RandomFaults(rng *rand.Rand) Faults {
	for {
		f := Faults{rng.Intn(2) == 0, rng.Intn(2) == 0, rng.Intn(2) == 0, rng.Intn(2) == 0, rng.Intn(2) == 0, rng.Intn(2) == 0, rng.Intn(2) == 0, rng.Intn(2) == 0}
		if len(f.Names()) > 0 {
			return f
		}
	}
}

// Options configure a round.
type Options struct {
	Name   string
	N      int
	Seed   int64
	Faults Faults
	Binary string // connect-init to run (Bed.Binary or Bed.Mutant)
	// LockLease is CONNECT_INIT_LOCK_LEASE (hold lease; the waiter lease
	// is the same up to 30 s).
	LockLease time.Duration
	// ReadyAfter is how long each stand-in takes to get ready.
	ReadyAfter time.Duration
	// UnavailableAfter is CONNECT_INIT_LOCK_UNAVAILABLE_AFTER.
	UnavailableAfter time.Duration
	// Logf reports progress (t.Logf).
	Logf func(string, ...any)
}

// Stall is one kill of the lock partition's leader, measured.
type Stall struct {
	Killed   int
	Failover time.Duration // kill -> the cluster names a new leader (its own failover)
	Resumed  time.Duration // new leader -> the first record any contender wrote after the kill
	AllBack  time.Duration // new leader -> every waiter that wrote after the kill has written
}

// Result is a round's outcome.
type Result struct {
	History    *History
	Violations []Violation
	Faults     []string
	Stalls     []Stall
	Took       time.Duration // start -> every live contender started
}

// proc is one contender process and what its log has said so far.
type proc struct {
	c       *Contender
	p       *testbed.Process
	port    int
	proxied bool
	env     []string
	mu      sync.Mutex
	off     int64
}

// scan reads new lines of the contender's log.
func (p *proc) scan() {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.Open(p.p.LogPath)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(p.off, 0); err != nil {
		return
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if err != nil { // an incomplete line is read again next time
			return
		}
		p.off += int64(len(line))
		var ev struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil {
			continue
		}
		switch {
		case ev.Msg == "acquired startup lock" && p.c.Acquired.IsZero():
			p.c.Acquired = ev.Time
		case ev.Msg == "standin ready" && p.c.Ready.IsZero():
			p.c.Ready = ev.Time
		case strings.HasPrefix(ev.Msg, "STARTING WITHOUT THE STARTUP LOCK") && p.c.Unlocked.IsZero():
			p.c.Unlocked = ev.Time
		case ev.Msg == "waiting for startup lock" && p.c.Waiting.IsZero():
			p.c.Waiting = ev.Time
		}
	}
}

func (p *proc) get() Contender {
	p.scan()
	p.mu.Lock()
	defer p.mu.Unlock()
	return *p.c
}

// Round runs one round on b and judges it.
func Round(ctx context.Context, b *Bed, o Options) (*Result, error) {
	rng := rand.New(rand.NewSource(o.Seed))
	logf := o.Logf
	group := fmt.Sprintf("chaos-%s-%d", o.Name, o.Seed)
	topic := "_chaos-lock-" + group
	dir := filepath.Join(b.Dir, group)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lease := min(o.LockLease, 30*time.Second)
	f := o.Faults
	res := &Result{Faults: f.Names()}

	// The liveness bound: the gates of N processes at once on a loaded
	// machine, one handoff per contender (its stand-in's start plus a few
	// polls), and what each fault may cost by the lock's own rules.
	bound := 120*time.Second + time.Duration(o.N)*(o.ReadyAfter+3*time.Second)
	if f.KillLeader {
		bound += 30*time.Second + lease
	}
	if f.KillCoordinator {
		bound += 30 * time.Second
	}
	if f.MoveLeader {
		bound += 10 * time.Second
	}
	if f.StopWaiter {
		bound += lease + 5*time.Second
	}
	if f.StopHolder || f.HolderDies {
		bound += 2 * (o.LockLease + 5*time.Second)
	}
	if f.CutOff {
		bound += 20*time.Second + lease
	}
	if f.Slow {
		bound += time.Duration(o.N) * 3 * time.Second
	}
	if o.UnavailableAfter > 0 {
		bound += o.UnavailableAfter
	}

	procs := make([]*proc, o.N)
	proxied := -1
	if f.CutOff || f.Slow {
		proxied = rng.Intn(o.N)
	}
	for i := range procs {
		var err error
		if procs[i], err = newProc(b, o, group, topic, fmt.Sprintf("c%d", i), i == proxied); err != nil {
			return nil, err
		}
	}
	defer func() {
		for _, p := range procs {
			if p.p != nil {
				p.p.Kill()
			}
		}
		for _, px := range b.Proxies {
			px.Toxics.ResetToxics(context.Background())
			_ = px.Start()
		}
	}()
	if f.Slow {
		for _, px := range b.Proxies {
			lat := 100 + rng.Intn(400)
			if _, err := px.Toxics.AddToxicJson(strings.NewReader(fmt.Sprintf(`{"name":"slow","type":"latency","stream":"downstream","attributes":{"latency":%d,"jitter":50}}`, lat))); err != nil {
				return nil, err
			}
		}
	}

	start := time.Now()
	var wg sync.WaitGroup
	gate := make(chan struct{})
	errs := make([]error, o.N)
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			errs[i] = p.start(b, o.Binary, dir, o.ReadyAfter)
		}()
	}
	close(gate)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	logf("round %s seed %d: %d contenders, faults %v, bound %s", o.Name, o.Seed, o.N, res.Faults, bound)

	// The fault schedule: each fault picks its moment from the seed.
	inj := &injector{b: b, procs: procs, rng: rng, topic: topic, group: group, logf: logf, lease: lease, o: o}
	done := make(chan struct{})
	var fwg sync.WaitGroup
	fwg.Add(1)
	go func() { defer fwg.Done(); inj.run(ctx, done) }()

	deadline := start.Add(bound + 30*time.Second)
	for {
		all := true
		for _, p := range procs {
			c := p.get()
			if p.p.Exited() {
				continue
			}
			if c.Ready.IsZero() && c.Unlocked.IsZero() {
				all = false
			}
		}
		if all || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	res.Took = time.Since(start)
	close(done)
	fwg.Wait()
	// Let a mutant's late second holder show, then collect.
	time.Sleep(time.Second)
	h := &History{Scope: group, Permits: 1, Start: start, Bound: bound}
	if err := collect(ctx, b, h, procs, inj.killed, topic); err != nil {
		return nil, err
	}
	res.History = h
	res.Violations = Check(h)
	res.Stalls = inj.stalls(h.Records)
	return res, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// injector carries out a round's faults.
type injector struct {
	b      *Bed
	procs  []*proc
	rng    *rand.Rand
	topic  string
	group  string
	logf   func(string, ...any)
	lease  time.Duration
	o      Options
	mu     sync.Mutex
	killed map[string]bool
	kills  []kill
	broker sync.Mutex // one broker down at a time
}

type kill struct {
	id         int
	at, leader time.Time
}

func (in *injector) acquisitions() int {
	n := 0
	for _, p := range in.procs {
		if !p.get().Acquired.IsZero() {
			n++
		}
	}
	return n
}

// waitFor polls cond until it holds or done closes.
func waitFor(done <-chan struct{}, cond func() bool) bool {
	for !cond() {
		select {
		case <-done:
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	return true
}

func sleep(done <-chan struct{}, d time.Duration) bool {
	select {
	case <-done:
		return false
	case <-time.After(d):
		return true
	}
}

func (in *injector) run(ctx context.Context, done <-chan struct{}) {
	in.killed = map[string]bool{}
	f := in.o.Faults
	n := in.o.N
	var wg sync.WaitGroup
	spawn := func(fn func()) { wg.Add(1); go func() { defer wg.Done(); fn() }() }
	// Draw every moment up front, so that a seed fixes the schedule.
	atLeader, atMove, atHolderStop, atHolderDie := 1+in.rng.Intn(max(1, n-3)), 1+in.rng.Intn(max(1, n-2)), 1+in.rng.Intn(max(1, n-2)), 1+in.rng.Intn(max(1, n-2))
	coordDelay := time.Duration(500+in.rng.Intn(3000)) * time.Millisecond
	cutFor := time.Duration(5+in.rng.Intn(15)) * time.Second
	waiterPick := in.rng.Intn(n)
	if f.KillCoordinator {
		spawn(func() {
			if !sleep(done, coordDelay) {
				return
			}
			in.broker.Lock()
			defer in.broker.Unlock()
			id := in.b.coordinator(in.group)
			if id <= 0 {
				in.logf("kill-coordinator: no coordinator found")
				return
			}
			in.killBroker(ctx, done, id, false)
		})
	}
	if f.KillLeader {
		spawn(func() {
			if !waitFor(done, func() bool { return in.acquisitions() >= atLeader }) {
				return
			}
			in.broker.Lock()
			defer in.broker.Unlock()
			id := in.b.leader(in.topic)
			if id <= 0 {
				in.logf("kill-lock-leader: no leader found")
				return
			}
			in.killBroker(ctx, done, id, true)
		})
	}
	if f.MoveLeader {
		spawn(func() {
			if !waitFor(done, func() bool { return in.acquisitions() >= atMove }) {
				return
			}
			in.broker.Lock()
			defer in.broker.Unlock()
			from, to, err := in.b.moveLeader(in.topic)
			in.logf("move-lock-leader: %d -> %d (%v)", from, to, err)
		})
	}
	if f.StopWaiter {
		spawn(func() {
			// The first waiter from waiterPick on that is queued and has not acquired.
			var target *proc
			waitFor(done, func() bool {
				for k := range n {
					p := in.procs[(waiterPick+k)%n]
					c := p.get()
					if !c.Waiting.IsZero() && c.Acquired.IsZero() && !p.p.Exited() {
						target = p
						return true
					}
				}
				return false
			})
			if target == nil {
				return
			}
			d := in.lease + 5*time.Second
			in.logf("stop-waiter: SIGSTOP %s for %s", target.c.Name, d)
			_ = target.p.Signal(syscall.SIGSTOP)
			sleep(done, d)
			_ = target.p.Signal(syscall.SIGCONT)
		})
	}
	holderFault := func(at int, what string, act func(p *proc)) {
		spawn(func() {
			var target *proc
			waitFor(done, func() bool {
				if in.acquisitions() < at {
					return false
				}
				// The holder: acquired, not yet ready.
				for _, p := range in.procs {
					c := p.get()
					if !c.Acquired.IsZero() && c.Ready.IsZero() && !p.p.Exited() {
						target = p
						return true
					}
				}
				return in.acquisitions() >= n
			})
			if target != nil {
				in.logf("%s: %s", what, target.c.Name)
				act(target)
			}
		})
	}
	if f.HolderDies {
		holderFault(atHolderDie, "holder-dies", func(p *proc) {
			in.mu.Lock()
			in.killed[p.c.Name] = true
			in.mu.Unlock()
			p.p.Kill()
		})
	}
	if f.StopHolder {
		holderFault(atHolderStop, "stop-holder", func(p *proc) {
			_ = p.p.Signal(syscall.SIGSTOP)
			sleep(done, in.o.LockLease+3*time.Second)
			_ = p.p.Signal(syscall.SIGCONT)
		})
	}
	if f.CutOff {
		spawn(func() {
			var target *proc
			for _, p := range in.procs {
				if p.proxied {
					target = p
				}
			}
			if target == nil || !waitFor(done, func() bool { c := target.get(); return !c.Acquired.IsZero() || !c.Waiting.IsZero() }) {
				return
			}
			in.logf("cut-off: %s from every broker for %s", target.c.Name, cutFor)
			for _, px := range in.b.Proxies {
				px.Stop()
			}
			sleep(done, cutFor)
			for _, px := range in.b.Proxies {
				if err := px.Start(); err != nil {
					in.logf("cut-off: restarting proxy: %v", err)
				}
			}
		})
	}
	wg.Wait()
}

// killBroker kill -9s broker id, measures the election of a new lock
// leader (when lockLeader), restarts it 15 s later and waits until it runs.
func (in *injector) killBroker(ctx context.Context, done <-chan struct{}, id int, lockLeader bool) {
	at := time.Now()
	in.b.Cluster.Kill(id)
	in.logf("kill -9 broker %d (lock leader: %v)", id, lockLeader)
	k := kill{id: id, at: at}
	if lockLeader {
		for time.Since(at) < 60*time.Second {
			if l := in.b.leader(in.topic); l > 0 && l != id {
				k.leader = time.Now()
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		in.logf("lock partition: new leader %s after the kill", k.leader.Sub(at).Round(time.Millisecond))
	}
	in.mu.Lock()
	in.kills = append(in.kills, k)
	in.mu.Unlock()
	time.Sleep(max(0, 15*time.Second-time.Since(at)))
	if err := in.b.Cluster.Start(id); err != nil {
		in.logf("restart broker %d: %v", id, err)
		return
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := in.b.Cluster.WaitStarted(wctx, id); err != nil {
		in.logf("broker %d did not restart: %v", id, err)
	}
}

// stalls measures each kill of the lock leader against the records that
// followed it.
func (in *injector) stalls(recs []Record) []Stall {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []Stall
	for _, k := range in.kills {
		if k.leader.IsZero() {
			continue
		}
		s := Stall{Killed: k.id, Failover: k.leader.Sub(k.at)}
		first := map[string]time.Time{}
		var firstAny time.Time
		for _, r := range recs {
			if !r.Time.After(k.at) || r.Release || r.Tombstone {
				continue
			}
			if _, ok := first[r.Identity]; !ok {
				first[r.Identity] = r.Time
			}
			if firstAny.IsZero() {
				firstAny = r.Time
			}
		}
		if firstAny.IsZero() {
			continue
		}
		s.Resumed = firstAny.Sub(k.leader)
		for _, t := range first {
			if d := t.Sub(k.leader); d > s.AllBack {
				s.AllBack = d
			}
		}
		out = append(out, s)
	}
	return out
}

// newProc prepares (does not start) one contender of group: its own REST
// port (its lock identity), the lock settings of o, JSON logs; proxied
// contenders reach the brokers only through the Bed's proxies.
func newProc(b *Bed, o Options, group, topic, name string, proxied bool) (*proc, error) {
	port, err := testbed.FreePort()
	if err != nil {
		return nil, err
	}
	props, err := b.Cluster.WorkerProps(map[string]string{
		"group.id": group, "config.storage.topic": group + "-configs",
		"offset.storage.topic": group + "-offsets", "status.storage.topic": group + "-status",
		"listeners": fmt.Sprintf("http://127.0.0.1:%d", port), "rest.advertised.host.name": "127.0.0.1",
	})
	if err != nil {
		return nil, err
	}
	if proxied {
		props["bootstrap.servers"] = b.ProxyBootstrap
	}
	env := append(testbed.BaseEnv(), testbed.EnvFromProps(props)...)
	env = append(env, "CONNECT_INIT_LOCK=true", "CONNECT_INIT_LOCK_TOPIC="+topic, "CONNECT_INIT_LOCK_MODE=exec",
		"CONNECT_INIT_LOCK_LEASE="+o.LockLease.String(), "CONNECT_INIT_LOG_FORMAT=json", "CONNECT_INIT_TIMEOUT=5m",
		"CONNECT_INIT_LOCK_UNAVAILABLE_AFTER="+o.UnavailableAfter.String())
	return &proc{c: &Contender{Name: name, Identity: fmt.Sprintf("http://127.0.0.1:%d/", port)}, port: port, proxied: proxied, env: env}, nil
}

// start runs `connect-init run -- standin` for p, with extra stand-in flags.
func (p *proc) start(b *Bed, binary, dir string, readyAfter time.Duration, standinFlags ...string) error {
	argv := []string{binary, "run", "--", b.Standin, "-listen", fmt.Sprintf("127.0.0.1:%d", p.port), "-ready-after", readyAfter.String()}
	argv = append(argv, standinFlags...)
	var err error
	p.p, err = testbed.StartProcess(p.c.Name, argv, p.env, dir, filepath.Join(dir, p.c.Name+".log"))
	return err
}

// collect turns the processes into a judged history.
func collect(ctx context.Context, b *Bed, h *History, procs []*proc, killed map[string]bool, topic string) error {
	for _, p := range procs {
		if p.p == nil {
			continue
		}
		c := p.get()
		if p.p.Exited() {
			c.Exited = true
			c.ExitCode, _ = p.p.ExitCode(ctx)
		}
		c.Killed = killed[p.c.Name]
		c.LogTail = tail(p.p.Log(), 2500)
		h.Contenders = append(h.Contenders, &c)
	}
	recs, err := b.readTopic(ctx, topic)
	if err != nil {
		return fmt.Errorf("chaos: reading the lock topic: %w", err)
	}
	h.Records = recs
	return nil
}

// runOnce runs binary to completion.
func runOnce(ctx context.Context, binary string, args, env []string) (int, string, error) {
	return testbed.Run(ctx, binary, args, env)
}

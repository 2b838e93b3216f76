//go:build integration

package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/lock"
)

// StaleClaim is the round that tells a validated lock from one that is
// not. Three contenders: H holds until the harness makes its stand-in
// ready; Z queues next and is SIGSTOPped for longer than its lease; X
// queues after Z on a link whose answers arrive 3 s late (a downstream
// latency toxic). Once Z is dead in broker time the harness makes H ready;
// X, the first live waiter, releases H and claims 3 s behind the log; the
// harness resumes Z 3 s after the release lands, and Z, on a fast link,
// heartbeats (keeping its ticket) before X's claim arrives. Validation makes X's claim lose (Z was a live
// waiter of an earlier ticket when it landed); without validation both
// proceed and two holders start at once.
func StaleClaim(ctx context.Context, b *Bed, binary string, seed int64, logf func(string, ...any)) (*Result, error) {
	o := Options{Name: "stale", Seed: seed, LockLease: 20 * time.Second, Binary: binary}
	lease := o.LockLease
	group := fmt.Sprintf("chaos-stale-%d-%d", seed, time.Now().UnixNano()%1e6)
	topic := "_chaos-lock-" + group
	dir := filepath.Join(b.Dir, group)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var procs []*proc
	defer func() {
		for _, p := range procs {
			if p.p != nil {
				_ = p.p.Signal(syscall.SIGCONT)
				p.p.Kill()
			}
		}
		for _, px := range b.Proxies {
			px.Toxics.ResetToxics(context.Background())
		}
	}()
	add := func(name string, proxied bool, lockLease, readyAfter time.Duration, flags ...string) (*proc, error) {
		oo := o
		oo.LockLease = lockLease
		p, err := newProc(b, oo, group, topic, name, proxied)
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
		return p, p.start(b, binary, dir, readyAfter, flags...)
	}
	wait := func(what string, cond func() bool) error {
		deadline := time.Now().Add(3 * time.Minute)
		for !cond() {
			if time.Now().After(deadline) || ctx.Err() != nil {
				var tails []string
				for _, p := range procs {
					tails = append(tails, p.c.Name+":\n"+tail(p.p.Log(), 1500))
				}
				return fmt.Errorf("chaos: stale-claim round: waiting for %s timed out\n%s", what, strings.Join(tails, "\n"))
			}
			time.Sleep(100 * time.Millisecond)
		}
		return nil
	}
	start := time.Now()
	hReady := filepath.Join(dir, "H.ready")
	h, err := add("H", false, 10*time.Minute, 0, "-ready-file", hReady)
	if err != nil {
		return nil, err
	}
	if err := wait("H to acquire", func() bool { return !h.get().Acquired.IsZero() }); err != nil {
		return nil, err
	}
	z, err := add("Z", false, lease, 15*time.Second)
	if err != nil {
		return nil, err
	}
	if err := wait("Z to queue", func() bool { return !z.get().Waiting.IsZero() }); err != nil {
		return nil, err
	}
	x, err := add("X", true, lease, time.Second)
	if err != nil {
		return nil, err
	}
	if err := wait("X to queue", func() bool { return !x.get().Waiting.IsZero() }); err != nil {
		return nil, err
	}
	for _, px := range b.Proxies {
		if _, err := px.Toxics.AddToxicJson(strings.NewReader(`{"name":"late","type":"latency","stream":"downstream","attributes":{"latency":3000}}`)); err != nil {
			return nil, err
		}
	}
	if err := z.p.Signal(syscall.SIGSTOP); err != nil {
		return nil, err
	}
	logf("stale-claim: Z stopped; X answers 3 s late")
	time.Sleep(time.Second) // Z's last write, if one was in flight, lands
	recs, err := b.readTopic(ctx, topic)
	if err != nil {
		return nil, err
	}
	var zLast time.Time
	for _, r := range recs {
		if r.Identity == z.c.Identity && !r.Release {
			zLast = r.Time
		}
	}
	dead := zLast.Add(lease)
	if err := wait("the log to pass Z's lease", func() bool {
		recs, err := b.readTopic(ctx, topic)
		return err == nil && len(recs) > 0 && recs[len(recs)-1].Time.After(dead)
	}); err != nil {
		return nil, err
	}
	if err := os.WriteFile(hReady, nil, 0o644); err != nil {
		return nil, err
	}
	var released time.Time
	if err := wait("X to release H", func() bool {
		recs, err := b.readTopic(ctx, topic)
		if err != nil {
			return false
		}
		for _, r := range recs {
			if r.Release && r.Identity == h.c.Identity {
				released = r.Time
				return true
			}
		}
		return false
	}); err != nil {
		return nil, err
	}
	// X reads the release in the first fetch answered after it lands
	// (within one fetch cycle, 3.5 s on its link) and its claim lands
	// 3 s after that answer left the broker. Resuming Z 3 s after the
	// release puts Z's heartbeat inside that window for every answer sent
	// in the release's first 3 s: most rounds; the control allows several.
	time.Sleep(time.Until(released.Add(3 * time.Second)))
	_ = z.p.Signal(syscall.SIGCONT)
	logf("stale-claim: H released with Z dead; Z resumed 3 s after the release")
	if err := wait("Z and X to start", func() bool {
		return (!z.get().Ready.IsZero() || z.p.Exited()) && (!x.get().Ready.IsZero() || x.p.Exited())
	}); err != nil {
		return nil, err
	}
	time.Sleep(time.Second)
	hist := &History{Scope: group, Permits: 1, Start: start, Bound: 10 * time.Minute}
	if err := collect(ctx, b, hist, procs, nil, topic); err != nil {
		return nil, err
	}
	return &Result{History: hist, Violations: Check(hist), Faults: []string{"stop-waiter", "slow-link"}, Took: time.Since(start)}, nil
}

// Unwritable is the round of the unwritable lock topic (item 3): the lock
// topic is made to need 3 in-sync replicas and one broker is killed, so
// that no write to it can succeed; two contenders must then start without
// the lock after CONNECT_INIT_LOCK_UNAVAILABLE_AFTER, each with the warning
// naming topic and partition, and none may exit.
func Unwritable(ctx context.Context, b *Bed, after time.Duration, logf func(string, ...any)) (*Result, error) {
	o := Options{Name: "unwritable", LockLease: 20 * time.Second, Binary: b.Binary, UnavailableAfter: after}
	group := fmt.Sprintf("chaos-unwritable-%d", time.Now().UnixNano()%1e6)
	topic := "_chaos-lock-" + group
	dir := filepath.Join(b.Dir, group)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c, err := b.client()
	if err != nil {
		return nil, err
	}
	admin, err := sarama.NewClusterAdminFromClient(c)
	if err != nil {
		c.Close()
		return nil, err
	}
	if err := lock.EnsureTopic(ctx, admin, topic, 3); err != nil {
		admin.Close()
		return nil, err
	}
	three := "3"
	err = admin.IncrementalAlterConfig(sarama.TopicResource, topic, map[string]sarama.IncrementalAlterConfigsEntry{
		"min.insync.replicas": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &three}}, false)
	admin.Close()
	if err != nil {
		return nil, err
	}
	// The group's internal topics exist before the broker goes (the
	// topics step cannot create replication-factor-3 topics on two brokers).
	var procs []*proc
	defer func() {
		for _, p := range procs {
			if p.p != nil {
				p.p.Kill()
			}
		}
	}()
	prep, err := newProc(b, o, group, topic, "prepare", false)
	if err != nil {
		return nil, err
	}
	code, out, err := runOnce(ctx, b.Binary, []string{"prepare"}, prep.env)
	if err != nil || code != 0 {
		return nil, fmt.Errorf("chaos: prepare: exit %d %v\n%s", code, err, tail(out, 2000))
	}
	victim := 3
	b.Cluster.Kill(victim)
	logf("unwritable: broker %d killed; %s needs 3 in-sync replicas", victim, topic)
	defer func() {
		if err := b.Cluster.Start(victim); err == nil {
			wctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			_ = b.Cluster.WaitStarted(wctx, victim)
		}
	}()
	start := time.Now()
	for i := range 2 {
		p, err := newProc(b, o, group, topic, fmt.Sprintf("u%d", i), false)
		if err != nil {
			return nil, err
		}
		p.env = append(p.env, "CONNECT_INIT_EXPECTED_BROKERS=2")
		procs = append(procs, p)
		if err := p.start(b, b.Binary, dir, time.Second); err != nil {
			return nil, err
		}
	}
	deadline := time.Now().Add(after + 3*time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		all := true
		for _, p := range procs {
			if c := p.get(); c.Ready.IsZero() && !p.p.Exited() {
				all = false
			}
		}
		if all {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	hist := &History{Scope: group, Permits: 1, Start: start, Bound: after + 2*time.Minute}
	if err := collect(ctx, b, hist, procs, nil, topic); err != nil {
		return nil, err
	}
	return &Result{History: hist, Violations: Check(hist), Faults: []string{"unwritable-lock-topic"}, Took: time.Since(start)}, nil
}

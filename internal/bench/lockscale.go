package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
)

// lockWired reports whether the connect-init binary contains the startup
// lock (the lead wires it into `run`; until then rows 3b, 3c and 5 cannot
// run).
func lockWired(b *bed) (bool, error) {
	data, err := os.ReadFile(b.binary)
	if err != nil {
		return false, err
	}
	return bytes.Contains(data, []byte("acquired startup lock")), nil
}

// contender is one `connect-init run -- standin` of row 5.
type contender struct {
	port     int
	proc     *liveProc
	acquired time.Time
	hwmKB    int64
}

// benchLockScale is rows 5 and 4c: N contenders of one group start at
// once, each `connect-init run -- standin` with its own advertised REST
// port; the stand-in answers /health 200 as soon as it runs, so each holder
// is ready right after exec.
func benchLockScale(ctx context.Context, b *bed, o options, rep *report) error {
	if ok, err := lockWired(b); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("the startup lock is not wired into `connect-init run` yet (no \"acquired startup lock\" in the binary)")
	}
	group := freshGroup("lock")
	lockTopic := "bench-lock-" + strings.TrimPrefix(group["group.id"], "bench-lock-")
	base, err := b.cluster.WorkerProps(group)
	if err != nil {
		return err
	}
	if r, err := timeRun(ctx, []string{b.binary, "prepare"}, gateEnv(base, "CONNECT_INIT_LOCK=false")); err != nil || r.code != 0 {
		if r2, err2 := timeRun(ctx, []string{b.binary, "prepare"}, gateEnv(base, "CONNECT_INIT_LOCK=false")); err2 != nil || r2.code != 0 {
			return fmt.Errorf("prepare for the lock row failed: %v %v\n%s", err, err2, tailString(r2.out, 3000))
		}
	}
	n := o.contenders
	cs := make([]*contender, n)
	type launch struct{ argv, env []string }
	launches := make([]launch, n)
	for i := range cs {
		port, err := testbed.FreePort()
		if err != nil {
			return err
		}
		props := map[string]string{}
		for k, v := range base {
			props[k] = v
		}
		props["listeners"] = fmt.Sprintf("http://127.0.0.1:%d", port)
		props["rest.advertised.host.name"] = "127.0.0.1"
		cs[i] = &contender{port: port}
		launches[i] = launch{
			argv: []string{b.binary, "run", "--", b.standin, "-listen", fmt.Sprintf("127.0.0.1:%d", port)},
			env:  gateEnv(props, "CONNECT_INIT_LOCK=true", "CONNECT_INIT_LOCK_TOPIC="+lockTopic, "CONNECT_INIT_TIMEOUT=10m"),
		}
	}
	defer func() {
		for _, c := range cs {
			if c.proc != nil {
				c.proc.kill()
			}
		}
	}()
	t0, err := startAtOnce(len(cs), func(i int) (err error) {
		cs[i].proc, err = startLive(fmt.Sprintf("contender-%d", i), launches[i].argv, launches[i].env,
			filepath.Join(b.logDir, fmt.Sprintf("lock-contender-%02d.log", i)))
		return err
	})
	if err != nil {
		return err
	}
	progress("%d contenders started in %s", n, time.Since(t0).Round(time.Millisecond))

	// Sample each contender's VmHWM while it is still connect-init.
	stopSampling := make(chan struct{})
	var sampleWG sync.WaitGroup
	var hwmMu sync.Mutex
	sampleWG.Add(1)
	go func() {
		defer sampleWG.Done()
		for {
			for _, c := range cs {
				hwmMu.Lock()
				done := !c.acquired.IsZero()
				hwmMu.Unlock()
				if done || c.proc.exited() {
					continue
				}
				if name, hwm, err := procStatus(c.proc.cmd.Process.Pid); err == nil && name == "connect-init" {
					hwmMu.Lock()
					if hwm > c.hwmKB {
						c.hwmKB = hwm
					}
					hwmMu.Unlock()
				}
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()

	wctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	var firstErr error
	var awg sync.WaitGroup
	var errMu sync.Mutex
	for _, c := range cs {
		awg.Add(1)
		go func(c *contender) {
			defer awg.Done()
			l, err := c.proc.waitLine(wctx, "acquired startup lock")
			hwmMu.Lock()
			c.acquired = l.at
			hwmMu.Unlock()
			if err != nil {
				errMu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				errMu.Unlock()
				cancel()
			}
		}(c)
	}
	awg.Wait()
	close(stopSampling)
	sampleWG.Wait()
	if firstErr != nil {
		return firstErr
	}
	times := make([]time.Time, 0, n)
	for _, c := range cs {
		times = append(times, c.acquired)
	}
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	var handoffs []float64
	for i := 1; i < len(times); i++ {
		handoffs = append(handoffs, ms(times[i].Sub(times[i-1])))
	}
	// Every contender but the first waited: its VmHWM just before it
	// acquired is a waiter's peak RSS.
	var hwm []float64
	for _, c := range cs {
		if !c.acquired.Equal(times[0]) && c.hwmKB > 0 {
			hwm = append(hwm, float64(c.hwmKB)/1024)
		}
	}
	b.waiterHWM = hwm
	progress("lock scale: first acquisition after %s, last after %s, median handoff %.0f ms",
		times[0].Sub(t0).Round(time.Millisecond), times[len(times)-1].Sub(t0).Round(time.Millisecond), median(handoffs))
	rep.add("5a", fmt.Sprintf("startup lock, %d contenders: handoff latency (one holder's \"acquired startup lock\" → the next one's)", n), "ms", handoffs,
		"holder = `connect-init run -- standin` that serves /health 200 at once; 1 permit")
	rep.add("5b", fmt.Sprintf("startup lock, %d contenders: all started → first acquires (gates of %d concurrent processes)", n, n), "s",
		[]float64{times[0].Sub(t0).Seconds()}, "")
	rep.add("5c", fmt.Sprintf("startup lock, %d contenders: all started → last acquires", n), "s",
		[]float64{times[len(times)-1].Sub(t0).Seconds()}, "")
	time.Sleep(time.Second)
	for _, c := range cs {
		c.proc.kill()
	}
	return lockTopicSize(ctx, b, lockTopic, rep)
}

// topicStats counts the records of a single-partition topic.
type topicStats struct {
	oldest, newest int64
	records, keys  int
	tombstones     int
}

func newAdmin(b *bed) (sarama.Client, sarama.ClusterAdmin, error) {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.Consumer.Return.Errors = true
	client, err := sarama.NewClient(strings.Split(b.cluster.Bootstrap(), ","), cfg)
	if err != nil {
		return nil, nil, err
	}
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return client, admin, nil
}

func readTopic(ctx context.Context, client sarama.Client, topic string) (topicStats, error) {
	var st topicStats
	var err error
	if st.oldest, err = client.GetOffset(topic, 0, sarama.OffsetOldest); err != nil {
		return st, err
	}
	if st.newest, err = client.GetOffset(topic, 0, sarama.OffsetNewest); err != nil {
		return st, err
	}
	if st.newest <= st.oldest {
		return st, nil
	}
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return st, err
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(topic, 0, st.oldest)
	if err != nil {
		return st, err
	}
	defer pc.Close()
	keys := map[string]bool{}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		select {
		case m := <-pc.Messages():
			st.records++
			keys[string(m.Key)] = true
			if m.Value == nil {
				st.tombstones++
			}
			if m.Offset >= st.newest-1 {
				st.keys = len(keys)
				return st, nil
			}
		case e := <-pc.Errors():
			return st, e
		case <-ctx.Done():
			st.keys = len(keys)
			return st, fmt.Errorf("reading %s: %w", topic, ctx.Err())
		}
	}
}

// diskBytes sums the files of topic's partition directories in every
// broker's log dir.
func diskBytes(b *bed, topic string) (total, logs int64) {
	for id := 1; id <= b.cluster.Opts.Brokers; id++ {
		dir := filepath.Join(b.cluster.Opts.Dir, fmt.Sprintf("node-%d", id), "data", topic+"-0")
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if info, err := d.Info(); err == nil {
				total += info.Size()
				if strings.HasSuffix(path, ".log") {
					logs += info.Size()
				}
			}
			return nil
		})
	}
	return total, logs
}

// lockTopicSize reports the lock topic's records and bytes, then forces a
// segment roll (segment.ms lowered on this benchmark-only topic and one
// tombstone appended) so the cleaner compacts the closed segment, and
// reports them again.
func lockTopicSize(ctx context.Context, b *bed, topic string, rep *report) error {
	client, admin, err := newAdmin(b)
	if err != nil {
		return err
	}
	defer client.Close()
	before, err := readTopic(ctx, client, topic)
	if err != nil {
		return err
	}
	_, logBefore := diskBytes(b, topic)
	rep.add("5d", "lock topic as written: records (latest − earliest offset) / distinct keys / tombstones", "",
		[]float64{float64(before.newest - before.oldest)}, fmt.Sprintf("%d distinct keys, %d tombstones, %d B of .log on disk (3 replicas)", before.keys, before.tombstones, logBefore))

	one := "1000"
	if err := admin.IncrementalAlterConfig(sarama.TopicResource, topic, map[string]sarama.IncrementalAlterConfigsEntry{
		"segment.ms": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &one},
	}, false); err != nil {
		return fmt.Errorf("lowering segment.ms of %s: %w", topic, err)
	}
	time.Sleep(3 * time.Second)
	pcfg := sarama.NewConfig()
	pcfg.Version = sarama.MaxVersion
	pcfg.Producer.Return.Successes = true
	pcfg.Producer.RequiredAcks = sarama.WaitForAll
	prod, err := sarama.NewSyncProducer(strings.Split(b.cluster.Bootstrap(), ","), pcfg)
	if err != nil {
		return err
	}
	_, _, err = prod.SendMessage(&sarama.ProducerMessage{Topic: topic, Key: sarama.StringEncoder(`{"scope":"bench-segment-roll","identity":"bench"}`)})
	prod.Close()
	if err != nil {
		return fmt.Errorf("rolling a segment of %s: %w", topic, err)
	}
	// The cleaner checks every 15 s (log.cleaner.backoff.ms).
	deadline := time.Now().Add(90 * time.Second)
	var after topicStats
	var logAfter int64
	for time.Now().Before(deadline) {
		time.Sleep(5 * time.Second)
		if after, err = readTopic(ctx, client, topic); err != nil {
			return err
		}
		_, logAfter = diskBytes(b, topic)
		if after.records < before.records {
			break
		}
	}
	note := fmt.Sprintf("%d distinct keys, %d B of .log on disk (3 replicas); segment.ms lowered to force a roll", after.keys, logAfter)
	if after.records >= before.records {
		note = "the cleaner did not compact within 90 s; " + note
	}
	rep.add("5e", "lock topic after compaction: records", "", []float64{float64(after.records)}, note)
	return nil
}

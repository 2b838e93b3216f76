//go:build integration && monitoring

package monitoring

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestWatcherMemory takes many looks in a short time (one a second) on a
// group with a worker and an existing startup lock topic, and logs the
// watcher's memory, descriptors and goroutines every 50 looks: an hour of
// looks at the examples' --interval=30s is 120 looks, so
// CITEST_MEMORY_LOOKS (default 480, four hours' worth) compresses
// hours into minutes. It fails when descriptors or goroutines grow, or
// the heap more than doubles, between the first sample and the last.
func TestWatcherMemory(t *testing.T) {
	looks := 480.0
	if v, err := strconv.Atoi(os.Getenv("CITEST_MEMORY_LOOKS")); err == nil && v > 0 {
		looks = float64(v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(looks)*5*time.Second)
	defer cancel()
	g, _ := groupOn(t, "mem", 2)
	ours := topicsOf(g, "a")
	startWorker(ctx, t, "a", ours)
	admin, err := sarama.NewClusterAdmin([]string{cluster.Addr(1, "PLAINTEXT")}, saramaConfig())
	if err != nil {
		t.Fatal(err)
	}
	compact := "compact"
	err = admin.CreateTopic("_connect-init-lock", &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 3, ConfigEntries: map[string]*string{"cleanup.policy": &compact}}, false)
	admin.Close()
	if err != nil && !errorsIsTopicExists(err) {
		t.Fatal(err)
	}
	w := startWatcher(t, g, watcherEnv(t, ours), time.Second)
	type sample struct{ looks, rss, heap, fds, gor float64 }
	take := func() sample {
		_, mfs := w.scrape(t)
		var s sample
		s.looks = okLooks(mfs)
		s.rss, _ = value(mfs, "process_resident_memory_bytes", nil)
		s.heap, _ = value(mfs, "go_memstats_heap_inuse_bytes", nil)
		s.fds, _ = value(mfs, "process_open_fds", nil)
		s.gor, _ = value(mfs, "go_goroutines", nil)
		return s
	}
	start := time.Now()
	waitLooks(ctx, t, w, 10)
	first := take()
	last := first
	for next := first.looks + 50; last.looks < looks; next += 50 {
		waitLooks(ctx, t, w, next-last.looks)
		last = take()
		t.Logf("MEASURE memory after %.0f looks (%s): RSS %.1f MiB, heap in use %.1f MiB, %.0f open fds, %.0f goroutines",
			last.looks, time.Since(start).Round(time.Second), last.rss/(1<<20), last.heap/(1<<20), last.fds, last.gor)
	}
	_, mfs := w.scrape(t)
	failed, _ := value(mfs, "connect_init_doctor_look_failures_total", nil)
	reqs, _ := value(mfs, "connect_init_doctor_look_kafka_requests", nil)
	t.Logf("MEASURE %.0f looks in %s (%.0f failed), last look %.0f Kafka requests; from look %.0f to %.0f: RSS %.1f -> %.1f MiB, heap %.1f -> %.1f MiB, fds %.0f -> %.0f, goroutines %.0f -> %.0f",
		last.looks, time.Since(start).Round(time.Second), failed, reqs, first.looks, last.looks, first.rss/(1<<20), last.rss/(1<<20), first.heap/(1<<20), last.heap/(1<<20), first.fds, last.fds, first.gor, last.gor)
	if last.fds > first.fds+2 || last.gor > first.gor+4 || last.heap > 2*first.heap {
		t.Errorf("the watcher grows over looks: fds %.0f -> %.0f, goroutines %.0f -> %.0f, heap %.1f -> %.1f MiB", first.fds, last.fds, first.gor, last.gor, first.heap/(1<<20), last.heap/(1<<20))
	}
}

func errorsIsTopicExists(err error) bool {
	var te *sarama.TopicError
	return errors.As(err, &te) && te.Err == sarama.ErrTopicAlreadyExists
}

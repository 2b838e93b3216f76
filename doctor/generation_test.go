package doctor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/metrics"
)

// memLog is a partition of __consumer_offsets in memory: records at
// consecutive offsets from start; err, when set, fails every read as a
// broker refusing it would.
type memLog struct {
	start   int64
	records [][2][]byte
	err     error
	// reads counts the records handed over, to check a look reads only
	// what is new.
	reads int
}

func (l *memLog) end() int64 { return l.start + int64(len(l.records)) }

func (l *memLog) Bounds(context.Context) (int64, int64, error) {
	if l.err != nil {
		return 0, 0, l.err
	}
	return l.start, l.end(), nil
}

func (l *memLog) Read(_ context.Context, from, to int64, fn func(k, v []byte)) (int64, error) {
	if l.err != nil {
		return from, l.err
	}
	if to < 0 {
		to = l.end()
	}
	for off := max(from, l.start); off < to; off++ {
		r := l.records[off-l.start]
		l.reads++
		fn(r[0], r[1])
	}
	return to, nil
}

// gen appends a group metadata record of group at generation g; other
// groups' records and offset commits go between.
func (l *memLog) gen(group string, g int32) {
	l.records = append(l.records, [2][]byte{groupKey(group), groupValue(3, g, 2)})
}

func (l *memLog) noise(n int) {
	for i := range n {
		l.records = append(l.records, [2][]byte{(&enc{}).i16(1).str("other").str("t").i32(int32(i)).b, []byte{0, 3}})
		l.records = append(l.records, [2][]byte{groupKey(fmt.Sprintf("other-%d", i%3)), groupValue(3, int32(i), 1)})
	}
}

// The first read goes back from the end just far enough to find the
// group's last record, and counts nothing (its history is not the
// watcher's); the next reads count the generation's increments from where
// the last stopped, a deleted group's new generations from 0.
func TestGenerationTrackerCounts(t *testing.T) {
	ctx := context.Background()
	l := &memLog{start: 40}
	l.noise(200)
	l.gen("g", 3)
	l.noise(50)
	l.gen("g", 7)
	l.noise(300) // 600 records after the group's last: two spans back
	tr := NewGenerationTracker()
	gl := tr.Observe(ctx, l, "g", 11, 2)
	if gl.Source != SourceGeneration || gl.Generation != 7 || gl.Added != 0 || !gl.Changed {
		t.Fatalf("first look: %+v, want generation 7, nothing added", gl)
	}
	if l.reads >= len(l.records) {
		t.Errorf("the first look read %d records of %d: it should stop at the group's last record", l.reads, len(l.records))
	}

	l.reads = 0
	l.gen("g", 8)
	l.noise(3)
	l.gen("g", 10) // a generation whose record the coordinator never wrote (a join phase cut short) counts too
	gl = tr.Observe(ctx, l, "g", 11, 1)
	if gl.Generation != 10 || gl.Added != 3 || gl.Changed {
		t.Errorf("second look: %+v, want generation 10, 3 added", gl)
	}
	if l.reads != 8 {
		t.Errorf("the second look read %d records, want the 8 written since the first", l.reads)
	}

	l.records = append(l.records, [2][]byte{groupKey("g"), nil}) // deleted
	l.gen("g", 1)
	l.gen("g", 2)
	if gl = tr.Observe(ctx, l, "g", 11, 0); gl.Generation != 2 || gl.Added != 2 {
		t.Errorf("after a deletion: %+v, want generation 2, 2 added", gl)
	}
	l.gen("g", 1) // formed again, the tombstone compacted away
	if gl = tr.Observe(ctx, l, "g", 11, 0); gl.Generation != 1 || gl.Added != 1 {
		t.Errorf("a generation below the last: %+v, want 1 added", gl)
	}
	if gl = tr.Observe(ctx, l, "g", 11, 4); gl.Added != 0 {
		t.Errorf("nothing written: %+v, want 0 added whatever the window counted", gl)
	}
}

// A group the partition holds no record of is at generation 0: its first
// rebalance counts one.
func TestGenerationTrackerNewGroup(t *testing.T) {
	ctx := context.Background()
	l := &memLog{}
	l.noise(5)
	tr := NewGenerationTracker()
	if gl := tr.Observe(ctx, l, "g", 0, 0); gl.Source != SourceGeneration || gl.Generation != 0 {
		t.Fatalf("%+v", gl)
	}
	l.gen("g", 1)
	if gl := tr.Observe(ctx, l, "g", 0, 0); gl.Generation != 1 || gl.Added != 1 {
		t.Errorf("%+v, want generation 1, 1 added", gl)
	}
}

// Without the right to read __consumer_offsets the look counts its window
// and says why; when the right comes, the count catches up with the
// generation without counting the window's rebalances twice.
func TestGenerationTrackerFallsBackToTheWindow(t *testing.T) {
	ctx := context.Background()
	l := &memLog{err: fmt.Errorf("read __consumer_offsets/5 at offset 0: %w", sarama.ErrTopicAuthorizationFailed)}
	l.gen("g", 4)
	tr := NewGenerationTracker()
	saramaLog := explainedLog{l}
	gl := tr.Observe(ctx, saramaLog, "g", 5, 2)
	if gl.Source != SourceWindow || gl.Added != 2 || !gl.Changed || !strings.Contains(gl.Err, "grant it Read and Describe on the topic __consumer_offsets") {
		t.Fatalf("refused: %+v", gl)
	}
	l.err = nil
	if gl = tr.Observe(ctx, saramaLog, "g", 5, 1); gl.Source != SourceGeneration || gl.Added != 0 || !gl.Changed {
		t.Fatalf("first read: %+v", gl)
	}
	// Refused again while the group moves from 4 to 9: the windows count
	// 3 of the 5 rebalances, the read after them adds the other 2.
	l.err = sarama.ErrTopicAuthorizationFailed
	for _, w := range []int{1, 2} {
		if gl = tr.Observe(ctx, saramaLog, "g", 5, w); gl.Source != SourceWindow || gl.Added != w {
			t.Fatalf("refused: %+v", gl)
		}
	}
	l.gen("g", 9)
	l.err = nil
	if gl = tr.Observe(ctx, saramaLog, "g", 5, 0); gl.Generation != 9 || gl.Added != 2 {
		t.Errorf("back: %+v, want generation 9 and the 2 rebalances the windows missed", gl)
	}
}

// explainedLog is memLog behind explainRead, as saramaOffsetsLog is.
type explainedLog struct{ l *memLog }

func (e explainedLog) Bounds(ctx context.Context) (int64, int64, error) {
	s, end, err := e.l.Bounds(ctx)
	return s, end, explainRead(err)
}

func (e explainedLog) Read(ctx context.Context, from, to int64, fn func(k, v []byte)) (int64, error) {
	n, err := e.l.Read(ctx, from, to, fn)
	return n, explainRead(err)
}

// Across the watcher's looks (Watch on a stepping clock), the served
// counter is the generation's increments while the partition is readable
// and the window's count while it is not, and connect_init_group_generation
// and connect_init_group_rebalances_source say which.
func TestRebalanceCountAcrossLooks(t *testing.T) {
	l := &memLog{}
	l.gen("connect-cluster", 5)
	reg := metrics.NewRegistry()
	m := NewMetrics(reg, "connect-cluster")
	tr := NewGenerationTracker()
	clk := clock.NewStepping(time.Unix(1000, 0))
	// Each look: what the group did since the last, whether the
	// partition is readable, what the window counted.
	steps := []struct {
		gens    []int32
		refused bool
		window  int
		total   float64
		source  string
	}{
		{nil, false, 1, 0, SourceGeneration},           // the first read counts nothing
		{[]int32{6, 7}, false, 1, 2, SourceGeneration}, // exact: 2, not the window's 1
		{nil, true, 2, 4, SourceWindow},                // refused: the window's 2
		{[]int32{9}, false, 0, 4, SourceGeneration},    // 7 -> 9 is the 2 the window counted
		{[]int32{12}, false, 0, 7, SourceGeneration},
	}
	i := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	take := func(ctx context.Context) *Document {
		st := steps[i]
		for _, g := range st.gens {
			l.gen("connect-cluster", g)
		}
		l.err = nil
		if st.refused {
			l.err = sarama.ErrTopicAuthorizationFailed
		}
		s := healthy()
		s.Group.Window = &gate.GroupWindow{Samples: 3, Span: time.Second, Rebalances: st.window}
		s.Generation = tr.Observe(ctx, explainedLog{l}, s.GroupID, s.Coordinator.Partition, st.window)
		lk := look(s, nil, "")
		lk.Started = clk.Now()
		m.Observe(lk)
		if got := counterValue(t, reg, "connect_init_group_rebalances_total"); got != st.total {
			t.Errorf("look %d at %s: rebalances_total %v, want %v", i, clk.Now().UTC().Format("15:04:05"), got, st.total)
		}
		want := fmt.Sprintf(`
# HELP connect_init_group_rebalances_source Which count connect_init_group_rebalances_total served at the last look (1 for the current one): generation (exact, read from __consumer_offsets) or window (the look's window, a lower bound).
# TYPE connect_init_group_rebalances_source gauge
connect_init_group_rebalances_source{group_id="connect-cluster",source="generation"} %v
connect_init_group_rebalances_source{group_id="connect-cluster",source="window"} %v
`, one(st.source == SourceGeneration), one(st.source == SourceWindow))
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "connect_init_group_rebalances_source"); err != nil {
			t.Errorf("look %d: %v", i, err)
		}
		n, err := testutil.GatherAndCount(reg, "connect_init_group_generation")
		if wantN := int(one(st.source == SourceGeneration)); err != nil || n != wantN {
			t.Errorf("look %d: %d connect_init_group_generation series (%v), want %d", i, n, err, wantN)
		}
		i++
		if i == len(steps) {
			cancel()
		}
		return lk.Document
	}
	if err := Watch(ctx, 30*time.Second, clk, take, func(*Document, *Change) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if i != len(steps) {
		t.Fatalf("%d looks, want %d", i, len(steps))
	}
	if got := clk.Now().Sub(time.Unix(1000, 0)); got != 4*30*time.Second {
		t.Errorf("the looks spanned %s on the clock, want 4 intervals", got)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP connect_init_group_generation The worker group's generation, from its last group metadata record in __consumer_offsets (0: none); absent while the watcher cannot read that partition.
# TYPE connect_init_group_generation gauge
connect_init_group_generation{group_id="connect-cluster"} 12
`), "connect_init_group_generation"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %+v", err, problems)
	}
}

// counterValue is the value of the one series of counter name in reg.
func counterValue(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no one series of %s", name)
	return 0
}

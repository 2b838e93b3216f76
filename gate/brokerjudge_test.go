package gate

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/kafka"
)

// The brokers step's judgement of one look (judge, judgeBroker) and its
// naming of the brokers that are not live (absent), as tables: what the
// look saw in, the verdict out. Nothing here dials: the metadata, the
// registrations and the pings' replies are given.

// judgeSeen is what one look saw: the metadata's brokers (in the order
// the answer lists them) and controller, the registrations, and per
// advertised address the reply of its ping. An address without a reply
// never answers: a judge that waits for it hangs, which judgeOf reports.
type judgeSeen struct {
	expected    int
	controller  int32
	metadata    []BrokerStatus // ID and Addr only
	regs        []kafka.Registration
	fencedKnown bool
	regErr      error
	replies     map[string]bootReply
}

// judgeWant is the verdict: the report's fields judge fills.
type judgeWant struct {
	ready       bool
	brokers     []BrokerStatus
	shared      map[string][]int32
	views       []int32 // ids whose own metadata answer was kept
	fencedKnown bool
}

var (
	refused = bootReply{err: fmt.Errorf("dial tcp: %w", syscall.ECONNREFUSED)}
	pinged  = bootReply{} // an ApiVersions round trip answered
)

// answered is the reply of a bootstrap server whose metadata answer was
// its ping: that answer is its own view of the topics.
func answered() bootReply { return bootReply{md: &sarama.MetadataResponse{}} }

func up(id int32, addr string) BrokerStatus { return BrokerStatus{ID: id, Addr: addr, Up: true} }

func TestJudge(t *testing.T) {
	three := []BrokerStatus{{ID: 3, Addr: "k3:9092"}, {ID: 1, Addr: "k1:9092"}, {ID: 2, Addr: "k2:9092"}}
	regs := []kafka.Registration{{ID: 1, Addr: "k1:9092"}, {ID: 2, Addr: "k2:9092"}, {ID: 3, Addr: "k3:9092"}}
	fenced3 := []kafka.Registration{{ID: 1, Addr: "k1:9092"}, {ID: 2, Addr: "k2:9092"}, {ID: 3, Addr: "k3:9092", Fenced: true}}
	allUp := []BrokerStatus{up(1, "k1:9092"), up(2, "k2:9092"), up(3, "k3:9092")}
	for _, c := range []struct {
		name string
		seen judgeSeen
		want judgeWant
	}{
		{"all registered and reachable: ready, sorted by id, the bootstrap server's answer kept as its view",
			judgeSeen{expected: 3, controller: 1, metadata: three, regs: regs, fencedKnown: true,
				replies: map[string]bootReply{"k1:9092": answered(), "k2:9092": pinged, "k3:9092": pinged}},
			judgeWant{ready: true, brokers: allUp, views: []int32{1}, fencedKnown: true}},
		{"registrations not asked (ReadyOnMetadata): the metadata is the live set",
			judgeSeen{expected: 3, controller: 1, metadata: three,
				replies: map[string]bootReply{"k1:9092": answered(), "k2:9092": answered(), "k3:9092": pinged}},
			judgeWant{ready: true, brokers: allUp, views: []int32{1, 2}}},
		{"more live brokers than expected: ready",
			judgeSeen{expected: 2, controller: 1, metadata: three, regs: regs,
				replies: map[string]bootReply{"k1:9092": pinged, "k2:9092": pinged, "k3:9092": pinged}},
			judgeWant{ready: true, brokers: allUp}},
		{"one missing: fewer live than expected, the others up",
			judgeSeen{expected: 3, controller: 1, metadata: three[1:], regs: regs[:2], fencedKnown: true,
				replies: map[string]bootReply{"k1:9092": pinged, "k2:9092": pinged}},
			judgeWant{brokers: allUp[:2], fencedKnown: true}},
		{"a broker registered but unreachable at its advertised address",
			judgeSeen{expected: 3, controller: 1, metadata: three, regs: regs,
				replies: map[string]bootReply{"k1:9092": answered(), "k2:9092": pinged, "k3:9092": refused}},
			judgeWant{brokers: []BrokerStatus{up(1, "k1:9092"), up(2, "k2:9092"), {ID: 3, Addr: "k3:9092", Err: "connection refused"}},
				views: []int32{1}}},
		{"a fenced broker is not live and its ping is not waited for",
			judgeSeen{expected: 3, controller: 1, metadata: three, regs: fenced3, fencedKnown: true,
				replies: map[string]bootReply{"k1:9092": pinged, "k2:9092": pinged}},
			judgeWant{brokers: allUp[:2], fencedKnown: true}},
		{"a fenced broker beside enough live ones: ready",
			judgeSeen{expected: 2, controller: 1, metadata: three, regs: fenced3, fencedKnown: true,
				replies: map[string]bootReply{"k1:9092": pinged, "k2:9092": pinged}},
			judgeWant{ready: true, brokers: allUp[:2], fencedKnown: true}},
		{"registrations unreadable (a broker without DescribeCluster): the metadata is all that is known",
			judgeSeen{expected: 3, controller: 1, metadata: three, regs: fenced3, regErr: fmt.Errorf("UNSUPPORTED_VERSION"),
				replies: map[string]bootReply{"k1:9092": pinged, "k2:9092": pinged, "k3:9092": pinged}},
			judgeWant{ready: true, brokers: allUp}},
		{"no controller known yet: not ready however many are up",
			judgeSeen{expected: 3, controller: -1, metadata: three, regs: regs,
				replies: map[string]bootReply{"k1:9092": pinged, "k2:9092": pinged, "k3:9092": pinged}},
			judgeWant{brokers: allUp}},
		{"two brokers advertise one address: both named, no view kept, one ping serves both (issue 48)",
			judgeSeen{expected: 3, controller: 1,
				metadata: []BrokerStatus{{ID: 2, Addr: "k1:9092"}, {ID: 1, Addr: "k1:9092"}, {ID: 3, Addr: "k3:9092"}},
				replies:  map[string]bootReply{"k1:9092": answered(), "k3:9092": pinged}},
			judgeWant{brokers: []BrokerStatus{
				{ID: 1, Addr: "k1:9092", Err: "brokers 1, 2 all advertise k1:9092, so clients reach only one of them"},
				{ID: 2, Addr: "k1:9092", Err: "brokers 1, 2 all advertise k1:9092, so clients reach only one of them"},
				up(3, "k3:9092")},
				shared: map[string][]int32{"k1:9092": {1, 2}}}},
		{"no broker in the metadata",
			judgeSeen{expected: 1, controller: -1},
			judgeWant{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &BrokerGate{Expected: c.seen.expected, Config: sarama.NewConfig()}
			rep := &BrokerReport{Expected: c.seen.expected, ControllerID: c.seen.controller}
			statuses, views := judgeOf(t, g, rep, c.seen, pingsOf(c.seen))
			checkJudged(t, rep, statuses, views, c.want)
		})
	}
}

// Probe judges twice when the first verdict is not ready without the
// registrations (ReadyOnMetadata): the second judge reads the same pings,
// each address's reply once, and holds nothing of the first's verdict (a
// broker fenced since is neither a status nor a view).
func TestJudgeAgainWithTheRegistrations(t *testing.T) {
	seen := judgeSeen{expected: 3, controller: 1,
		metadata: []BrokerStatus{{ID: 1, Addr: "k1:9092"}, {ID: 2, Addr: "k2:9092"}, {ID: 3, Addr: "k3:9092"}},
		replies:  map[string]bootReply{"k1:9092": answered(), "k2:9092": answered(), "k3:9092": refused}}
	g := &BrokerGate{Expected: 3, Config: sarama.NewConfig()}
	rep := &BrokerReport{Expected: 3, ControllerID: 1}
	pings := pingsOf(seen)
	first, views := judgeOf(t, g, rep, seen, pings)
	checkJudged(t, rep, first, views, judgeWant{
		brokers: []BrokerStatus{up(1, "k1:9092"), up(2, "k2:9092"), {ID: 3, Addr: "k3:9092", Err: "connection refused"}},
		views:   []int32{1, 2}})

	seen.regs = []kafka.Registration{{ID: 1, Addr: "k1:9092", Fenced: true}, {ID: 2, Addr: "k2:9092"}, {ID: 3, Addr: "k3:9092"}}
	seen.fencedKnown = true
	again, views := judgeOf(t, g, rep, seen, pings)
	checkJudged(t, rep, again, views, judgeWant{
		brokers:     []BrokerStatus{up(2, "k2:9092"), {ID: 3, Addr: "k3:9092", Err: "connection refused"}},
		views:       []int32{2},
		fencedKnown: true})
}

// pingsOf is a pingSet as pingAll leaves it: one pending reply per
// advertised address of the metadata, sent once.
func pingsOf(s judgeSeen) *pingSet {
	p := &pingSet{pending: map[string]chan bootReply{}, replies: map[string]bootReply{}}
	for _, b := range s.metadata {
		if _, ok := p.pending[b.Addr]; ok {
			continue
		}
		ch := make(chan bootReply, 1)
		if r, ok := s.replies[b.Addr]; ok {
			ch <- r
		}
		p.pending[b.Addr] = ch
	}
	return p
}

// judgeOf runs g.judge on what s saw; it fails the test when the judge
// waits for a ping that never answers (the hang of issue 48) instead of
// hanging with it.
func judgeOf(t *testing.T, g *BrokerGate, rep *BrokerReport, s judgeSeen, pings *pingSet) ([]BrokerStatus, map[int32]*sarama.MetadataResponse) {
	t.Helper()
	md := &sarama.MetadataResponse{ControllerID: s.controller}
	for _, b := range s.metadata {
		md.AddBroker(b.Addr, b.ID)
	}
	cv := clusterView{regs: s.regs, fencedKnown: s.fencedKnown, regErr: s.regErr, regsAsked: s.regs != nil}
	type judged struct {
		statuses []BrokerStatus
		views    map[int32]*sarama.MetadataResponse
	}
	done := make(chan judged, 1)
	go func() {
		statuses, views := g.judge(rep, md, cv, pings)
		done <- judged{statuses, views}
	}()
	select {
	case j := <-done:
		return j.statuses, j.views
	case <-time.After(10 * time.Second):
		t.Fatal("judge waits for a ping that is never answered")
		return nil, nil
	}
}

func checkJudged(t *testing.T, rep *BrokerReport, statuses []BrokerStatus, views map[int32]*sarama.MetadataResponse, want judgeWant) {
	t.Helper()
	if rep.Ready != want.ready {
		t.Errorf("Ready = %v, want %v (%s)", rep.Ready, want.ready, rep.Summary())
	}
	if !slices.Equal(rep.Brokers, want.brokers) {
		t.Errorf("Brokers = %+v\nwant      %+v", rep.Brokers, want.brokers)
	}
	if !slices.Equal(statuses, rep.Brokers) {
		t.Errorf("judge returned %+v, the report holds %+v", statuses, rep.Brokers)
	}
	if !reflect.DeepEqual(rep.SharedAddrs, want.shared) {
		t.Errorf("SharedAddrs = %v, want %v", rep.SharedAddrs, want.shared)
	}
	if ids := slices.Sorted(maps.Keys(views)); !slices.Equal(ids, want.views) {
		t.Errorf("views of brokers %v, want %v", ids, want.views)
	}
	if rep.FencedKnown != want.fencedKnown {
		t.Errorf("FencedKnown = %v, want %v", rep.FencedKnown, want.fencedKnown)
	}
}

// The words for a broker that is not live, by what the cluster can tell:
// fenced (KRaft, Kafka 4.0+ says so), registered but left out of the
// metadata, gone from the registrations (in KRaft with or without
// fencing known, in ZooKeeper), and, with no id known, a bootstrap
// address when too few are live.
func TestAbsentWordsByMode(t *testing.T) {
	live := []BrokerStatus{up(1, "k1:9092"), up(2, "k2:9092")}
	two := []kafka.Registration{{ID: 1, Addr: "k1:9092"}, {ID: 2, Addr: "k2:9092"}}
	boot := []string{"k1:9092", "k2:9092", "k3:9092"}
	for _, c := range []struct {
		name        string
		mode        kafka.Mode
		expected    int
		seenBefore  bool // broker 3 was live at an earlier look
		live        []BrokerStatus
		regs        []kafka.Registration
		fencedKnown bool
		want        []AbsentBroker
	}{
		{name: "KRaft, fenced", mode: kafka.ModeKRaft, expected: 3, live: live, fencedKnown: true,
			regs: append(slices.Clone(two), kafka.Registration{ID: 3, Addr: "k3:9092", Fenced: true}),
			want: []AbsentBroker{{ID: 3, Addr: "k3:9092", State: StateFenced}}},
		{name: "registered but not in the metadata", mode: kafka.ModeKRaft, expected: 3, live: live,
			regs: append(slices.Clone(two), kafka.Registration{ID: 3, Addr: "k3:9092"}),
			want: []AbsentBroker{{ID: 3, Addr: "k3:9092", State: StateNotInMetadata}}},
		{name: "KRaft 4.0+, seen before and unregistered since", mode: kafka.ModeKRaft, expected: 3, seenBefore: true, live: live, regs: two, fencedKnown: true,
			want: []AbsentBroker{{ID: 3, Addr: "k3:9092", State: StateGone}}},
		{name: "KRaft before 4.0, seen before, fenced or unregistered", mode: kafka.ModeKRaft, expected: 3, seenBefore: true, live: live, regs: two,
			want: []AbsentBroker{{ID: 3, Addr: "k3:9092", State: StateNotLive}}},
		{name: "mode unknown, seen before", mode: kafka.ModeUnknown, expected: 3, seenBefore: true, live: live, regs: two,
			want: []AbsentBroker{{ID: 3, Addr: "k3:9092", State: StateNotLive}}},
		{name: "ZooKeeper, seen before and its registration ended", mode: kafka.ModeZooKeeper, expected: 3, seenBefore: true, live: live, regs: two,
			want: []AbsentBroker{{ID: 3, Addr: "k3:9092", State: StateZooKeeperGone}}},
		{name: "no id known, too few live: the bootstrap address no live broker advertises", mode: kafka.ModeKRaft, expected: 3, live: live, regs: two,
			want: []AbsentBroker{{ID: -1, Addr: "k3:9092", State: StateBootstrapOnly}}},
		{name: "enough live: a spare bootstrap address is not named", mode: kafka.ModeKRaft, expected: 2, live: live, regs: two},
		{name: "no metadata answer: nothing named from memory", mode: kafka.ModeKRaft, expected: 3, seenBefore: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &BrokerGate{Expected: c.expected, Bootstrap: boot, mode: c.mode}
			if c.seenBefore {
				g.absent(append(slices.Clone(live), up(3, "k3:9092")), nil, false)
			}
			if got := g.absent(c.live, c.regs, c.fencedKnown); !slices.Equal(got, c.want) {
				t.Errorf("absent = %+v\nwant     %+v", got, c.want)
			}
		})
	}
}

// judgeLook is pure: the same look gives the same verdict, with no ping
// waited for and no gate read.
func TestJudgeLookIsPure(t *testing.T) {
	explain := func(err error) string { return "explained: " + err.Error() }
	view := &sarama.MetadataResponse{ControllerID: 1}
	live := []BrokerStatus{{ID: 2, Addr: "b:9092"}, {ID: 1, Addr: "a:9092"}}
	for _, c := range []struct {
		name       string
		live       []BrokerStatus
		replies    map[string]bootReply
		expected   int
		controller int32
		ready      bool
		errs       map[int32]string
		views      int
	}{
		{"every broker answered", live, map[string]bootReply{"a:9092": {md: view}, "b:9092": {}}, 2, 1, true, nil, 1},
		{"no controller", live, map[string]bootReply{"a:9092": {}, "b:9092": {}}, 2, -1, false, nil, 0},
		{"fewer than expected", live, map[string]bootReply{"a:9092": {}, "b:9092": {}}, 3, 1, false, nil, 0},
		{"a ping refused", live, map[string]bootReply{"a:9092": {}, "b:9092": {err: errors.New("connection refused")}}, 2, 1, false,
			map[int32]string{2: "explained: connection refused"}, 0},
		{"a ping with no reply", live, map[string]bootReply{"a:9092": {}}, 2, 1, false, map[int32]string{2: "its ping has no reply"}, 0},
		{"one address for two brokers", []BrokerStatus{{ID: 1, Addr: "a:9092"}, {ID: 2, Addr: "a:9092"}}, map[string]bootReply{"a:9092": {md: view}}, 2, 1, false,
			map[int32]string{1: "brokers 1, 2 all advertise a:9092", 2: "brokers 1, 2 all advertise a:9092"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := judgeLook(c.live, c.replies, c.expected, c.controller, explain)
			if v.ready != c.ready || len(v.views) != c.views {
				t.Errorf("ready %v with %d views, want %v with %d", v.ready, len(v.views), c.ready, c.views)
			}
			for i, st := range v.statuses {
				if i > 0 && v.statuses[i-1].ID > st.ID {
					t.Errorf("statuses not sorted by id: %+v", v.statuses)
				}
				want := c.errs[st.ID]
				if (want == "") != st.Up || !strings.HasPrefix(st.Err, want) {
					t.Errorf("broker %d: up %v, error %q; want error %q", st.ID, st.Up, st.Err, want)
				}
			}
			if again := judgeLook(c.live, c.replies, c.expected, c.controller, explain); again.ready != v.ready || len(again.statuses) != len(v.statuses) {
				t.Errorf("a second judgement of the same look differs: %+v then %+v", v, again)
			}
			if c.live[0].Up || c.live[0].Err != "" {
				t.Errorf("judgeLook wrote into its input: %+v", c.live)
			}
		})
	}
}

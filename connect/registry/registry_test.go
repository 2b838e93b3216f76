package registry

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/connect-init/connect-init/internal/clock"
)

// store returns a Store on a fresh in-process Kafka (kfake): fast tests of
// the claim rules; the real-Kafka tests are in cmd/connect-init.
func store(t *testing.T) *Store {
	t.Helper()
	s, _ := storeOn(t)
	return s
}

// storeOn is store, with its cluster for tests that answer for it.
func storeOn(t *testing.T) (*Store, *kfake.Cluster) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.Metadata.AllowAutoTopicCreation = false
	client, err := sarama.NewClient(c.ListenAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	return &Store{Client: client, Admin: admin, Brokers: c.ListenAddrs(), Sarama: cfg, Topic: DefaultTopic, ReplicationFactor: 1}, c
}

func cluster(config string) Cluster {
	return Cluster{KafkaClusterID: "kc", GroupID: "g", ConfigTopic: config, OffsetTopic: config + "-o", StatusTopic: config + "-s"}
}

func TestFirstClaimOwnsTheGroup(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	v, err := s.Read(ctx, "kc", "g")
	if err != nil || v.Exists || v.Owner() != nil {
		t.Fatalf("before any write: %+v, %v", v, err)
	}
	a, b := cluster("a-configs"), cluster("b-configs")
	reg, err := s.Register(ctx, a, "http://a1:8083/", "a1", "", true)
	if err != nil || !reg.Claimed || reg.View.Owner() == nil || reg.View.Owner().ConfigTopic != "a-configs" {
		t.Fatalf("first register: %+v, %v", reg, err)
	}
	// A second worker of A registers its URL; the claim stays the first.
	reg, err = s.Register(ctx, a, "http://a2:8083/", "a2", "", true)
	if err != nil || reg.Claimed || len(reg.View.Workers) != 2 {
		t.Fatalf("second worker: %+v, %v", reg, err)
	}
	// B is refused and writes nothing.
	_, err = s.Register(ctx, b, "http://b1:8083/", "b1", "", true)
	var ce *ClaimedError
	if !errors.As(err, &ce) || ce.Owner.ConfigTopic != "a-configs" || ce.Owner.URL != "http://a1:8083/" {
		t.Fatalf("B: %v", err)
	}
	v, _ = s.Read(ctx, "kc", "g")
	if len(v.Claims) != 1 || v.WorkerByURL("http://b1:8083/") != nil {
		t.Fatalf("B wrote something: %+v", v)
	}
	// Another Kafka cluster id or group sees nothing.
	if v, _ := s.Read(ctx, "other", "g"); v.Owner() != nil || v.OtherKafkaClusters == 0 {
		t.Errorf("other Kafka cluster: %+v", v)
	}
	if v, _ := s.Read(ctx, "kc", "h"); v.Owner() != nil || len(v.Workers) != 0 {
		t.Errorf("other group: %+v", v)
	}
}

func TestLostRaceTakesItsClaimBack(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	a, b := cluster("a-configs"), cluster("b-configs")
	// Both read an unclaimed group and write at once: simulate by writing
	// A's claim between B's read and B's write.
	if err := s.ensureTopic(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.send(s.claimMessages(a, "http://a1:8083/", "a1")); err != nil {
		t.Fatal(err)
	}
	if err := s.send(s.claimMessages(b, "http://b1:8083/", "b1")); err != nil {
		t.Fatal(err)
	}
	v, _ := s.Read(ctx, "kc", "g")
	if v.Owner().ConfigTopic != "a-configs" || len(v.Claims) != 2 {
		t.Fatalf("after the race: %+v", v)
	}
	// B's next registration sees A own the group.
	_, err := s.Register(ctx, b, "http://b1:8083/", "b1", "", true)
	var ce *ClaimedError
	if !errors.As(err, &ce) || ce.Owner.ConfigTopic != "a-configs" {
		t.Fatalf("B after the race: %v", err)
	}
}

func TestHandover(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	a, b := cluster("a-configs"), cluster("b-configs")
	if _, err := s.Register(ctx, a, "http://a1:8083/", "a1", "", true); err != nil {
		t.Fatal(err)
	}
	// A handover naming someone else is refused.
	if _, err := s.Register(ctx, b, "http://b1:8083/", "b1", "c-configs", true); err == nil {
		t.Fatal("a handover naming another owner was accepted")
	}
	reg, err := s.Register(ctx, b, "http://b1:8083/", "b1", "a-configs", true)
	if err != nil || reg.HandedOver != "a-configs" {
		t.Fatalf("handover: %+v, %v", reg, err)
	}
	o := reg.View.Owner()
	if o.ConfigTopic != "b-configs" || o.HandedOverFrom != "a-configs" || reg.View.WorkerByURL("http://a1:8083/") != nil {
		t.Fatalf("after the handover: %+v", reg.View)
	}
	// A is now the foreign one.
	if _, err := s.Register(ctx, a, "http://a1:8083/", "a1", "", true); err == nil {
		t.Fatal("the old owner registered after the handover")
	}
	// Setting left in place: a no-op for the owner.
	if reg, err = s.Register(ctx, b, "http://b2:8083/", "b2", "a-configs", true); err != nil || reg.HandedOver != "" {
		t.Fatalf("handover left set: %+v, %v", reg, err)
	}
}

func TestNoClaimWhenAsked(t *testing.T) {
	s := store(t)
	reg, err := s.Register(context.Background(), cluster("a-configs"), "http://a1:8083/", "a1", "", false)
	if err != nil || reg.Claimed || reg.View.Owner() != nil || reg.View.WorkerByURL("http://a1:8083/") == nil {
		t.Fatalf("%+v, %v", reg, err)
	}
}

// RegisterOver judges the write on the caller's view, read before; a claim
// that landed since is still caught by the read-back: the stale writer
// loses the race and takes its records back.
func TestRegisterOverStaleViewLosesTheRace(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	a, b := cluster("a-configs"), cluster("b-configs")
	if err := s.ensureTopic(ctx); err != nil {
		t.Fatal(err)
	}
	stale, err := s.Read(ctx, "kc", "g")
	if err != nil || !stale.Exists || stale.Owner() != nil {
		t.Fatalf("B's read: %+v, %v", stale, err)
	}
	if _, err := s.Register(ctx, a, "http://a1:8083/", "a1", "", true); err != nil {
		t.Fatal(err)
	}
	_, err = s.RegisterOver(ctx, stale, b, "http://b1:8083/", "b1", "", true)
	var ce *ClaimedError
	if !errors.As(err, &ce) || !ce.LostRace || ce.Owner.ConfigTopic != "a-configs" {
		t.Fatalf("B on a stale view: %v", err)
	}
	v, _ := s.Read(ctx, "kc", "g")
	if v.WorkerByURL("http://b1:8083/") != nil || len(v.Claims) != 1 {
		t.Fatalf("B's records stayed: %+v", v)
	}
	// On a fresh view, A's worker starting again within RewriteAfter of
	// its record writes nothing (issue 39): the view is the registry.
	before := v.WorkerByURL("http://a1:8083/")
	s.Clock = clock.NewStepping(before.LastSeen.Add(RewriteAfter - time.Minute))
	reg, err := s.RegisterOver(ctx, v, a, "http://a1:8083/", "a2", "", true)
	if err != nil || reg.Claimed || !reg.Unchanged || !reg.Written.Equal(before.LastSeen) {
		t.Fatalf("A again within the hour: %+v, %v", reg, err)
	}
	if again, _ := s.Read(ctx, "kc", "g"); again.WorkerByURL("http://a1:8083/").Offset != before.Offset {
		t.Fatalf("A's unchanged record was written again: %+v, before %+v", again.WorkerByURL("http://a1:8083/"), before)
	}
	// Past RewriteAfter the record is written again, without a claim, and
	// keeps its first registration time.
	s.Clock = clock.NewStepping(before.LastSeen.Add(RewriteAfter))
	reg, err = s.RegisterOver(ctx, v, a, "http://a1:8083/", "a2", "", true)
	if err != nil || reg.Claimed || reg.Unchanged || len(reg.View.Workers) != 1 {
		t.Fatalf("A again: %+v, %v", reg, err)
	}
	if w := reg.View.WorkerByURL("http://a1:8083/"); w == nil || !w.FirstSeen.Equal(before.FirstSeen) || w.Offset <= before.Offset || w.Host != "a2" {
		t.Errorf("A's record: %+v, before %+v", w, before)
	}
}

// A record that says something else than this worker's cluster (another
// offset or status topic here) is written again at once, whatever its
// age: only an unchanged registration is kept.
func TestRegisterRewritesAChangedRecordAtOnce(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	a := cluster("a-configs")
	if _, err := s.Register(ctx, a, "http://a1:8083/", "a1", "", true); err != nil {
		t.Fatal(err)
	}
	v, _ := s.Read(ctx, "kc", "g")
	moved := a
	moved.StatusTopic = "a-status-2"
	reg, err := s.RegisterOver(ctx, v, moved, "http://a1:8083/", "a1", "", true)
	if err != nil || reg.Unchanged {
		t.Fatalf("a changed status topic: %+v, %v", reg, err)
	}
	if w := reg.View.WorkerByURL("http://a1:8083/"); w == nil || w.StatusTopic != "a-status-2" {
		t.Errorf("the record was not rewritten: %+v", w)
	}
}

// notLeaderOnce makes the leader of the registry's partition answer the
// first fetch of it with code (a leader that does not know yet that it
// leads a topic created a moment ago, or lags its create), and counts
// the fetches of it.
func notLeaderOnce(c *kfake.Cluster, code int16) *atomic.Int32 {
	var fetches atomic.Int32
	failed := false
	c.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		req := kreq.(*kmsg.FetchRequest)
		if len(req.Topics) != 1 || req.Topics[0].Topic != DefaultTopic {
			return nil, nil, false
		}
		fetches.Add(1)
		if failed {
			return nil, nil, false
		}
		failed = true
		c.KeepControl()
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = DefaultTopic
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.ErrorCode, rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = code, -1, -1, -1
		rp.RecordBatches = []byte{} // sarama cannot decode a null one
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
	return &fetches
}

// A registration whose read of a topic created a moment ago is answered
// "not yet" reads again and registers. On a real new cluster (eight
// workers at once, issue 39's bench) two workers' reads were answered
// NOT_LEADER_OR_FOLLOWER and they gave up: unverified members for good,
// so the group never looked open and the others joined one at a time.
func TestRegisterReadsAgainAtANotYetAnswer(t *testing.T) {
	for _, tc := range []struct {
		name string
		code sarama.KError
	}{
		{"not leader", sarama.ErrNotLeaderForPartition},
		{"leader lags the create", sarama.ErrUnknownTopicOrPartition},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := storeOn(t)
			clk := clock.NewStepping(time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC))
			s.Clock = clk
			fetches := notLeaderOnce(c, int16(tc.code))
			a := cluster("a-configs")
			reg, err := s.Register(context.Background(), a, "http://a1:8083/", "a1", "", true)
			if err != nil || !reg.Claimed || reg.View.WorkerByURL("http://a1:8083/") == nil {
				t.Fatalf("register: %+v, %v", reg, err)
			}
			if n := fetches.Load(); n < 3 {
				t.Errorf("%d fetches of the registry: want the refused one, its look again and the read-back", n)
			}
			if clk.Waited() < notYetPause {
				t.Errorf("waited %v before reading again, want %v", clk.Waited(), notYetPause)
			}
		})
	}
}

// countRequests counts the requests of key the cluster answers from now
// on, leaving the answers to it.
func countRequests(c *kfake.Cluster, key kmsg.Key) *atomic.Int32 {
	var n atomic.Int32
	c.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		n.Add(1)
		return nil, nil, false
	})
	return &n
}

// A registration kept unchanged writes nothing and so reads nothing back;
// a handover to another cluster between the caller's read and now must
// still be refused there (issue 48: it returned Unchanged from the stale
// view, and with CONNECT_INIT_LOCK=false nothing else caught it).
func TestUnchangedRegistrationSeesAHandoverSinceTheRead(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	a, b := cluster("a-configs"), cluster("b-configs")
	if _, err := s.Register(ctx, a, "http://a1:8083/", "a1", "", true); err != nil {
		t.Fatal(err)
	}
	stale, err := s.Read(ctx, "kc", "g")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register(ctx, b, "http://b1:8083/", "b1", "a-configs", true); err != nil {
		t.Fatalf("B's handover: %v", err)
	}
	s.Clock = clock.NewStepping(stale.WorkerByURL("http://a1:8083/").LastSeen.Add(time.Minute))
	reg, err := s.RegisterOver(ctx, stale, a, "http://a1:8083/", "a1", "", true)
	var ce *ClaimedError
	if !errors.As(err, &ce) || ce.Owner.ConfigTopic != "b-configs" {
		t.Fatalf("A on the view before the handover: %+v, %v; want the group claimed by b-configs", reg, err)
	}
	if v, _ := s.Read(ctx, "kc", "g"); v.WorkerByURL("http://a1:8083/") != nil || v.Owner().ConfigTopic != "b-configs" {
		t.Errorf("A wrote after the handover: %+v", v)
	}
}

// The check of an unchanged registration costs one ListOffsets and no
// read of the registry while nothing was written since the caller's read
// (a restart with unchanged settings, issue 39's budget); a write of
// another worker since (same cluster) costs one read and stays unchanged.
func TestUnchangedRegistrationCostsOneListOffsets(t *testing.T) {
	s, c := storeOn(t)
	ctx := context.Background()
	a := cluster("a-configs")
	if _, err := s.Register(ctx, a, "http://a1:8083/", "a1", "", true); err != nil {
		t.Fatal(err)
	}
	v, err := s.Read(ctx, "kc", "g")
	if err != nil {
		t.Fatal(err)
	}
	s.Clock = clock.NewStepping(v.WorkerByURL("http://a1:8083/").LastSeen.Add(time.Minute))
	fetches, lists, produces := countRequests(c, kmsg.Fetch), countRequests(c, kmsg.ListOffsets), countRequests(c, kmsg.Produce)
	reg, err := s.RegisterOver(ctx, v, a, "http://a1:8083/", "a1", "", true)
	if err != nil || !reg.Unchanged {
		t.Fatalf("unchanged: %+v, %v", reg, err)
	}
	if f, l, p := fetches.Load(), lists.Load(), produces.Load(); f != 0 || l != 1 || p != 0 {
		t.Errorf("an unchanged registration on a current view: %d fetches, %d ListOffsets, %d produces; want 0, 1, 0", f, l, p)
	}
	if _, err := s.Register(ctx, a, "http://a2:8083/", "a2", "", true); err != nil {
		t.Fatal(err)
	}
	fetches.Store(0)
	reg, err = s.RegisterOver(ctx, v, a, "http://a1:8083/", "a1", "", true)
	if err != nil || !reg.Unchanged || reg.View.WorkerByURL("http://a2:8083/") == nil {
		t.Fatalf("unchanged after a peer's registration: %+v, %v", reg, err)
	}
	if f := fetches.Load(); f == 0 {
		t.Error("the registry moved since the view and was not read again")
	}
}

// A worker record carries the settings fingerprint; a start with other
// settings writes it again at once, one with the same settings keeps it
// (a restart with unchanged settings writes nothing).
func TestRegistrationCarriesTheSettings(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	a := cluster("a-configs")
	s.Settings = map[string]string{"value.converter": "J"}
	if _, err := s.Register(ctx, a, "http://a1:8083/", "a1", "", true); err != nil {
		t.Fatal(err)
	}
	v, _ := s.Read(ctx, "kc", "g")
	if w := v.WorkerByURL("http://a1:8083/"); w == nil || w.Settings["value.converter"] != "J" {
		t.Fatalf("the record's settings: %+v", w)
	}
	reg, err := s.RegisterOver(ctx, v, a, "http://a1:8083/", "a1", "", true)
	if err != nil || !reg.Unchanged {
		t.Fatalf("same settings: %+v, %v", reg, err)
	}
	s.Settings = map[string]string{"value.converter": "A"}
	reg, err = s.RegisterOver(ctx, v, a, "http://a1:8083/", "a1", "", true)
	if err != nil || reg.Unchanged || reg.View.WorkerByURL("http://a1:8083/").Settings["value.converter"] != "A" {
		t.Fatalf("other settings: %+v, %v", reg, err)
	}
	// A record without settings (connect-init before them) reads as nil.
	s.Settings = nil
	if _, err := s.Register(ctx, a, "http://a2:8083/", "a2", "", true); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Read(ctx, "kc", "g"); v.WorkerByURL("http://a2:8083/").Settings != nil {
		t.Errorf("a record without settings: %+v", v.WorkerByURL("http://a2:8083/"))
	}
}

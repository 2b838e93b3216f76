package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/clock"
	"github.com/connect-init/connect-init/kafka/kafkalog"
	"github.com/connect-init/connect-init/kafka/notyet"
)

// DefaultTopic is the registry topic's default name.
const DefaultTopic = "_connect-init-registry"

// Cluster identifies a Connect cluster: its worker group within a Kafka
// cluster and the three internal topics it reads.
type Cluster struct {
	KafkaClusterID string `json:"kafka_cluster_id"`
	GroupID        string `json:"group_id"`
	ConfigTopic    string `json:"config_topic"`
	OffsetTopic    string `json:"offset_topic"`
	StatusTopic    string `json:"status_topic"`
}

// Same reports whether o is the same Connect cluster: same Kafka cluster,
// group and config topic (the offset and status topics are recorded but a
// difference there is a misconfiguration of one cluster, not another
// cluster).
func (c Cluster) Same(o Cluster) bool {
	return c.KafkaClusterID == o.KafkaClusterID && c.GroupID == o.GroupID && c.ConfigTopic == o.ConfigTopic
}

// Claim is one cluster's claim on a group.
type Claim struct {
	Cluster
	// Offset is the claim's offset in the registry topic: the lowest owns.
	Offset int64 `json:"offset"`
	// FirstSeen is when the claim was written (broker time).
	FirstSeen time.Time `json:"first_seen"`
	// URL and Host name the worker whose connect-init wrote the claim.
	URL  string `json:"url"`
	Host string `json:"host"`
	// HandedOverFrom is the previous owner's config topic when the claim
	// was made through CONNECT_INIT_GROUP_HANDOVER.
	HandedOverFrom string `json:"handed_over_from,omitempty"`
}

// Worker is the latest registration of one advertised URL in a group.
type Worker struct {
	Cluster
	URL  string `json:"url"`
	Host string `json:"host"`
	// FirstSeen is the first registration of this URL for this cluster,
	// LastSeen the latest (broker time).
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	Offset    int64     `json:"offset"`
	// Settings is the worker's settings fingerprint (package
	// connect/parity: setting to effective value, no secret among them);
	// nil when its connect-init predates the fingerprint.
	Settings map[string]string `json:"settings,omitempty"`
}

// View is what the registry says about one group.
type View struct {
	Topic string `json:"topic"`
	// Exists is false when the registry topic does not exist yet.
	Exists bool `json:"exists"`
	// Claims are the group's claims, lowest offset (the owner) first.
	Claims []Claim `json:"claims"`
	// Workers are the group's worker records, by URL.
	Workers []Worker `json:"workers"`
	// OtherKafkaClusters counts records of this group written under another
	// Kafka cluster id (ignored).
	OtherKafkaClusters int `json:"other_kafka_clusters,omitempty"`
	// End is the registry partition's high watermark the view was read up
	// to: the view is still the registry's state while the partition ends
	// there (registerOver's check of an unchanged registration).
	End int64 `json:"end_offset"`
}

// Owner returns the owning claim, nil when the group is unclaimed.
func (v *View) Owner() *Claim {
	if v == nil || len(v.Claims) == 0 {
		return nil
	}
	return &v.Claims[0]
}

// WorkerByURL returns the latest registration of url, nil if none.
func (v *View) WorkerByURL(url string) *Worker {
	if v == nil {
		return nil
	}
	for i := range v.Workers {
		if v.Workers[i].URL == url {
			return &v.Workers[i]
		}
	}
	return nil
}

type value struct {
	V int `json:"v"`
	Cluster
	URL            string `json:"url,omitempty"`
	Host           string `json:"host,omitempty"`
	HandedOverFrom string `json:"handed_over_from,omitempty"`
	FirstSeenMs    int64  `json:"first_seen_ms,omitempty"`
	// Settings is a worker record's settings fingerprint (Store.Settings).
	Settings map[string]string `json:"settings,omitempty"`
}

const (
	kindClaim  = "claim"
	kindWorker = "worker"
)

func claimKey(c Cluster) []byte {
	b, _ := json.Marshal([]string{kindClaim, c.KafkaClusterID, c.GroupID, c.ConfigTopic})
	return b
}

func workerKey(c Cluster, url string) []byte {
	b, _ := json.Marshal([]string{kindWorker, c.KafkaClusterID, c.GroupID, url})
	return b
}

// Store reads and writes the registry topic.
type Store struct {
	// Client reads the topic; Admin creates it.
	Client sarama.Client
	Admin  sarama.ClusterAdmin
	// Brokers and Sarama configure the producer (copied; acks=all).
	Brokers []string
	Sarama  *sarama.Config
	Topic   string
	// ReplicationFactor of the topic when created (-1: broker default).
	ReplicationFactor int16
	// Clock judges RewriteAfter and paces the looks again at "not yet"
	// answers (nil: the system clock).
	Clock clock.Clock
	// Settings is this worker's settings fingerprint (connect/parity.Of),
	// written in its worker record; a record holding other settings is
	// written again at once. Nil writes none (a record without settings
	// reads as a worker whose settings are unknown).
	Settings map[string]string
}

// RewriteAfter is the age after which a start rewrites a worker record
// that is otherwise unchanged. Below it a registration that would write
// nothing new (this worker's URL recorded for this very cluster, the group
// claimed by us or not to be claimed) is not written again: the write
// (acks=all) and the read-back were half of the group step on every
// restart (docs/benchmarks.md, issue 39), for a last_seen nobody judges
// by. So last_seen is at most this old while the worker restarts, and
// host names the container of the last write.
const RewriteAfter = time.Hour

func (s *Store) now() time.Time { return clock.Or(s.Clock).Now() }

// Read returns the registry's view of group within Kafka cluster
// kafkaClusterID. A missing topic is an empty view, not an error. An
// answer that means "not yet" is asked again (lookingAgain): on a new
// cluster the topic was created a moment ago, and its leader may not know
// it leads yet. A registration given up for that left a worker of the
// first bring-up unverified for good, so the group never looked open and
// seven of eight workers joined one at a time (issue 39's bench, 36 s
// against 24 s).
func (s *Store) Read(ctx context.Context, kafkaClusterID, group string) (*View, error) {
	var v *View
	err := s.lookingAgain(ctx, func() error {
		var err error
		v, err = s.read(ctx, kafkaClusterID, group)
		return err
	})
	return v, err
}

// read is one Read.
func (s *Store) read(ctx context.Context, kafkaClusterID, group string) (*View, error) {
	v := &View{Topic: s.Topic, Exists: true, Claims: []Claim{}, Workers: []Worker{}}
	claims := map[string]Claim{}
	workers := map[string]Worker{}
	end, err := kafkalog.ReadAll(ctx, s.Client, s.Topic, 0, func(r kafkalog.Record) error {
		var key []string
		if json.Unmarshal(r.Key, &key) != nil || len(key) != 4 || key[2] != group {
			return nil
		}
		if key[1] != kafkaClusterID {
			v.OtherKafkaClusters++
			return nil
		}
		k := string(r.Key)
		if r.Value == nil {
			delete(claims, k)
			delete(workers, k)
			return nil
		}
		var val value
		if json.Unmarshal(r.Value, &val) != nil || val.V != 1 {
			return nil
		}
		switch key[0] {
		case kindClaim:
			if _, ok := claims[k]; ok {
				return nil // a claim is never rewritten; keep the first
			}
			claims[k] = Claim{Cluster: val.Cluster, Offset: r.Offset, FirstSeen: r.Timestamp, URL: val.URL, Host: val.Host, HandedOverFrom: val.HandedOverFrom}
		case kindWorker:
			w := Worker{Cluster: val.Cluster, URL: key[3], Host: val.Host, FirstSeen: r.Timestamp, LastSeen: r.Timestamp, Offset: r.Offset, Settings: val.Settings}
			if val.FirstSeenMs > 0 {
				w.FirstSeen = time.UnixMilli(val.FirstSeenMs)
			}
			workers[k] = w
		}
		return nil
	})
	if errors.Is(err, kafkalog.ErrNoTopic) {
		v.Exists = false
		return v, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read cluster registry: %w", err)
	}
	v.End = end
	for _, c := range claims {
		v.Claims = append(v.Claims, c)
	}
	sort.Slice(v.Claims, func(i, j int) bool { return v.Claims[i].Offset < v.Claims[j].Offset })
	for _, w := range workers {
		v.Workers = append(v.Workers, w)
	}
	sort.Slice(v.Workers, func(i, j int) bool { return v.Workers[i].URL < v.Workers[j].URL })
	return v, nil
}

// ClaimedError says the group belongs to another Connect cluster.
type ClaimedError struct {
	Owner Claim
	// Handover is the CONNECT_INIT_GROUP_HANDOVER value that did not match,
	// if one was set.
	Handover string
	// LostRace is true when our claim was written but another landed first.
	LostRace bool
}

// Error names the owning cluster, who claimed it and when.
func (e *ClaimedError) Error() string {
	msg := fmt.Sprintf("worker group %q is registered to another Connect cluster: config topic %q (offset topic %q, status topic %q), claimed at %s by %s (host %s)",
		e.Owner.GroupID, e.Owner.ConfigTopic, e.Owner.OffsetTopic, e.Owner.StatusTopic,
		e.Owner.FirstSeen.UTC().Format(time.RFC3339), orUnknown(e.Owner.URL), orUnknown(e.Owner.Host))
	if e.LostRace {
		msg += "; it registered at the same moment as this cluster and its claim landed first"
	}
	if e.Handover != "" {
		msg += fmt.Sprintf("; CONNECT_INIT_GROUP_HANDOVER=%q names another owner", e.Handover)
	}
	return msg
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Registration is what Register wrote.
type Registration struct {
	View *View
	// Claimed is true when this call wrote our claim; HandedOver names the
	// previous owner's config topic when it took the group over.
	Claimed    bool
	HandedOver string
	// Unchanged is set when nothing was written: the view already held
	// this registration, written less than RewriteAfter ago (Written).
	Unchanged bool
	Written   time.Time
}

// Register records that the worker at url (on host) starts for cluster me,
// and, when claim is true, claims the group for me if nobody has (the
// caller passes false while the group has members it could not verify:
// claiming a group that may be someone else's would be a guess). It creates the topic when
// missing. When the group is claimed by another cluster it writes nothing
// and returns a *ClaimedError, unless handover names that cluster's config
// topic: then it removes the old claim and the old cluster's worker records
// of this group and claims the group. Judging the live members first is
// the caller's job (no member of the old cluster may still be in the
// group).
func (s *Store) Register(ctx context.Context, me Cluster, url, host, handover string, claim bool) (*Registration, error) {
	if err := s.ensureTopic(ctx); err != nil {
		return nil, err
	}
	v, err := s.Read(ctx, me.KafkaClusterID, me.GroupID)
	if err != nil {
		return nil, err
	}
	return s.registerOver(ctx, v, me, url, host, handover, claim)
}

// RegisterOver is Register on v, the view of the group the caller read a
// moment ago (Read, same Kafka cluster and group), instead of reading the
// registry again before writing: the group gate reads it to judge the
// members and then registers, and the second read cost every start four
// round trips (issue 39). The write is judged on v; confirmRegistration
// still reads the registry back after it, which is what settles a race
// with another cluster's claim. A registration that writes nothing
// (Unchanged) is judged on v only while the partition still ends where v
// was read (one ListOffsets); past it the registry is read again and the
// registration judged on that, so a handover or another cluster's claim
// since v is refused here, lock or no lock (issue 48). A nil v, or one of
// a topic that did not exist, is Register.
func (s *Store) RegisterOver(ctx context.Context, v *View, me Cluster, url, host, handover string, claim bool) (*Registration, error) {
	if v == nil || !v.Exists {
		return s.Register(ctx, me, url, host, handover, claim)
	}
	return s.registerOver(ctx, v, me, url, host, handover, claim)
}

// registerOver writes what Register writes, judged on v.
func (s *Store) registerOver(ctx context.Context, v *View, me Cluster, url, host, handover string, claim bool) (*Registration, error) {
	reg, err := s.registerOn(ctx, v, me, url, host, handover, claim)
	if err != nil || !reg.Unchanged {
		return reg, err
	}
	// Nothing written, so nothing read back: v is the registry's state
	// only if nothing was written since it was read.
	end, err := s.endOffset(ctx)
	if err != nil {
		return nil, err
	}
	if end == v.End {
		return reg, nil
	}
	fresh, err := s.Read(ctx, me.KafkaClusterID, me.GroupID)
	if err != nil {
		return nil, err
	}
	return s.registerOn(ctx, fresh, me, url, host, handover, claim)
}

// endOffset is the registry partition's high watermark now: one
// ListOffsets to its leader, where a Read is at least a Fetch of the
// whole partition.
func (s *Store) endOffset(ctx context.Context) (int64, error) {
	var end int64
	err := s.lookingAgain(ctx, func() error {
		var err error
		if end, err = s.Client.GetOffset(s.Topic, 0, sarama.OffsetNewest); err != nil {
			return fmt.Errorf("cluster registry %q: end offset: %w", s.Topic, err)
		}
		return nil
	})
	return end, err
}

// registerOn is one registration judged on v: Unchanged when v already
// holds it (the caller decides whether v is current), else written and
// read back.
func (s *Store) registerOn(ctx context.Context, v *View, me Cluster, url, host, handover string, claim bool) (*Registration, error) {
	reg := &Registration{}
	msgs, handedOver, err := s.handoverMessages(v, me, handover)
	if err != nil {
		return nil, err
	}
	reg.HandedOver = handedOver
	mine := false
	for _, c := range v.Claims {
		if c.Same(me) {
			mine = true
		}
	}
	if (claim && !mine) || reg.HandedOver != "" {
		val := value{V: 1, Cluster: me, URL: url, Host: host, HandedOverFrom: reg.HandedOver}
		msgs = append(msgs, s.message(claimKey(me), val))
		reg.Claimed = true
	}
	w := v.WorkerByURL(url)
	if len(msgs) == 0 && w != nil && w.Cluster == me && maps.Equal(w.Settings, s.Settings) && s.now().Sub(w.LastSeen) < RewriteAfter {
		// Nothing to claim, nothing to take over, and this URL already
		// recorded for this cluster with these settings: nothing to write, nothing of ours to
		// confirm (registerOver checks that v is still current).
		reg.View, reg.Unchanged, reg.Written = v, true, w.LastSeen
		return reg, nil
	}
	wv := value{V: 1, Cluster: me, URL: url, Host: host, Settings: s.Settings}
	if w != nil && w.Same(me) {
		wv.FirstSeenMs = w.FirstSeen.UnixMilli()
	}
	msgs = append(msgs, s.message(workerKey(me, url), wv))
	if err := s.lookingAgain(ctx, func() error { return s.send(msgs) }); err != nil {
		return nil, err
	}
	return s.confirmRegistration(ctx, me, url, reg)
}

// handoverMessages are the tombstones of the current owner's claim and of
// its worker records in the group, when another cluster owns the group and
// handover names its config topic (from is then that config topic). Any
// other owner is a *ClaimedError; no owner, or us, is nothing to remove.
func (s *Store) handoverMessages(v *View, me Cluster, handover string) (msgs []*sarama.ProducerMessage, from string, err error) {
	o := v.Owner()
	if o == nil || o.Same(me) {
		return nil, "", nil
	}
	if handover == "" || handover != o.ConfigTopic {
		return nil, "", &ClaimedError{Owner: *o, Handover: handover}
	}
	msgs = append(msgs, s.tombstone(claimKey(o.Cluster)))
	for _, w := range v.Workers {
		if w.Same(o.Cluster) {
			msgs = append(msgs, s.tombstone(workerKey(w.Cluster, w.URL)))
		}
	}
	return msgs, o.ConfigTopic, nil
}

// confirmRegistration reads the registry back after Register wrote to it:
// the group must be unclaimed with no claim of ours, or ours. When another
// claim landed first (or ours vanished) it takes our records back and
// fails.
func (s *Store) confirmRegistration(ctx context.Context, me Cluster, url string, reg *Registration) (*Registration, error) {
	v, err := s.Read(ctx, me.KafkaClusterID, me.GroupID)
	if err != nil {
		return nil, err
	}
	if o := v.Owner(); o == nil && !reg.Claimed {
		reg.View = v // unclaimed, and we did not claim: fine
		return reg, nil
	}
	if o := v.Owner(); o == nil || !o.Same(me) {
		// Lost a race (or our claim vanished): take our records back.
		if reg.Claimed {
			_ = s.send([]*sarama.ProducerMessage{s.tombstone(claimKey(me)), s.tombstone(workerKey(me, url))})
		}
		if o == nil {
			return nil, fmt.Errorf("cluster registry %q: our claim on group %q is not in the topic after writing it", s.Topic, me.GroupID)
		}
		return nil, &ClaimedError{Owner: *o, LostRace: reg.Claimed}
	}
	reg.View = v
	return reg, nil
}

// claimMessages are a claim and a worker record for me, as Register
// writes them on an unclaimed group.
func (s *Store) claimMessages(me Cluster, url, host string) []*sarama.ProducerMessage {
	return []*sarama.ProducerMessage{
		s.message(claimKey(me), value{V: 1, Cluster: me, URL: url, Host: host}),
		s.message(workerKey(me, url), value{V: 1, Cluster: me, URL: url, Host: host, Settings: s.Settings}),
	}
}

func (s *Store) message(key []byte, v value) *sarama.ProducerMessage {
	b, _ := json.Marshal(v)
	return &sarama.ProducerMessage{Topic: s.Topic, Partition: 0, Key: sarama.ByteEncoder(key), Value: sarama.ByteEncoder(b)}
}

func (s *Store) tombstone(key []byte) *sarama.ProducerMessage {
	return &sarama.ProducerMessage{Topic: s.Topic, Partition: 0, Key: sarama.ByteEncoder(key)}
}

// notYetWait bounds how long the registry repeats a read or a write the
// cluster answered "not yet": the registry topic was often created a
// moment ago, and a broker whose metadata lags the create answers
// UNKNOWN_TOPIC_OR_PARTITION (seen on a brand-new 3.4.1 ZooKeeper-mode
// cluster in CI: "Failed to deliver 2 messages"), or its leader
// NOT_LEADER_OR_FOLLOWER (seen when eight workers of a new cluster
// registered at once: two gave up).
const notYetWait = 15 * time.Second

// notYetPause is the pause before asking again.
const notYetPause = 100 * time.Millisecond

// lookingAgain runs fn, again while its error means "not yet"
// (kafka/notyet), for at most notYetWait or until ctx ends. The records
// are keyed and compacted, and confirmRegistration reads them back, so
// writing one twice is harmless.
func (s *Store) lookingAgain(ctx context.Context, fn func() error) error {
	c := clock.Or(s.Clock)
	until := c.Now().Add(notYetWait)
	for {
		err := fn()
		if err == nil || !notyet.Is(err) || !c.Now().Before(until) {
			return err
		}
		if !clock.Sleep(c, ctx.Done(), notYetPause) {
			return err
		}
	}
}

func (s *Store) send(msgs []*sarama.ProducerMessage) error {
	if s.Client != nil && !s.Client.Closed() {
		return s.produce(msgs)
	}
	cfg := *s.Sarama
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Idempotent = false
	cfg.Producer.Retry.Max = 5
	cfg.Metadata.AllowAutoTopicCreation = false
	p, err := sarama.NewSyncProducer(s.Brokers, &cfg)
	if err != nil {
		return fmt.Errorf("cluster registry %q: producer: %w", s.Topic, err)
	}
	defer p.Close()
	if err := p.SendMessages(msgs); err != nil {
		return fmt.Errorf("cluster registry %q: write: %w", s.Topic, err)
	}
	return nil
}

// produce writes msgs to partition 0 in one Produce request (acks=all)
// on the connection Client already has to the partition's leader. A
// producer of its own cost every start a new client: a connection, an
// ApiVersions and a metadata read per broker it spoke to, about a third of
// the group step on a healthy cluster (docs/benchmarks.md, issue 39). A
// leader that moved is looked up again: the caller repeats "not yet"
// answers.
func (s *Store) produce(msgs []*sarama.ProducerMessage) error {
	leader, err := s.Client.Leader(s.Topic, 0)
	if err != nil {
		_ = s.Client.RefreshMetadata(s.Topic)
		return fmt.Errorf("cluster registry %q: leader: %w", s.Topic, err)
	}
	now := time.Now()
	batch := &sarama.RecordBatch{Version: 2, FirstTimestamp: now, MaxTimestamp: now, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		LastOffsetDelta: int32(len(msgs) - 1)}
	for i, m := range msgs {
		r := &sarama.Record{OffsetDelta: int64(i)}
		if m.Key != nil {
			if r.Key, err = m.Key.Encode(); err != nil {
				return fmt.Errorf("cluster registry %q: encode key: %w", s.Topic, err)
			}
		}
		if m.Value != nil {
			if r.Value, err = m.Value.Encode(); err != nil {
				return fmt.Errorf("cluster registry %q: encode value: %w", s.Topic, err)
			}
		}
		batch.Records = append(batch.Records, r)
	}
	timeout := s.Client.Config().Producer.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	// v7 (Kafka 2.1) writes record batches: every broker version
	// connect-init supports takes it (Kafka 4.0 removed v0-v2).
	req := &sarama.ProduceRequest{Version: 7, RequiredAcks: sarama.WaitForAll, Timeout: int32(timeout / time.Millisecond)}
	req.AddBatch(s.Topic, 0, batch)
	resp, err := leader.Produce(req)
	if err != nil {
		_ = s.Client.RefreshMetadata(s.Topic)
		return fmt.Errorf("cluster registry %q: write: %w", s.Topic, err)
	}
	b := resp.GetBlock(s.Topic, 0)
	if b == nil {
		return fmt.Errorf("cluster registry %q: write: no answer for partition 0", s.Topic)
	}
	if b.Err != sarama.ErrNoError {
		_ = s.Client.RefreshMetadata(s.Topic)
		return fmt.Errorf("cluster registry %q: write: %w", s.Topic, b.Err)
	}
	return nil
}

// ensureTopic creates the registry topic when missing (compacted, one
// partition, LogAppendTime) and waits until the client sees its leader.
func (s *Store) ensureTopic(ctx context.Context) error {
	if _, err := kafkalog.Partitions(s.Client, s.Topic); err == nil {
		return nil
	} else if !errors.Is(err, kafkalog.ErrNoTopic) {
		return fmt.Errorf("cluster registry: %w", err)
	}
	compact, lat := "compact", "LogAppendTime"
	err := s.Admin.CreateTopic(s.Topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: s.ReplicationFactor,
		ConfigEntries: map[string]*string{"cleanup.policy": &compact, "message.timestamp.type": &lat}}, false)
	if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
		return fmt.Errorf("cluster registry: create topic %q: %w", s.Topic, err)
	}
	for {
		if err := s.Client.RefreshMetadata(s.Topic); err == nil {
			if _, err := s.Client.Leader(s.Topic, 0); err == nil {
				return nil
			}
		}
		if !clock.Sleep(clock.Or(s.Clock), ctx.Done(), notYetPause) {
			return fmt.Errorf("cluster registry: topic %q has no leader yet: %w", s.Topic, ctx.Err())
		}
	}
}

// KafkaClusterID asks a broker for the Kafka cluster id (Metadata v7+),
// naming topic so the broker returns nothing big.
func KafkaClusterID(client sarama.Client, topic string) (string, error) {
	b, err := client.Controller()
	if err != nil {
		bs := client.Brokers()
		if len(bs) == 0 {
			return "", fmt.Errorf("kafka cluster id: %w", err)
		}
		b = bs[0]
	}
	md, err := b.GetMetadata(&sarama.MetadataRequest{Version: 7, Topics: []string{topic}})
	if err != nil {
		return "", fmt.Errorf("kafka cluster id: metadata from broker %d: %w", b.ID(), err)
	}
	if md.ClusterID == nil || *md.ClusterID == "" {
		return "", errors.New("kafka cluster id: the broker sent none")
	}
	return *md.ClusterID, nil
}

package kafkalog

import (
	"context"
	"errors"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
	"sync"
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReadAllStepsOverTransactionMarkers writes a committed transaction,
// an aborted one and plain records (one a tombstone) on an in-process Kafka
// (kfake) and reads the partition: every data record below the end
// offset, none twice, and the read ends even though the last offsets are a
// transaction marker, which sarama's PartitionConsumer never shows.
func TestReadAllStepsOverTransactionMarkers(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	plain, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	txn, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t"), kgo.TransactionalID("tx"))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	produce := func(cl *kgo.Client, key string, value []byte) {
		t.Helper()
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(key), Value: value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce(plain, "a", []byte("1"))
	for _, commit := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		produce(txn, "b", []byte("2"))
		produce(txn, "c", []byte("3"))
		if err := txn.EndTransaction(ctx, commit); err != nil {
			t.Fatal(err)
		}
	}
	produce(plain, "a", nil)

	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.Metadata.AllowAutoTopicCreation = false
	client, err := sarama.NewClient(c.ListenAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var got []Record
	end, err := ReadAll(ctx, client, "t", 0, func(r Record) error { got = append(got, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	// a@0, b@1, c@2, commit marker@3, b@4, c@5 (aborted, but returned
	// uncommitted), abort marker@6, tombstone a@7.
	if end != 8 {
		t.Errorf("end offset %d, want 8", end)
	}
	var keys string
	for i, r := range got {
		if i > 0 && r.Offset <= got[i-1].Offset {
			t.Errorf("offsets not increasing: %+v", got)
		}
		keys += string(r.Key)
	}
	if keys != "abcbca" || got[len(got)-1].Value != nil || got[len(got)-1].Offset != 7 {
		t.Errorf("records: %q %+v", keys, got)
	}

	got = nil
	end, err = ReadWith(ctx, client, "t", 0, Committed, func(r Record) error { got = append(got, r); return nil })
	keys = ""
	for _, r := range got {
		keys += string(r.Key)
	}
	if err != nil || end != 8 || keys != "abca" || got[1].Offset != 1 || got[2].Offset != 2 || got[3].Offset != 7 {
		t.Errorf("committed: end %d, %v, %q %+v", end, err, keys, got)
	}

	if _, err := ReadAll(ctx, client, "missing", 0, func(Record) error { return nil }); !errors.Is(err, ErrNoTopic) {
		t.Errorf("missing topic: %v", err)
	}
}

// A read is its fetches and nothing else: no ListOffsets for the log's two
// ends (two round trips of every read, issue 39). The first fetch starts
// at offset 0 with MinBytes 0, so an empty partition's answer is not held
// for MaxWaitTime; a log that no longer starts at 0 (DeleteRecords) is read
// from its start, asked only then.
func TestReadIsOneFetchFromOffsetZero(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t", "empty"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	var fetches []*kmsg.FetchRequest
	listOffsets := 0
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		mu.Lock()
		defer mu.Unlock()
		switch r := req.(type) {
		case *kmsg.FetchRequest:
			fetches = append(fetches, r)
		case *kmsg.ListOffsetsRequest:
			listOffsets++
		}
		return nil, nil, false
	})
	reset := func() {
		mu.Lock()
		defer mu.Unlock()
		fetches, listOffsets = nil, 0
	}
	counts := func() (firstOffset int64, minBytes int32, n, lo int) {
		mu.Lock()
		defer mu.Unlock()
		if len(fetches) > 0 {
			firstOffset, minBytes = fetches[0].Topics[0].Partitions[0].FetchOffset, fetches[0].MinBytes
		}
		return firstOffset, minBytes, len(fetches), listOffsets
	}
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, k := range []string{"a", "b", "c"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(k), Value: []byte(k)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	client, err := sarama.NewClient(c.ListenAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	read := func(topic string) (string, int64) {
		t.Helper()
		reset()
		var keys string
		end, err := ReadAll(ctx, client, topic, 0, func(r Record) error { keys += string(r.Key); return nil })
		if err != nil {
			t.Fatalf("read %s: %v", topic, err)
		}
		return keys, end
	}

	keys, end := read("t")
	first, minBytes, n, lo := counts()
	if keys != "abc" || end != 3 || n != 1 || lo != 0 || first != 0 || minBytes != 0 {
		t.Errorf("read t: records %q, end %d; %d fetches (first at %d, MinBytes %d), %d ListOffsets; want abc, 3, one fetch at 0 with MinBytes 0, no ListOffsets",
			keys, end, n, first, minBytes, lo)
	}
	keys, end = read("empty")
	if _, minBytes, n, lo := counts(); keys != "" || end != 0 || n != 1 || lo != 0 || minBytes != 0 {
		t.Errorf("read empty: records %q, end %d; %d fetches (MinBytes %d), %d ListOffsets; want none, 0, one fetch with MinBytes 0, no ListOffsets", keys, end, n, minBytes, lo)
	}

	adm := kadm.NewClient(cl)
	if _, err := adm.DeleteRecords(ctx, kadm.Offsets{"t": {0: kadm.Offset{Topic: "t", Partition: 0, At: 2}}}); err != nil {
		t.Fatal(err)
	}
	keys, end = read("t")
	if _, _, _, lo := counts(); keys != "c" || end != 3 || lo != 1 {
		t.Errorf("read t from log start 2: records %q, end %d, %d ListOffsets; want c, 3, 1 (the log start, asked after the fetch at 0 was out of range)", keys, end, lo)
	}
}

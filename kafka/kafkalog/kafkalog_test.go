package kafkalog

import (
	"context"
	"errors"
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

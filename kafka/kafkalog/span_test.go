package kafkalog

import (
	"context"
	"fmt"
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ReadSpan reads a partition from an offset of the caller's, up to a
// bound or to the end, and the offset it returns is where the next read of
// the records written since begins: a reader that keeps its place reads
// every record once. Bounds gives the log's two ends.
func TestReadSpanKeepsItsPlace(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	produce := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(0, 10)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	client, err := sarama.NewClient(c.ListenAddrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	read := func(from, to int64) (string, int64) {
		t.Helper()
		keys := ""
		next, err := ReadSpan(ctx, client, "t", 0, from, to, func(r Record) error {
			if fmt.Sprint(r.Offset) != string(r.Key) {
				t.Errorf("record %q at offset %d", r.Key, r.Offset)
			}
			keys += string(r.Key)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return keys, next
	}
	if start, end, err := Bounds(client, "t", 0); err != nil || start != 0 || end != 10 {
		t.Fatalf("bounds %d, %d (%v), want 0, 10", start, end, err)
	}
	if keys, next := read(3, 7); keys != "3456" || next != 7 {
		t.Errorf("span 3-7: %q, next %d", keys, next)
	}
	keys, next := read(6, -1)
	if keys != "6789" || next != 10 {
		t.Errorf("from 6 to the end: %q, next %d", keys, next)
	}
	produce(10, 12)
	if keys, next = read(next, -1); keys != "1011" || next != 12 {
		t.Errorf("the records written since: %q, next %d", keys, next)
	}
	if keys, next = read(next, -1); keys != "" || next != 12 {
		t.Errorf("nothing written since: %q, next %d", keys, next)
	}
}

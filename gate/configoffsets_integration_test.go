//go:build integration

package gate

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/internal/testbed"
)

// ConfigEndOffsets reads the config topic's high watermark and last stable
// offset with one fetch (issue 39). On a real broker they must be what the
// two ListOffsets (read_uncommitted, read_committed) say: while a
// transaction is open the last stable offset stays before it, once it is
// committed both ends meet; and a log that no longer starts at 0 (the
// fetch from 0 is out of range) is read with the ListOffsets.
func TestConfigEndOffsetsOfAnOpenTransaction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := testbed.StartCluster(ctx, dist, testbed.ClusterOptions{Brokers: 1, Dir: filepath.Join(workDir, "endoffsets")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const topic = "eo-configs"
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V3_0_0_0
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	client, err := sarama.NewClient([]string{c.Bootstrap()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false); err != nil {
		t.Fatal(err)
	}
	plain, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for range 2 {
		if _, _, err := plain.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("c")}); err != nil {
			t.Fatal(err)
		}
	}
	tcfg := sarama.NewConfig()
	tcfg.Version = sarama.V3_0_0_0
	tcfg.Producer.Return.Successes = true
	tcfg.Producer.RequiredAcks = sarama.WaitForAll
	tcfg.Producer.Idempotent = true
	tcfg.Producer.Transaction.ID = "eo-test"
	tcfg.Net.MaxOpenRequests = 1
	tx, err := sarama.NewSyncProducer([]string{c.Bootstrap()}, tcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	if err := tx.BeginTxn(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tx.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("t")}); err != nil {
		t.Fatal(err)
	}

	g := &GroupGate{Client: client, ConfigTopic: topic}
	listOffsets := func(level sarama.IsolationLevel) int64 {
		t.Helper()
		leader, err := client.Leader(topic, 0)
		if err != nil {
			t.Fatal(err)
		}
		req := sarama.NewOffsetRequest(sarama.V3_0_0_0)
		req.IsolationLevel = level
		req.AddBlock(topic, 0, sarama.OffsetNewest, 1)
		resp, err := leader.GetAvailableOffsets(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetBlock(topic, 0).Offset
	}
	check := func(what string, wantHW, wantLSO int64) {
		t.Helper()
		hw, lso, err := g.ConfigEndOffsets(ctx)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if hw != wantHW || lso != wantLSO {
			t.Errorf("%s: high watermark %d, last stable offset %d; want %d, %d", what, hw, lso, wantHW, wantLSO)
		}
		if u, c := listOffsets(sarama.ReadUncommitted), listOffsets(sarama.ReadCommitted); u != hw || c != lso {
			t.Errorf("%s: ListOffsets say %d, %d; ConfigEndOffsets %d, %d", what, u, c, hw, lso)
		}
	}
	check("open transaction", 3, 2)
	if err := tx.CommitTxn(); err != nil {
		t.Fatal(err)
	}
	// The coordinator writes the commit marker (offset 3) after CommitTxn
	// returns: wait until the broker's own answer has it.
	for listOffsets(sarama.ReadCommitted) != 4 {
		select {
		case <-ctx.Done():
			t.Fatal("the commit marker never landed")
		case <-time.After(50 * time.Millisecond):
		}
	}
	check("committed", 4, 4)
	if err := admin.DeleteRecords(topic, map[int32]int64{0: 2}); err != nil {
		t.Fatal(err)
	}
	check("log starting at 2", 4, 4)
}

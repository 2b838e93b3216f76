package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

// repairTookRe is the time `connect-init repair --execute` reports for
// the reassignment itself (throttle, submit, follow, verify).
var repairTookRe = regexp.MustCompile(`throttle removed, took ([0-9.]+)(ms|s|m[0-9.]*s)`)

// benchRepair is row 6: `connect-init repair --topics=internal --execute`
// raising a Connect offset topic of 50 single-replica partitions, all on
// broker 1 (incident 2's layout), to replication factor 3 on the 3-broker
// bed, with 10 small records per partition (Connect's committed source
// offsets). Each run uses a topic of its own.
func benchRepair(ctx context.Context, b *bed, o options, rep *report) error {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Retry.Max = 40 // a new topic's leaders take a moment to be known everywhere
	cfg.Producer.Retry.Backoff = 250 * time.Millisecond
	client, err := sarama.NewClient(strings.Split(b.cluster.Bootstrap(), ","), cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	admin, err := sarama.NewClusterAdminFromClient(client)
	if err != nil {
		return err
	}
	producer, err := sarama.NewSyncProducerFromClient(client)
	if err != nil {
		return err
	}
	defer producer.Close()
	runs := min(o.runs, 3)
	var wall, took []float64
	for i := 0; i < runs; i++ {
		names := freshGroup("repair")
		compact := "compact"
		assignment := map[int32][]int32{}
		for p := int32(0); p < 50; p++ {
			assignment[p] = []int32{1}
		}
		if err := admin.CreateTopic(names["offset.storage.topic"], &sarama.TopicDetail{NumPartitions: -1, ReplicationFactor: -1, ReplicaAssignment: assignment,
			ConfigEntries: map[string]*string{"cleanup.policy": &compact}}, false); err != nil {
			return fmt.Errorf("create the offset topic: %w", err)
		}
		for _, t := range []string{names["config.storage.topic"], names["status.storage.topic"]} {
			if err := admin.CreateTopic(t, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 3, ConfigEntries: map[string]*string{"cleanup.policy": &compact}}, false); err != nil {
				return fmt.Errorf("create %s: %w", t, err)
			}
		}
		if err := waitWritable(ctx, client, names["offset.storage.topic"], 50); err != nil {
			return err
		}
		var msgs []*sarama.ProducerMessage
		for p := int32(0); p < 50; p++ {
			for k := 0; k < 10; k++ {
				msgs = append(msgs, &sarama.ProducerMessage{Topic: names["offset.storage.topic"], Partition: p,
					Key:   sarama.StringEncoder(fmt.Sprintf(`["connector-%d",{"partition":%d}]`, k, p)),
					Value: sarama.StringEncoder(fmt.Sprintf(`{"position":%d}`, 1000+k))})
			}
		}
		if err := producer.SendMessages(msgs); err != nil {
			var pe sarama.ProducerErrors
			if errors.As(err, &pe) && len(pe) > 0 {
				err = fmt.Errorf("%w (first: %v)", err, pe[0].Err)
			}
			return fmt.Errorf("write the offsets: %w", err)
		}
		props := map[string]string{"bootstrap.servers": b.cluster.Bootstrap(), "key.converter": "org.apache.kafka.connect.json.JsonConverter",
			"value.converter": "org.apache.kafka.connect.json.JsonConverter", "rest.advertised.host.name": "127.0.0.1",
			"offset.storage.partitions": "50", "status.storage.partitions": "1"}
		for k, v := range names {
			props[k] = v
		}
		r, err := timeRun(ctx, []string{b.binary, "repair", "--topics=internal", "--execute"}, gateEnv(props))
		if err != nil {
			return err
		}
		if r.code != 0 || !strings.Contains(r.out, "Done: 50 partition(s) reassigned and verified") {
			return fmt.Errorf("connect-init repair exited %d:\n%s", r.code, tailString(r.out, 3000))
		}
		wall = append(wall, ms(r.wall))
		if m := repairTookRe.FindStringSubmatch(r.out); m != nil {
			if d, err := time.ParseDuration(m[1] + m[2]); err == nil {
				took = append(took, ms(d))
			}
		}
		progress("repair run %d/%d: %.0f ms", i+1, runs, last(wall))
	}
	rep.add("6a", "`connect-init repair --topics=internal --execute`: 50 partitions, replication factor 1 → 3, 500 small records (process wall time)", "ms", wall,
		"Connect offset topic with all 50 partitions on broker 1")
	rep.add("6b", "the same: reassignment as it reports it (throttle, submit, all 100 new replicas in sync, throttle removed, verify)", "ms", took, "")
	return nil
}

// waitWritable waits until topic has n partitions with a leader.
func waitWritable(ctx context.Context, client sarama.Client, topic string, n int) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := client.RefreshMetadata(topic)
		if err == nil {
			var ps []int32
			if ps, err = client.WritablePartitions(topic); err == nil && len(ps) == n {
				return nil
			}
			err = fmt.Errorf("%d of %d partitions writable", len(ps), n)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("topic %s: %w", topic, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

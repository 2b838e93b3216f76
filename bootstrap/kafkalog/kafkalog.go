// Package kafkalog reads one partition of a topic from its first offset to
// its end, exactly: the records it returns are every record the partition
// held below its high watermark when the read began, with their offsets and
// timestamps, transaction markers stepped over.
//
// It exists because sarama's PartitionConsumer hides control records
// (transaction markers) and never says how far it has read, so a reader
// waiting for "offset high watermark - 1" waits forever on a topic written
// transactionally (Connect's config topic with exactly-once source support
// is one). Fetching batches directly tells the next offset after every
// batch, control batches included.
package kafkalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// ErrNoTopic is returned (wrapped) when the topic does not exist.
var ErrNoTopic = errors.New("topic does not exist")

// Record is one data record of the partition.
type Record struct {
	Offset int64
	// Key and Value are nil for a null key or value (a tombstone has a nil
	// Value).
	Key, Value []byte
	// Timestamp is the record's timestamp: the broker's clock on a topic
	// with message.timestamp.type=LogAppendTime, the producer's otherwise.
	Timestamp time.Time
}

// maxFetchBytes bounds one fetch; a record larger than this is still
// returned whole (Kafka sends at least one batch).
const maxFetchBytes = 4 << 20

// ReadAll calls fn for every record of topic's partition below the high
// watermark it sees first, in offset order, and returns that high
// watermark (0 for an empty partition). A topic that does not exist returns
// an error wrapping ErrNoTopic. ctx bounds the whole read.
func ReadAll(ctx context.Context, client sarama.Client, topic string, partition int32, fn func(Record) error) (int64, error) {
	if err := client.RefreshMetadata(topic); err != nil {
		if errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			return 0, fmt.Errorf("read %s/%d: %w", topic, partition, ErrNoTopic)
		}
		return 0, fmt.Errorf("read %s/%d: metadata: %w", topic, partition, err)
	}
	end, err := client.GetOffset(topic, partition, sarama.OffsetNewest)
	if err != nil {
		if errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			return 0, fmt.Errorf("read %s/%d: %w", topic, partition, ErrNoTopic)
		}
		return 0, fmt.Errorf("read %s/%d: end offset: %w", topic, partition, err)
	}
	next, err := client.GetOffset(topic, partition, sarama.OffsetOldest)
	if err != nil {
		return 0, fmt.Errorf("read %s/%d: start offset: %w", topic, partition, err)
	}
	for next < end {
		if err := ctx.Err(); err != nil {
			return end, fmt.Errorf("read %s/%d at offset %d of %d: %w", topic, partition, next, end, err)
		}
		leader, err := client.Leader(topic, partition)
		if err != nil {
			return end, fmt.Errorf("read %s/%d: leader: %w", topic, partition, err)
		}
		req := &sarama.FetchRequest{Version: 11, MaxWaitTime: 100, MinBytes: 1, MaxBytes: maxFetchBytes, Isolation: sarama.ReadUncommitted}
		req.AddBlock(topic, partition, next, maxFetchBytes, -1)
		stop := context.AfterFunc(ctx, func() { leader.Close() })
		resp, err := leader.Fetch(req)
		stop()
		if err != nil {
			_ = client.RefreshMetadata(topic)
			return end, fmt.Errorf("read %s/%d at offset %d: fetch from broker %d: %w", topic, partition, next, leader.ID(), err)
		}
		block := resp.GetBlock(topic, partition)
		if block == nil {
			return end, fmt.Errorf("read %s/%d at offset %d: the broker's answer does not mention the partition", topic, partition, next)
		}
		if !errors.Is(block.Err, sarama.ErrNoError) {
			return end, fmt.Errorf("read %s/%d at offset %d: %w", topic, partition, next, block.Err)
		}
		before := next
		for _, rs := range block.RecordsSet {
			if rs == nil {
				continue
			}
			b := rs.RecordBatch
			if b == nil {
				return end, fmt.Errorf("read %s/%d at offset %d: the partition holds the pre-0.11 message format, which this reader does not read", topic, partition, next)
			}
			last := b.FirstOffset + int64(b.LastOffsetDelta)
			if !b.Control && !b.PartialTrailingRecord {
				for _, r := range b.Records {
					off := b.FirstOffset + r.OffsetDelta
					if off < next || off >= end {
						continue
					}
					ts := b.FirstTimestamp.Add(r.TimestampDelta)
					if b.LogAppendTime {
						ts = b.MaxTimestamp
					}
					if err := fn(Record{Offset: off, Key: r.Key, Value: r.Value, Timestamp: ts}); err != nil {
						return end, err
					}
				}
			}
			if b.PartialTrailingRecord {
				break
			}
			if last+1 > next {
				next = last + 1
			}
		}
		if next == before {
			return end, fmt.Errorf("read %s/%d: no progress at offset %d (a record larger than %d bytes?)", topic, partition, next, maxFetchBytes)
		}
	}
	return end, nil
}

// Partitions returns the number of partitions of topic, wrapping
// ErrNoTopic when it does not exist.
func Partitions(client sarama.Client, topic string) (int32, error) {
	if err := client.RefreshMetadata(topic); err != nil {
		if errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			return 0, fmt.Errorf("partitions of %s: %w", topic, ErrNoTopic)
		}
		return 0, fmt.Errorf("partitions of %s: %w", topic, err)
	}
	ps, err := client.Partitions(topic)
	if err != nil {
		if errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			return 0, fmt.Errorf("partitions of %s: %w", topic, ErrNoTopic)
		}
		return 0, fmt.Errorf("partitions of %s: %w", topic, err)
	}
	return int32(len(ps)), nil
}

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

// Isolation says which records a read returns, as a consumer's
// isolation.level does.
type Isolation int

const (
	// Uncommitted returns every data record below the high watermark.
	Uncommitted Isolation = iota
	// Committed returns only records of committed transactions (and
	// non-transactional ones) below the last stable offset: what a
	// read_committed consumer such as Connect's config-topic reader under
	// exactly-once source support sees.
	Committed
)

// ReadAll is ReadWith(Uncommitted).
func ReadAll(ctx context.Context, client sarama.Client, topic string, partition int32, fn func(Record) error) (int64, error) {
	return ReadWith(ctx, client, topic, partition, Uncommitted, fn)
}

// ReadWith calls fn for every record of topic's partition below the end
// it sees first (the high watermark; under Committed the last stable
// offset), in offset order, and returns that end (0 for an empty
// partition). A topic that does not exist returns an error wrapping
// ErrNoTopic. ctx bounds the whole read.
func ReadWith(ctx context.Context, client sarama.Client, topic string, partition int32, iso Isolation, fn func(Record) error) (int64, error) {
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
	// Aborted transactions (Committed only): producer id -> first offsets
	// the fetch answers announced, and the producers whose aborted
	// transaction is open at the current position.
	announced := map[int64][]int64{}
	aborting := map[int64]bool{}
	lsoKnown := false
	for next < end {
		if err := ctx.Err(); err != nil {
			return end, fmt.Errorf("read %s/%d at offset %d of %d: %w", topic, partition, next, end, err)
		}
		leader, err := client.Leader(topic, partition)
		if err != nil {
			return end, fmt.Errorf("read %s/%d: leader: %w", topic, partition, err)
		}
		level := sarama.ReadUncommitted
		if iso == Committed {
			level = sarama.ReadCommitted
		}
		req := &sarama.FetchRequest{Version: 11, MaxWaitTime: 100, MinBytes: 1, MaxBytes: maxFetchBytes, Isolation: level}
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
		if iso == Committed {
			if !lsoKnown && block.LastStableOffset >= 0 && block.LastStableOffset < end {
				end = block.LastStableOffset // an open transaction: stop before it
			}
			lsoKnown = true
			for _, a := range block.AbortedTransactions {
				announced[a.ProducerID] = append(announced[a.ProducerID], a.FirstOffset)
			}
			if next >= end {
				break
			}
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
			skip := false
			if iso == Committed && b.IsTransactional {
				for _, first := range announced[b.ProducerID] {
					if first <= last {
						aborting[b.ProducerID] = true
					}
				}
				if b.Control {
					// The marker ends the producer's transaction: an abort
					// marker closes an aborted one.
					if isAbortMarker(b) {
						delete(aborting, b.ProducerID)
						var rest []int64
						for _, first := range announced[b.ProducerID] {
							if first > last {
								rest = append(rest, first)
							}
						}
						announced[b.ProducerID] = rest
					}
				} else {
					skip = aborting[b.ProducerID]
				}
			}
			if !b.Control && !b.PartialTrailingRecord && !skip {
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

// isAbortMarker reports whether a control batch holds an ABORT marker
// (control record key: version INT16, type INT16; 0 = abort, 1 = commit).
func isAbortMarker(b *sarama.RecordBatch) bool {
	for _, r := range b.Records {
		if len(r.Key) >= 4 && r.Key[2] == 0 && r.Key[3] == 0 {
			return true
		}
	}
	return false
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

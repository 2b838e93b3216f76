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
const ErrNoTopic = constError("topic does not exist")

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
	r := &reader{client: client, topic: topic, partition: partition, iso: iso, fn: fn, end: -1,
		announced: map[int64][]int64{}, aborting: map[int64]bool{}}
	err := r.read(ctx)
	return max(r.end, 0), err
}

// read is the one reading loop of ReadWith and ReadSpan: fetch from r.next
// until r.end (the first answer's high watermark when r.end < 0), handing
// every data record to r.fn in offset order.
func (r *reader) read(ctx context.Context) error {
	if err := r.leaderKnown(); err != nil {
		return err
	}
	for r.end < 0 || r.next < r.end {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("read %s/%d at offset %d of %d: %w", r.topic, r.partition, r.next, r.end, err)
		}
		block, err := r.fetch(ctx)
		if err != nil {
			// A log that no longer starts where the read begins is read
			// from its start: once, before anything was read.
			if !r.started && (r.end < 0 || r.fromCaller) && errors.Is(err, sarama.ErrOffsetOutOfRange) {
				if err := r.logStart(); err != nil {
					return err
				}
				continue
			}
			return err
		}
		if r.end < 0 {
			r.end = block.HighWaterMarkOffset
		}
		if r.iso == Committed {
			r.stable(block)
		}
		if r.next >= r.end {
			break
		}
		before := r.next
		if err := r.batches(block); err != nil {
			return err
		}
		if r.next == before {
			return fmt.Errorf("read %s/%d: no progress at offset %d (a record larger than %d bytes?)", r.topic, r.partition, r.next, maxFetchBytes)
		}
	}
	return nil
}

// reader is one ReadWith in progress: where it is, where it stops, and,
// under Committed, what it knows of aborted transactions, which only the
// fetch answers tell (there is no consumer doing it for us).
type reader struct {
	client    sarama.Client
	topic     string
	partition int32
	iso       Isolation
	fn        func(Record) error

	// next is the next offset to read; end is where the read stops, -1
	// until the first answer gives it (its high watermark); started says
	// next was moved to the log's start.
	next, end int64
	started   bool
	// fromCaller: the read begins at an offset of the caller's
	// (ReadSpan), which may be gone from the log's head by now.
	fromCaller bool
	// announced: producer id -> first offsets of its aborted transactions
	// the fetch answers announced; aborting: the producers whose aborted
	// transaction is open at the current position.
	announced map[int64][]int64
	aborting  map[int64]bool
	lsoKnown  bool
}

// leaderKnown makes sure the client knows the partition's leader, reading
// the metadata only when it knows none: a refresh before every read was a
// round trip of every read (issue 39). A fetch that fails refreshes it.
func (r *reader) leaderKnown() error {
	if _, err := r.client.Leader(r.topic, r.partition); err != nil {
		if errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			return fmt.Errorf("read %s/%d: %w", r.topic, r.partition, ErrNoTopic)
		}
		return fmt.Errorf("read %s/%d: metadata: %w", r.topic, r.partition, err)
	}
	return nil
}

// logStart moves the read to the log's first offset, for a log that no
// longer starts at 0.
func (r *reader) logStart() error {
	start, err := r.client.GetOffset(r.topic, r.partition, sarama.OffsetOldest)
	if err != nil {
		if errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			return fmt.Errorf("read %s/%d: %w", r.topic, r.partition, ErrNoTopic)
		}
		return fmt.Errorf("read %s/%d: start offset: %w", r.topic, r.partition, err)
	}
	r.next, r.started = start, true
	return nil
}

// fetch asks the partition's leader for the batches from r.next; a
// failed fetch refreshes the metadata so a moved leader is found by the
// next read.
func (r *reader) fetch(ctx context.Context) (*sarama.FetchResponseBlock, error) {
	leader, err := r.client.Leader(r.topic, r.partition)
	if err != nil {
		return nil, fmt.Errorf("read %s/%d: leader: %w", r.topic, r.partition, err)
	}
	level := sarama.ReadUncommitted
	if r.iso == Committed {
		level = sarama.ReadCommitted
	}
	// MinBytes 0: the first fetch of an empty partition is at its end,
	// where MinBytes 1 would hold the answer for MaxWaitTime.
	req := &sarama.FetchRequest{Version: 11, MaxWaitTime: 100, MinBytes: 0, MaxBytes: maxFetchBytes, Isolation: level}
	req.AddBlock(r.topic, r.partition, r.next, maxFetchBytes, -1)
	resp, err := fetchUntil(ctx, leader, req)
	if ctx.Err() != nil && err != nil {
		return nil, fmt.Errorf("read %s/%d at offset %d: fetch from broker %d: %w", r.topic, r.partition, r.next, leader.ID(), ctx.Err())
	}
	if err != nil {
		_ = r.client.RefreshMetadata(r.topic)
		return nil, fmt.Errorf("read %s/%d at offset %d: fetch from broker %d: %w", r.topic, r.partition, r.next, leader.ID(), err)
	}
	block := resp.GetBlock(r.topic, r.partition)
	if block == nil {
		return nil, fmt.Errorf("read %s/%d at offset %d: the broker's answer does not mention the partition", r.topic, r.partition, r.next)
	}
	if errors.Is(block.Err, sarama.ErrNoError) {
		return block, nil
	}
	// An error of the partition (a leader moved or not yet aware that it
	// leads, a topic created a moment ago): read the metadata again, so
	// that the caller's next read asks the right broker. The leader's
	// UNKNOWN_TOPIC_OR_PARTITION means the topic is gone only when the
	// metadata says so too; otherwise the leader lags a create, which is
	// "not yet", not a missing topic.
	_ = r.client.RefreshMetadata(r.topic)
	if errors.Is(block.Err, sarama.ErrUnknownTopicOrPartition) {
		if _, err := r.client.Leader(r.topic, r.partition); errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			return nil, fmt.Errorf("read %s/%d at offset %d: %w: %w", r.topic, r.partition, r.next, ErrNoTopic, block.Err)
		}
	}
	return nil, fmt.Errorf("read %s/%d at offset %d: %w", r.topic, r.partition, r.next, block.Err)
}

// fetchUntil sends req to leader and returns its answer, or ctx's error
// when ctx ends first. The connection is the client's, which other work
// may share (one Kafka client for the group gate and the registry's read,
// issue 48): it is never closed here. A sarama Fetch cannot be cancelled,
// so the one ctx cut short goes on in the background and ends with its
// answer (MaxWaitTime 100 ms) or the connection's read timeout; closing
// the connection to end it at once failed the other role's requests on
// it.
func fetchUntil(ctx context.Context, leader *sarama.Broker, req *sarama.FetchRequest) (*sarama.FetchResponse, error) {
	type answer struct {
		resp *sarama.FetchResponse
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := leader.Fetch(req)
		done <- answer{resp, err}
	}()
	select {
	case a := <-done:
		return a.resp, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stable takes in what a read_committed answer says about transactions:
// the first answer's last stable offset lowers the end (an open
// transaction: stop before it, as a read_committed consumer would), and
// every answer may announce aborted transactions.
func (r *reader) stable(block *sarama.FetchResponseBlock) {
	if !r.lsoKnown && block.LastStableOffset >= 0 && block.LastStableOffset < r.end {
		r.end = block.LastStableOffset
	}
	r.lsoKnown = true
	for _, a := range block.AbortedTransactions {
		r.announced[a.ProducerID] = append(r.announced[a.ProducerID], a.FirstOffset)
	}
}

// batches hands the data records of one answer to fn and moves r.next
// past every whole batch, control batches included: that is the point of
// reading batches rather than records.
func (r *reader) batches(block *sarama.FetchResponseBlock) error {
	for _, rs := range block.RecordsSet {
		if rs == nil {
			continue
		}
		b := rs.RecordBatch
		if b == nil {
			return fmt.Errorf("read %s/%d at offset %d: the partition holds the pre-0.11 message format, which this reader does not read", r.topic, r.partition, r.next)
		}
		skip := r.iso == Committed && b.IsTransactional && r.aborted(b)
		if !b.Control && !b.PartialTrailingRecord && !skip {
			if err := r.deliver(b); err != nil {
				return err
			}
		}
		if b.PartialTrailingRecord {
			break
		}
		if last := b.FirstOffset + int64(b.LastOffsetDelta); last+1 > r.next {
			r.next = last + 1
		}
	}
	return nil
}

// aborted follows the transactions of b's producer and reports whether
// b's data records belong to an aborted one, which a read_committed
// consumer never sees. A transaction is aborted from the first offset an
// answer announced until its producer's abort marker.
func (r *reader) aborted(b *sarama.RecordBatch) bool {
	last := b.FirstOffset + int64(b.LastOffsetDelta)
	for _, first := range r.announced[b.ProducerID] {
		if first <= last {
			r.aborting[b.ProducerID] = true
		}
	}
	if !b.Control {
		return r.aborting[b.ProducerID]
	}
	// The marker ends the producer's transaction: an abort marker closes
	// an aborted one.
	if isAbortMarker(b) {
		delete(r.aborting, b.ProducerID)
		var rest []int64
		for _, first := range r.announced[b.ProducerID] {
			if first > last {
				rest = append(rest, first)
			}
		}
		r.announced[b.ProducerID] = rest
	}
	return false
}

// deliver calls fn for the records of b inside the read's range (a batch
// may start before r.next or reach past the end), with the timestamp the
// topic's timestamp type gives them.
func (r *reader) deliver(b *sarama.RecordBatch) error {
	for _, rec := range b.Records {
		off := b.FirstOffset + rec.OffsetDelta
		if off < r.next || off >= r.end {
			continue
		}
		ts := b.FirstTimestamp.Add(rec.TimestampDelta)
		if b.LogAppendTime {
			ts = b.MaxTimestamp
		}
		if err := r.fn(Record{Offset: off, Key: rec.Key, Value: rec.Value, Timestamp: ts}); err != nil {
			return err
		}
	}
	return nil
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

// constError is an error that is a constant, so that no importer can
// replace a sentinel that errors.Is compares against.
type constError string

func (e constError) Error() string { return string(e) }

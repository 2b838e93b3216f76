package kafkalog

import (
	"context"
	"fmt"

	"github.com/IBM/sarama"
)

// ReadSpan calls fn for every data record of topic's partition from
// offset from up to, not including, offset to (to < 0: the high watermark
// the first answer gives), in offset order, uncommitted, and returns the
// offset it read to: where a later ReadSpan of the records written since
// begins. A log that no longer starts at from is read from its start.
// It is ReadWith's reading from an offset of the caller's, for a reader
// that keeps its place across reads (doctor --watch reading the group's
// __consumer_offsets partition at every look) or reads a log backwards a
// span at a time.
func ReadSpan(ctx context.Context, client sarama.Client, topic string, partition int32, from, to int64, fn func(Record) error) (int64, error) {
	r := &reader{client: client, topic: topic, partition: partition, iso: Uncommitted, fn: fn, next: from, end: to, fromCaller: true,
		announced: map[int64][]int64{}, aborting: map[int64]bool{}}
	if err := r.read(ctx); err != nil {
		return from, err
	}
	// A batch may reach past a span's end: the records after it were not
	// handed over, so the next read begins at the end.
	return max(r.end, from), nil
}

// Bounds returns the first offset of topic's partition and its high
// watermark.
func Bounds(client sarama.Client, topic string, partition int32) (start, end int64, err error) {
	if start, err = client.GetOffset(topic, partition, sarama.OffsetOldest); err != nil {
		return 0, 0, fmt.Errorf("read %s/%d: start offset: %w", topic, partition, err)
	}
	if end, err = client.GetOffset(topic, partition, sarama.OffsetNewest); err != nil {
		return 0, 0, fmt.Errorf("read %s/%d: end offset: %w", topic, partition, err)
	}
	return start, end, nil
}

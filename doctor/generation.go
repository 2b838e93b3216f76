package doctor

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/kafka"
	"github.com/connect-init/connect-init/kafka/kafkalog"
)

// The exact rebalance count. DescribeGroups carries no generation, so a
// look's window counts the rebalances it happens to see (a lower bound:
// the group is not watched between looks). The group coordinator writes
// the group's generation to the group's partition of __consumer_offsets
// at every rebalance it completes (a group metadata record, groupmeta.go),
// so a watcher that may read that partition counts every rebalance: the
// generation's increments between two looks, read from where the last
// look stopped. Without that right (TOPIC_AUTHORIZATION_FAILED: reading
// __consumer_offsets takes Read on the topic, which a worker's principal
// rarely has) or with any other read error, the look counts its window,
// as before, and says so (connect_init_group_rebalances_source).

// Rebalance count sources: which count a look added to
// connect_init_group_rebalances_total.
const (
	SourceGeneration = "generation"
	SourceWindow     = "window"
)

// consumerOffsets is the topic the group coordinator writes to.
const consumerOffsets = "__consumer_offsets"

// GenerationLook is what one look added to the rebalance count, and from
// which source.
type GenerationLook struct {
	// Source is SourceGeneration when the look read the group's
	// __consumer_offsets partition, SourceWindow when it could not (Err
	// says why) and counted its window.
	Source string
	// Generation is the group's generation (Source generation): 0 when the
	// partition holds no record of the group (never formed, or deleted).
	Generation int32
	// Added is what the look adds to the rebalance count.
	Added int
	// Err says why the partition was not read.
	Err string
	// Changed is true when the source differs from the last look's (the
	// first look's included), for the watcher's log.
	Changed bool
}

// offsetsLog reads one partition of __consumer_offsets; a *sarama.Client
// reads the real one (saramaOffsetsLog), tests give a log of their own.
type offsetsLog interface {
	// Bounds are the partition's first offset and its high watermark.
	Bounds(ctx context.Context) (start, end int64, err error)
	// Read hands fn the records from offset from up to to (to < 0: the
	// high watermark) and returns the offset it read to.
	Read(ctx context.Context, from, to int64, fn func(key, value []byte)) (int64, error)
}

// GenerationTracker follows the worker group's generation across the
// watcher's looks (doctor --watch keeps one): where the last look stopped
// reading the group's partition, the generation it saw, and the
// rebalances the windows counted while the partition could not be read.
// Safe for concurrent use.
type GenerationTracker struct {
	mu sync.Mutex
	// partition is the partition followed; next the offset to read from,
	// -1 before the first read.
	partition int32
	next      int64
	gen       int32
	// windowed are the rebalances the windows added since the last read:
	// the next read adds only what they did not count, so the total
	// catches up with the generation rather than counting twice.
	windowed int
	// source is the last look's source.
	source string
}

// NewGenerationTracker is a tracker that has read nothing yet.
func NewGenerationTracker() *GenerationTracker { return &GenerationTracker{next: -1} }

// firstSpan is how far the first read looks back for the group's last
// record before doubling (the partition is compacted: the group's last
// record is kept, among the offset commits of every group of the
// partition).
const firstSpan = 256

// Observe reads the group's partition from where the last look stopped
// and returns what the look adds to the rebalance count: the generation's
// increments (none on the first read, which only finds the generation),
// or, when the read fails, window (the look's window's count).
func (t *GenerationTracker) Observe(ctx context.Context, log offsetsLog, group string, partition int32, window int) *GenerationLook {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.partition != partition {
		t.partition, t.next = partition, -1
	}
	var err error
	var added int
	if t.next < 0 {
		err = t.first(ctx, log, group)
	} else {
		added, err = t.forward(ctx, log, group)
	}
	if err != nil {
		t.windowed += window
		return t.served(&GenerationLook{Source: SourceWindow, Added: window, Err: err.Error()})
	}
	added = max(added-t.windowed, 0)
	t.windowed = 0
	return t.served(&GenerationLook{Source: SourceGeneration, Generation: t.gen, Added: added})
}

func (t *GenerationTracker) served(gl *GenerationLook) *GenerationLook {
	gl.Changed = gl.Source != t.source
	t.source = gl.Source
	return gl
}

// first finds the group's last group metadata record, reading the
// partition backwards a span at a time (each twice the last), and starts
// following it at its end.
func (t *GenerationTracker) first(ctx context.Context, log offsetsLog, group string) error {
	start, end, err := log.Bounds(ctx)
	if err != nil {
		return err
	}
	gen, found := int32(0), false
	for to, span := end, int64(firstSpan); to > start && !found; span *= 2 {
		from := max(start, to-span)
		if _, err := log.Read(ctx, from, to, func(k, v []byte) {
			if gm, ok := ourRecord(k, v, group); ok {
				gen, found = gm.Generation, true
			}
		}); err != nil {
			return err
		}
		to = from
	}
	t.gen, t.next = gen, end
	return nil
}

// forward reads the records written since the last read and returns the
// generation's increments: a tombstone (the group deleted) resets it to 0,
// and a generation below the last one counts from 0 (the group was
// deleted and formed again, the tombstone compacted away).
func (t *GenerationTracker) forward(ctx context.Context, log offsetsLog, group string) (int, error) {
	gen, added := t.gen, 0
	next, err := log.Read(ctx, t.next, -1, func(k, v []byte) {
		gm, ok := ourRecord(k, v, group)
		switch {
		case !ok:
		case gm.Generation >= gen:
			added += int(gm.Generation - gen)
			gen = gm.Generation
		default:
			added += int(gm.Generation)
			gen = gm.Generation
		}
	})
	if err != nil {
		return 0, err
	}
	t.gen, t.next = gen, next
	return added, nil
}

// ourRecord decodes a record of the partition when it is the group's
// metadata; a tombstone reads as generation 0. A record that does not
// decode is skipped: one unreadable record must not stop the count.
func ourRecord(key, value []byte, group string) (GroupMetadata, bool) {
	g, ok, err := groupMetadataKey(key)
	if err != nil || !ok || g != group {
		return GroupMetadata{}, false
	}
	gm, err := DecodeGroupMetadata(key, value)
	return gm, err == nil
}

// saramaOffsetsLog is the group's partition of the real __consumer_offsets.
type saramaOffsetsLog struct {
	client    sarama.Client
	partition int32
}

func (l saramaOffsetsLog) Bounds(ctx context.Context) (int64, int64, error) {
	start, end, err := kafkalog.Bounds(l.client, consumerOffsets, l.partition)
	return start, end, explainRead(err)
}

func (l saramaOffsetsLog) Read(ctx context.Context, from, to int64, fn func(key, value []byte)) (int64, error) {
	next, err := kafkalog.ReadSpan(ctx, l.client, consumerOffsets, l.partition, from, to, func(r kafkalog.Record) error {
		fn(r.Key, r.Value)
		return nil
	})
	return next, explainRead(err)
}

// explainRead names the right a refused read lacks.
func explainRead(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sarama.ErrTopicAuthorizationFailed):
		return fmt.Errorf("%w (the watcher's principal may not read __consumer_offsets: grant it Read and Describe on the topic __consumer_offsets for the exact count)", err)
	}
	return errors.New(kafka.ExplainConnError(err))
}

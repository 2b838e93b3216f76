package lock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// saramaLog is the recordLog over the Kafka lock topic: a partition
// consumer from the oldest offset and an idempotent async producer, each on
// a client of its own (with Net.MaxOpenRequests=1 a shared connection would
// queue every heartbeat behind the consumer's long-polling fetch).
type saramaLog struct {
	topic    string
	client   sarama.Client
	consumer sarama.Consumer
	pc       sarama.PartitionConsumer
	pclient  sarama.Client
	producer sarama.AsyncProducer
	// producerClosed is set by Close and Abandon, which close the producer
	// themselves; only the session's goroutine touches it.
	producerClosed bool

	records  chan rawRecord
	errs     chan error
	failures chan appendFailure
	stop     chan struct{} // closed by closeAll: read stops forwarding
}

// openSaramaLog connects to the lock topic, checks its layout and starts
// reading it from the start.
func openSaramaLog(brokers []string, cfg *sarama.Config, topic string) (log *saramaLog, b logBounds, err error) {
	s := &saramaLog{topic: topic, errs: make(chan error, 16), failures: make(chan appendFailure, 64), records: make(chan rawRecord), stop: make(chan struct{})}
	defer func() {
		if err != nil {
			s.closeAll()
		}
	}()
	if s.client, err = sarama.NewClient(brokers, cfg); err != nil {
		return nil, b, fmt.Errorf("lock: connecting to %v: %w", brokers, err)
	}
	if err = checkPartitions(s.client, topic); err != nil {
		return nil, b, err
	}
	if b.start, b.end, err = bounds(s.client, topic); err != nil {
		return nil, b, err
	}
	if s.consumer, err = sarama.NewConsumerFromClient(s.client); err != nil {
		return nil, b, fmt.Errorf("lock: creating consumer for %q: %w", topic, err)
	}
	if s.pc, err = s.consumer.ConsumePartition(topic, 0, sarama.OffsetOldest); err != nil {
		return nil, b, fmt.Errorf("lock: consuming %q: %w", topic, err)
	}
	if s.pclient, err = sarama.NewClient(brokers, cfg); err != nil {
		return nil, b, fmt.Errorf("lock: connecting to %v: %w", brokers, err)
	}
	if s.producer, err = sarama.NewAsyncProducerFromClient(s.pclient); err != nil {
		return nil, b, fmt.Errorf("lock: creating producer for %q: %w", topic, err)
	}
	go s.read()
	go s.drain(s.producer.Successes(), s.producer.Errors())
	return s, b, nil
}

// read converts consumer messages and errors.
func (s *saramaLog) read() {
	msgs, errs := s.pc.Messages(), s.pc.Errors()
	defer close(s.records)
	for msgs != nil {
		select {
		case m, ok := <-msgs:
			if !ok {
				return
			}
			select {
			case s.records <- rawRecord{Offset: m.Offset, Timestamp: m.Timestamp, Key: m.Key, Value: m.Value}:
			case <-s.stop:
				return
			}
		case e, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			select {
			case s.errs <- e:
			default:
			}
		}
	}
}

// drain consumes the producer's result channels so that it never blocks,
// and forwards failures.
func (s *saramaLog) drain(successes <-chan *sarama.ProducerMessage, errs <-chan *sarama.ProducerError) {
	for successes != nil || errs != nil {
		select {
		case _, ok := <-successes:
			if !ok {
				successes = nil
			}
		case e, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			seq, _ := e.Msg.Metadata.(uint64)
			select {
			case s.failures <- appendFailure{seq: seq, err: e.Err}:
			default:
			}
		}
	}
}

func (s *saramaLog) Records() <-chan rawRecord      { return s.records }
func (s *saramaLog) ReadErrors() <-chan error       { return s.errs }
func (s *saramaLog) Failures() <-chan appendFailure { return s.failures }
func (s *saramaLog) Pending() int                   { return len(s.pc.Messages()) }

func (s *saramaLog) Append(key, value []byte, ts time.Time, seq uint64) {
	msg := &sarama.ProducerMessage{Topic: s.topic, Partition: 0, Key: sarama.ByteEncoder(key), Timestamp: ts, Metadata: seq}
	if value != nil {
		msg.Value = sarama.ByteEncoder(value)
	}
	s.producer.Input() <- msg
}

func (s *saramaLog) Close(timeout time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- s.producer.Close() }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var err error
	select {
	case err = <-done:
	case <-t.C:
		err = fmt.Errorf("flushing writes to %q took longer than %v", s.topic, timeout)
	}
	s.producerClosed = true
	s.closeAll()
	return err
}

func (s *saramaLog) Abandon() {
	s.producer.AsyncClose()
	s.producerClosed = true
	s.closeAll()
}

// closeAll stops the partition consumer without waiting out its
// long-polling fetch (closing the client ends it), then closes the rest.
func (s *saramaLog) closeAll() {
	close(s.stop)
	if s.producer != nil && !s.producerClosed {
		_ = s.producer.Close()
	}
	if s.pclient != nil {
		_ = s.pclient.Close()
	}
	if s.pc != nil {
		s.pc.AsyncClose()
	}
	if s.consumer != nil {
		_ = s.consumer.Close()
	}
	if s.client != nil {
		_ = s.client.Close()
	}
}

// readTopic reads the lock topic once, from its start to the end offset it
// has when called, and returns the records; it is what Queue needs.
func readTopic(ctx context.Context, brokers []string, cfg *sarama.Config, topic string, onErr func(error)) ([]rawRecord, error) {
	client, err := sarama.NewClient(brokers, cfg)
	if err != nil {
		return nil, fmt.Errorf("lock: connecting to %v: %w", brokers, err)
	}
	defer func() { _ = client.Close() }()
	if err := checkPartitions(client, topic); err != nil {
		return nil, err
	}
	oldest, newest, err := bounds(client, topic)
	if err != nil || newest <= oldest {
		return nil, err
	}
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return nil, fmt.Errorf("lock: creating consumer for %q: %w", topic, err)
	}
	defer func() { _ = consumer.Close() }()
	pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		return nil, fmt.Errorf("lock: consuming %q: %w", topic, err)
	}
	defer pc.AsyncClose() // the client's Close ends its fetch
	var out []rawRecord
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lock: reading %q up to offset %d: %w", topic, newest, ctx.Err())
		case err := <-pc.Errors():
			onErr(err)
		case msg, ok := <-pc.Messages():
			if !ok {
				return nil, fmt.Errorf("lock: consumer of %q stopped", topic)
			}
			out = append(out, rawRecord{Offset: msg.Offset, Timestamp: msg.Timestamp, Key: msg.Key, Value: msg.Value})
			if msg.Offset+1 >= newest {
				return out, nil
			}
		}
	}
}

// producerConfig copies base and sets what the protocol relies on.
func producerConfig(base *sarama.Config) *sarama.Config {
	if base == nil {
		base = sarama.NewConfig()
	}
	c := *base
	c.Version = sarama.MaxVersion
	c.ApiVersionsRequest = true
	c.Metadata.AllowAutoTopicCreation = false
	c.Metadata.Retry.Max = max(c.Metadata.Retry.Max, 10) // a broker may not know a just-created topic yet
	// Ordered, exactly-once appends: a retried heartbeat or claim can
	// neither be duplicated nor overtake the write after it.
	c.Producer.Idempotent = true
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Net.MaxOpenRequests = 1
	if c.Producer.Retry.Max < 10 {
		c.Producer.Retry.Max = 10
	}
	c.Producer.Return.Successes = true
	c.Producer.Return.Errors = true
	c.Producer.Partitioner = sarama.NewManualPartitioner
	c.Consumer.Return.Errors = true
	// Follow a new partition leader promptly: after a fetch error sarama's
	// partition consumer waits Consumer.Retry.Backoff (2 s by default),
	// refreshes the metadata and picks the leader again; while the old
	// leader is dead and not yet replaced every such try fails, so the
	// backoff is added to the cluster's own failover once more. A
	// quarter-second costs a metadata request four times a second during a
	// failover.
	if c.Consumer.Retry.Backoff > 250*time.Millisecond || c.Consumer.Retry.Backoff == 0 {
		c.Consumer.Retry.Backoff = 250 * time.Millisecond
	}
	c.Consumer.IsolationLevel = sarama.ReadUncommitted
	return &c
}

// errLayout marks a lock topic that is missing or of the wrong layout:
// waiting cannot fix it (EnsureTopic, which runs first, waits until every
// broker knows a topic it creates).
const errLayout = constError("lock: wrong topic layout")

// checkPartitions fails fast, with the fix in the message, when the lock
// topic is missing or has the wrong layout.
func checkPartitions(client sarama.Client, topic string) error {
	parts, err := client.Partitions(topic)
	if errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
		return fmt.Errorf("%w: topic %q does not exist; create it first (EnsureTopic): %w", errLayout, topic, err)
	}
	if err != nil {
		return fmt.Errorf("lock: reading metadata of %q: %w", topic, err)
	}
	if len(parts) != 1 {
		return fmt.Errorf("%w: topic %q has %d partitions, the lock needs exactly 1", errLayout, topic, len(parts))
	}
	return nil
}

func bounds(client sarama.Client, topic string) (oldest, newest int64, err error) {
	if oldest, err = client.GetOffset(topic, 0, sarama.OffsetOldest); err != nil {
		return 0, 0, fmt.Errorf("lock: reading the start offset of %q: %w", topic, err)
	}
	if newest, err = client.GetOffset(topic, 0, sarama.OffsetNewest); err != nil {
		return 0, 0, fmt.Errorf("lock: reading the end offset of %q: %w", topic, err)
	}
	return oldest, newest, nil
}

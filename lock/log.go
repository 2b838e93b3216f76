package lock

import "time"

// recordLog is the lock topic as a session sees it. The session speaks only
// to this interface, so that the protocol (handle, evaluate, end) can be
// tested against an in-memory log without a broker, fake or real;
// saramaLog is the implementation over Kafka.
type recordLog interface {
	// Records delivers the topic's records from the start, in offset
	// order, with broker timestamps. It is closed when the log stops
	// reading for good.
	Records() <-chan rawRecord
	// ReadErrors delivers read errors that the log retries by itself.
	ReadErrors() <-chan error
	// Failures delivers the appends the log gave up on.
	Failures() <-chan appendFailure
	// Append writes one record without waiting (value nil: a tombstone);
	// seq identifies it in Failures. ts is the writer's clock, which a
	// LogAppendTime topic replaces with the broker's.
	Append(key, value []byte, ts time.Time, seq uint64)
	// Pending is how many records were read but not yet delivered.
	Pending() int
	// Close flushes the appends in flight, waiting at most timeout, and
	// stops reading.
	Close(timeout time.Duration) error
	// Abandon stops at once without flushing, as a killed process would
	// (tests only).
	Abandon()
}

// appendFailure is an append that the log gave up on.
type appendFailure struct {
	seq uint64
	err error
}

// logBounds are the log's offsets when a session opened it: the session
// replays records up to end before it writes its request.
type logBounds struct {
	start, end int64
}

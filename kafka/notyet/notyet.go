// Package notyet is the one list of the Kafka answers that mean "not yet":
// the cluster is still creating or moving something (a topic just created
// and unknown to a broker whose metadata lags, a leader being elected, a
// coordinator loading, the controller moving), and waiting can change the
// answer. Every other Kafka error code is final. The steps, doctor and
// repair all ask this package (through kafka.NotYet where they also need
// to know which connection failures are for good), so that none of them
// treats a cluster at work as a broken one, and none waits out its
// timeout on an answer that cannot change. It is a leaf, so that repair
// and the lock, which import nothing of the gates, use the same list.
package notyet

import (
	"context"
	"errors"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Code reports whether a Kafka error code means "not yet". It is when
// Kafka's own clients retry it (its exception extends RetriableException,
// which franz-go's kerr records per code as Retriable):
// UNKNOWN_TOPIC_OR_PARTITION (a topic just created is unknown to a broker
// whose metadata lags; so is __consumer_offsets right after the first
// FindCoordinator made the cluster create it), LEADER_NOT_AVAILABLE and
// NOT_LEADER_OR_FOLLOWER (a leader being elected or moved),
// COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE and
// NOT_COORDINATOR (a coordinator loading or moving), NOT_CONTROLLER (the
// controller moved), REQUEST_TIMED_OUT, REPLICA_NOT_AVAILABLE,
// NOT_ENOUGH_REPLICAS, KAFKA_STORAGE_ERROR, THROTTLING_QUOTA_EXCEEDED and
// the rest of that class. These codes differ from Kafka's list:
// REBALANCE_IN_PROGRESS is "not yet" too (a group moving);
// OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID and
// INVALID_PRODUCER_EPOCH are "not yet" too: they speak of an idempotent
// producer's own sequence state, which a leader change or an expired
// producer id can make the broker forget, not of the topic, and the next
// write (the startup lock's is one poll later) starts afresh;
// UNKNOWN_SERVER_ERROR and INVALID_REQUEST are "not yet" too: a broker
// answers them for an exception of its own it has no code for (a broker
// restarting, a log directory failing over, a request racing a metadata
// change), which the next look usually does not meet; the step's timeout
// bounds the wait, and its message shows the last answer. As final
// answers they stopped the startup lock, and the worker, on a broker's
// hiccup that the lock had retried before (issue 48). And
// CORRUPT_MESSAGE is final (no read of ours heals it by waiting). Every
// other code is final: authorization failures, an invalid configuration,
// replication factor or partition count, a policy violation, an existing
// topic, an unsupported version. ErrNoError is neither: Code is false.
func Code(code sarama.KError) bool {
	switch code {
	case sarama.ErrNoError:
		return false
	case sarama.ErrRebalanceInProgress, sarama.ErrOutOfOrderSequenceNumber, sarama.ErrUnknownProducerID, sarama.ErrInvalidProducerEpoch:
		return true
	case sarama.ErrUnknown, sarama.ErrInvalidRequest:
		return true
	case sarama.ErrInvalidMessage: // CORRUPT_MESSAGE
		return false
	}
	return kerr.IsRetriable(kerr.ErrorForCode(int16(code)))
}

// Is reports whether err means "not yet". An error that carries a Kafka
// code (anywhere in its chain) is judged by Code. Without one it is a
// failure to talk: final for ctx's own end (the caller's deadline, not
// the cluster's answer) and for a closed client; any other (a broker
// restarting, a connection reset, "run out of available brokers") is not
// yet. Which connection failures are for good (wrong credentials,
// truststore) only package kafka knows: use kafka.NotYet where a
// connection may be refused for our settings.
func Is(err error) bool {
	if err == nil {
		return false
	}
	var code sarama.KError
	if errors.As(err, &code) {
		return Code(code)
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.Is(err, sarama.ErrClosedClient):
		return false
	}
	return true
}

package notyet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/IBM/sarama"
)

// The answers of a cluster that is creating or moving something are "not
// yet"; those waiting cannot change are final.
func TestCode(t *testing.T) {
	cases := []struct {
		code sarama.KError
		want bool
		why  string
	}{
		{sarama.ErrNoError, false, "no error is no answer to wait on"},
		{sarama.ErrUnknownTopicOrPartition, true, "a topic just created, unknown to a broker whose metadata lags"},
		{sarama.ErrLeaderNotAvailable, true, "a leader being elected"},
		{sarama.ErrNotLeaderForPartition, true, "NOT_LEADER_OR_FOLLOWER: a leader moved"},
		{sarama.ErrOffsetsLoadInProgress, true, "COORDINATOR_LOAD_IN_PROGRESS"},
		{sarama.ErrConsumerCoordinatorNotAvailable, true, "COORDINATOR_NOT_AVAILABLE"},
		{sarama.ErrNotCoordinatorForConsumer, true, "NOT_COORDINATOR: the coordinator moved"},
		{sarama.ErrNotController, true, "NOT_CONTROLLER: the controller moved"},
		{sarama.ErrRequestTimedOut, true, "a busy controller"},
		{sarama.ErrReplicaNotAvailable, true, "a replica catching up"},
		{sarama.ErrNotEnoughReplicas, true, "ISR below min.insync.replicas for now"},
		{sarama.ErrRebalanceInProgress, true, "a group moving (not retriable in Kafka's list, not yet here)"},
		{sarama.ErrOutOfOrderSequenceNumber, true, "an idempotent producer's sequence the broker lost after a leader change: the next write starts afresh"},
		{sarama.ErrUnknownProducerID, true, "an expired producer id: the next write starts afresh"},
		{sarama.ErrInvalidProducerEpoch, true, "a fenced producer epoch: the next write starts afresh"},
		{sarama.ErrUnknown, true, "UNKNOWN_SERVER_ERROR: a broker's hiccup it has no code for; the step's timeout bounds the wait (issue 48)"},
		{sarama.ErrInvalidRequest, true, "INVALID_REQUEST: answered for a request racing a change on the broker; the timeout bounds it (issue 48)"},
		{sarama.ErrTopicAuthorizationFailed, false, "an ACL does not change by waiting"},
		{sarama.ErrGroupAuthorizationFailed, false, "an ACL"},
		{sarama.ErrClusterAuthorizationFailed, false, "an ACL"},
		{sarama.ErrInvalidReplicationFactor, false, "a bad setting"},
		{sarama.ErrInvalidConfig, false, "a bad setting"},
		{sarama.ErrPolicyViolation, false, "a broker policy"},
		{sarama.ErrTopicAlreadyExists, false, "a fact"},
		{sarama.ErrInvalidGroupId, false, "a bad group.id"},
		{sarama.ErrUnsupportedVersion, false, "the broker's version"},
		{sarama.ErrInvalidMessage, false, "CORRUPT_MESSAGE: retriable in Kafka's list, final here"},
	}
	for _, c := range cases {
		if got := Code(c.code); got != c.want {
			t.Errorf("Code(%d %v) = %v, want %v: %s", int16(c.code), c.code, got, c.want, c.why)
		}
	}
}

func TestIs(t *testing.T) {
	msg := "denied"
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"a bare code", sarama.ErrLeaderNotAvailable, true},
		{"a wrapped code", fmt.Errorf("describe __consumer_offsets: %w", sarama.ErrUnknownTopicOrPartition), true},
		{"a wrapped final code", fmt.Errorf("describe: %w", sarama.ErrTopicAuthorizationFailed), false},
		{"CreateTopics' TopicError", &sarama.TopicError{Err: sarama.ErrNotController}, true},
		{"CreateTopics' final TopicError", &sarama.TopicError{Err: sarama.ErrInvalidConfig, ErrMsg: &msg}, false},
		{"run out of brokers, wrapping a code", sarama.Wrap(sarama.ErrOutOfBrokers, sarama.ErrNotController), true},
		{"run out of brokers", sarama.ErrOutOfBrokers, true},
		{"connection refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"EOF", io.EOF, true},
		{"the caller's deadline", context.DeadlineExceeded, false},
		{"the caller's cancel", fmt.Errorf("x: %w", context.Canceled), false},
		{"a closed client", sarama.ErrClosedClient, false},
		{"an error of no kind", errors.New("something"), true},
	}
	for _, c := range cases {
		if got := Is(c.err); got != c.want {
			t.Errorf("%s: Is(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

package kafka

import (
	"errors"
	"fmt"
	"testing"

	"github.com/IBM/sarama"
)

// kafka.NotYet adds what only this package knows: a connection refused for
// our settings is final, whatever else it looks like.
func TestNotYet(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"__consumer_offsets just created", fmt.Errorf("describe: %w", sarama.ErrUnknownTopicOrPartition), true},
		{"a coordinator loading", sarama.ErrOffsetsLoadInProgress, true},
		{"an ACL", sarama.ErrGroupAuthorizationFailed, false},
		{"SASL refused", sarama.ErrSASLAuthenticationFailed, false},
		{"a TLS failure", errors.New("tls: failed to verify certificate: x509: certificate signed by unknown authority"), false},
		{"a broker restarting", errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: read: connection reset by peer"), true},
	}
	for _, c := range cases {
		if got := NotYet(c.err); got != c.want {
			t.Errorf("%s: NotYet(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
	if CodeNotYet(sarama.ErrNotController) != true || CodeNotYet(sarama.ErrInvalidConfig) != false {
		t.Error("CodeNotYet disagrees with notyet.Code")
	}
}

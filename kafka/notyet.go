package kafka

import (
	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/kafka/notyet"
)

// NotYet reports whether err is an answer of a cluster that is still
// creating or moving something, one that waiting can change: "look
// again" (package notyet has the list of codes and why). A connection
// refused for our settings (IsPermanentConnError: wrong credentials,
// truststore, SASL mechanism) is final, whatever it wraps.
func NotYet(err error) bool {
	return notyet.Is(err) && !IsPermanentConnError(err)
}

// CodeNotYet is NotYet for one Kafka error code (notyet.Code).
func CodeNotYet(code sarama.KError) bool { return notyet.Code(code) }

// Package proto decodes and encodes the group protocol that Apache
// Kafka Connect workers speak inside their worker group (JoinGroup member
// metadata and SyncGroup assignments), and judges a snapshot of the group for
// members that cannot belong to our Connect cluster.
//
// Why this exists: DescribeGroups returns each member's raw protocol bytes.
// sarama only decodes the "consumer" protocol, and the first incident (an
// endless "Current config state offset ... does not match group assignment"
// loop) can only be diagnosed by reading what each Connect member reports:
// its advertised REST URL, the config-topic offset it has read, and the
// assignment the leader handed out.
//
// # Wire format
//
// The formats follow Apache Kafka's sources (connect/runtime, package
// org.apache.kafka.connect.runtime.distributed: ConnectProtocol,
// IncrementalCooperativeConnectProtocol, ExtendedAssignment,
// ConnectProtocolCompatibility; checked against apache/kafka commit
// 1eb7644349cb07139d6a3c1ad1986979647cac99). All integers are big-endian.
// A STRING is an INT16 byte length (never negative) and that many UTF-8
// bytes; an ARRAY is an INT32 element count; NULLABLE_BYTES is an INT32
// length, any negative length meaning null.
//
// Member metadata (JoinGroup), all protocol versions:
//
//	Version      INT16   0 for "default", 1 for "compatible", 2 for "sessioned"
//	Url          STRING  the worker's advertised REST URL
//	ConfigOffset INT64   see "Config offsets" below
//	Allocation   NULLABLE_BYTES, only written from v1 on: the worker's current
//	             assignment, itself a complete versioned assignment (below);
//	             null when the worker has none
//
// Assignment (SyncGroup), all protocol versions:
//
//	Version      INT16
//	Error        INT16   0 no error, 1 CONFIG_MISMATCH (the leader could not
//	             read the config topic up to the offset some member reported)
//	Leader       STRING  the leader's group member id
//	LeaderUrl    STRING  the leader's advertised REST URL
//	ConfigOffset INT64   the config offset the assignment was computed at
//	Assignment   ARRAY of {Connector STRING; Tasks ARRAY of INT32}, nullable from v1
//	Revoked      same layout, only written from v1 on
//	Delay        INT32   scheduled rebalance delay in ms, only written from v1 on
//
// A task number of -1 ([ConnectorTask]) in a connector entry means "the
// connector instance itself".
//
// Decoding mirrors what a running worker does, not the version number: the
// worker's assignors and WorkerCoordinator decode every version, including
// v0, with the v1 schemas, whose trailing fields (Allocation; Assignment,
// Revoked, Delay) are optional and take their defaults (null, null, null, 0)
// when the buffer ends before them. Versions above 2 are accepted and parsed
// as v1 (as Kafka does); negative versions are rejected. Bytes after the last
// field are ignored, as Kafka ignores them.
//
// # Config offsets
//
// The ConfigOffset a worker reports is KafkaConfigBackingStore's "offset":
// -1 until the worker has consumed any record of its config topic, otherwise
// the offset of the last record it consumed plus one (Kafka's comment: "return
// the offset of the *next record*, not the last one consumed", i.e. the
// consumer position). A worker that has read every record of a topic whose
// last record has offset N-1 therefore reports N, the topic's end offset; a
// worker on an empty config topic reports -1, not 0. Transaction markers (the
// config topic is written transactionally when exactly-once source support is
// enabled) occupy offsets but are never consumed, so a fully caught-up worker
// can report less than the end offset, never more. Hence a reported offset
// greater than our config topic's end offset is one our workers can never
// reach.
package proto

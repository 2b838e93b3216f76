package proto

import "strings"

// ProtocolType is the group protocol type every Connect worker declares in
// JoinGroup (WorkerCoordinator.protocolType). A member of the worker group
// with any other type is not a Connect worker (typically a consumer that was
// given the same group.id).
const ProtocolType = "connect"

// Group protocol names, as chosen by the worker's connect.protocol setting
// (ConnectProtocolCompatibility). The group coordinator picks the one all
// members support; DescribeGroups reports it as the group's protocol.
const (
	// ProtocolEager is the eager (stop-the-world) protocol, version 0.
	ProtocolEager = "default"
	// ProtocolCompatible is incremental cooperative rebalancing, version 1.
	ProtocolCompatible = "compatible"
	// ProtocolSessioned is incremental cooperative rebalancing with internal
	// REST request signing (KIP-507), version 2; the wire format equals v1.
	ProtocolSessioned = "sessioned"
)

// Protocol versions carried in the first two bytes of every metadata and
// assignment.
const (
	// VersionEager is the version written under [ProtocolEager].
	VersionEager int16 = 0
	// VersionCompatible is the version written under [ProtocolCompatible].
	VersionCompatible int16 = 1
	// VersionSessioned is the version written under [ProtocolSessioned].
	VersionSessioned int16 = 2
)

// Assignment error codes (ConnectProtocol.Assignment).
const (
	// AssignmentNoError marks a usable assignment.
	AssignmentNoError int16 = 0
	// AssignmentConfigMismatch means the leader could not read its config
	// topic up to the highest offset a member reported, so it handed out an
	// empty assignment and every member must catch up and rejoin. A leader
	// that reads a different config topic than a member that reported a
	// higher offset produces this forever.
	AssignmentConfigMismatch int16 = 1
)

// ConnectorTask is the task number that, inside a connector entry of an
// assignment, stands for the connector instance itself rather than a task.
const ConnectorTask int32 = -1

// ProtocolVersion returns the protocol version that Connect writes under the
// given group protocol name. Like Kafka's ConnectProtocolCompatibility, the
// name is matched case-insensitively. ok is false for names Connect does not
// define.
func ProtocolVersion(name string) (version int16, ok bool) {
	switch strings.ToLower(name) {
	case ProtocolEager:
		return VersionEager, true
	case ProtocolCompatible:
		return VersionCompatible, true
	case ProtocolSessioned:
		return VersionSessioned, true
	}
	return 0, false
}

// ProtocolName returns the group protocol name for a protocol version; ok is
// false for versions Connect does not define (it would still parse such
// bytes as v1, and so does this package).
func ProtocolName(version int16) (name string, ok bool) {
	switch version {
	case VersionEager:
		return ProtocolEager, true
	case VersionCompatible:
		return ProtocolCompatible, true
	case VersionSessioned:
		return ProtocolSessioned, true
	}
	return "", false
}

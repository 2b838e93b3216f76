package doctor

// Severity ranks a finding. Only error-severity findings make doctor exit 1:
// they are states in which `connect-init run` refuses to start the worker
// or in which Connect cannot work. Warnings are risks or things doctor
// cannot judge from where it runs; infos are context.
type Severity string

// Severities, from the most to the least severe.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// Finding ids. They are stable: scripts and alerting may match on them, so
// an id is never renamed or reused for a different condition.
const (
	// Brokers.
	IDBrokerUnreachable         = "broker-unreachable"
	IDBrokerCountBelowExpected  = "broker-count-below-expected"
	IDControllerUnknown         = "controller-unknown"
	IDInternalTopicMissing      = "internal-topic-missing"
	IDConfigTopicPartitions     = "config-topic-partitions"
	IDTopicNotCompacted         = "topic-not-compacted"
	IDTopicUnderReplicated      = "topic-under-replicated"
	IDTopicReplicationBelowConf = "topic-replication-below-configured"
	IDTopicMinISRTooHigh        = "topic-min-insync-too-high"
	IDConsumerOffsetsMissing    = "consumer-offsets-missing"
	IDConsumerOffsetsSingle     = "consumer-offsets-single-replica"
	IDCoordinatorNotAvailable   = "coordinator-not-available"
	IDForeignGroupMember        = "foreign-group-member"
	IDGroupRegisteredElsewhere  = "group-registered-to-another-cluster"
	IDUnverifiedGroupMember     = "unverified-group-member"
	IDMemberConfigOffsetBehind  = "member-config-offset-behind"
	IDAssignmentConfigMismatch  = "assignment-config-mismatch"
	IDDuplicateAdvertisedURL    = "duplicate-advertised-url"
	IDAdvertisedURLUnresolvable = "advertised-url-unresolvable"
	IDAdvertisedURLUnreachable  = "advertised-url-unreachable"
	IDConfigTopicOpenTxn        = "config-topic-open-transaction"
	IDGroupNotStable            = "group-not-stable"
	IDGroupEmpty                = "group-empty"
	IDCheckFailed               = "check-failed"
)

// Finding is one thing doctor found, with what it saw and what to do.
type Finding struct {
	// ID is one of the stable ids above.
	ID string `json:"id"`
	// Severity is error, warning or info.
	Severity Severity `json:"severity"`
	// Subject names the thing concerned: a broker ("broker 2"), a topic
	// name, a group member id, an advertised URL, the group id.
	Subject string `json:"subject"`
	// Summary is one line saying what is wrong.
	Summary string `json:"summary"`
	// Evidence is what doctor saw, with the numbers.
	Evidence string `json:"evidence"`
	// Fix is what to do about it.
	Fix string `json:"fix"`
}

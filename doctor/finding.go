package doctor

import "github.com/connect-init/connect-init/checks"

// Severity ranks a finding. Only error-severity findings make doctor exit 1:
// they are states in which `connect-init run` refuses to start the worker
// or in which Connect cannot work. Warnings are risks or things doctor
// cannot judge from where it runs; infos are context. It is the checks'
// severity: the gates and doctor rank by the same scale.
type Severity = checks.Severity

// Severities, from the most to the least severe.
const (
	SeverityError   = checks.Error
	SeverityWarning = checks.Warning
	SeverityInfo    = checks.Info
)

// Finding ids. They are stable: scripts and alerting may match on them, so
// an id is never renamed or reused for a different condition.
const (
	// Brokers.
	IDBrokerUnreachable         = "broker-unreachable"
	IDBrokerCountBelowExpected  = "broker-count-below-expected"
	IDControllerUnknown         = "controller-unknown"
	IDBrokerNotLive             = "broker-not-live"
	IDInternalTopicMissing      = checks.IDInternalTopicMissing
	IDTopicConfigsUnreadable    = checks.IDTopicConfigsUnreadable
	IDConfigTopicPartitions     = checks.IDConfigTopicPartitions
	IDTopicNotCompacted         = checks.IDTopicNotCompacted
	IDTopicUnderReplicated      = checks.IDTopicUnderReplicated
	IDTopicReplicationBelowConf = checks.IDTopicReplicationBelowConf
	IDTopicMinISRTooHigh        = checks.IDTopicMinISRTooHigh
	IDConsumerOffsetsMissing    = checks.IDConsumerOffsetsMissing
	IDConsumerOffsetsSingle     = checks.IDConsumerOffsetsSingle
	IDCoordinatorNotAvailable   = checks.IDCoordinatorNotAvailable
	IDForeignGroupMember        = checks.IDForeignGroupMember
	IDGroupRegisteredElsewhere  = checks.IDGroupRegisteredElsewhere
	IDUnverifiedGroupMember     = checks.IDUnverifiedGroupMember
	IDMemberConfigOffsetBehind  = "member-config-offset-behind"
	IDAssignmentConfigMismatch  = "assignment-config-mismatch"
	IDDuplicateAdvertisedURL    = "duplicate-advertised-url"
	IDAdvertisedURLUnresolvable = "advertised-url-unresolvable"
	IDAdvertisedURLUnreachable  = "advertised-url-unreachable"
	IDConfigTopicOpenTxn        = "config-topic-open-transaction"
	IDGroupNotStable            = checks.IDGroupNotStable
	IDGroupEmpty                = checks.IDGroupEmpty
	IDRegistryUnreadable        = checks.IDRegistryUnreadable
	IDCheckFailed               = "check-failed"
)

// Finding is one thing doctor found, with what it saw and what to do:
// ID (stable, above), Severity, Subject (a broker, a topic, a member id, a
// URL, the group id), Summary, Evidence and Fix. It is a check result, so
// the topic and coordinator findings are the gates' own results.
type Finding = checks.Result

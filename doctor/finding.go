package doctor

// Finding ids of doctor's own checks (the gates' rules have theirs in
// package checks). They are stable: scripts and alerting may match on them, so
// an id is never renamed or reused for a different condition.
const (
	// Brokers.
	IDBrokerUnreachable         = "broker-unreachable"
	IDBrokerCountBelowExpected  = "broker-count-below-expected"
	IDControllerUnknown         = "controller-unknown"
	IDControllerQuorumLost      = "controller-quorum-lost"
	IDBrokerNotLive             = "broker-not-live"
	IDMemberConfigOffsetBehind  = "member-config-offset-behind"
	IDAssignmentConfigMismatch  = "assignment-config-mismatch"
	IDDuplicateAdvertisedURL    = "duplicate-advertised-url"
	IDAdvertisedURLUnresolvable = "advertised-url-unresolvable"
	IDAdvertisedURLUnreachable  = "advertised-url-unreachable"
	IDConfigTopicOpenTxn        = "config-topic-open-transaction"
	IDCheckFailed               = "check-failed"
	// REST API.
	IDRESTCredentialsRefused = "rest-credentials-refused"
)

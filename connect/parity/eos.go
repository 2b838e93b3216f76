package parity

import (
	"fmt"
	"strings"

	"github.com/connect-init/connect-init/checks"
)

// Ids of the exactly-once readiness checks.
const (
	// IDTxnStateCannotBeCreated: __transaction_state does not exist and
	// the cluster has fewer brokers than its replication factor.
	IDTxnStateCannotBeCreated = "eos-transaction-state-cannot-be-created"
	// IDTxnStateBelowMinISR: a partition of __transaction_state has fewer
	// in-sync replicas than its min.insync.replicas.
	IDTxnStateBelowMinISR = "eos-transaction-state-below-min-isr"
	// IDConfigTopicTxnHanging: a transaction on the config topic stayed
	// open over the look's window.
	IDConfigTopicTxnHanging = "eos-config-topic-transaction-hanging"
	// IDTxnIDNotAuthorized: the worker's principal may not Write (or
	// Describe) the leader's TransactionalId connect-cluster-<group>.
	IDTxnIDNotAuthorized = "eos-transactional-id-not-authorized"
	// IDTxnIDUnchecked: the transactional id's ACLs could not be judged
	// (the principal cannot be told, the ACLs cannot be read, or no ACL
	// names the id and the broker's default decides).
	IDTxnIDUnchecked = "eos-transactional-id-unchecked"
)

// TxnStateTopic is the broker's transaction log.
const TxnStateTopic = "__transaction_state"

// EOS is what the exactly-once readiness rules judge, read when this
// worker's exactly.once.source.support is preparing or enabled (with it,
// the leader writes the config topic through a transactional producer,
// DistributedHerder; Kafka's KIP-618).
type EOS struct {
	GroupID, Support string
	// Exists says whether __transaction_state exists; Brokers are the
	// live brokers and ReplicationFactor the brokers'
	// transaction.state.log.replication.factor (default 3, which the
	// coordinator needs that many brokers to create it with).
	Exists            bool
	Brokers           int
	ReplicationFactor int
	// MinISR is the topic's min.insync.replicas
	// (transaction.state.log.min.isr, default 2); BelowMinISR its
	// partitions with fewer in-sync replicas.
	MinISR      int
	BelowMinISR []int32
	// ConfigTopic, and whether a transaction on it stayed open (its last
	// stable offset below its high watermark) from the first look to the
	// second (Window later); HangingAt is that last stable offset.
	ConfigTopic string
	Hanging     bool
	HangingAt   int64
	Window      string
	// TxnID is the leader's transactional id (TransactionalID), and
	// Principal the worker's ("User:alice"). Access is the judgement of
	// the principal's ACLs on it (nil when not judged: no authorizer, or
	// Unchecked says why). Bootstrap is for the kafka-acls line.
	TxnID     string
	Principal string
	Access    *TxnAccess
	Unchecked string
	Bootstrap string
	// OldBrokers are the brokers (by id) that lack a request exactly-once
	// needs, with what each lacks (MissingEOSAPIs).
	OldBrokers map[string][]string
}

// EOSChecks are the exactly-once readiness rules.
func EOSChecks() []checks.Check[EOS] {
	return []checks.Check[EOS]{
		{ID: IDTxnStateCannotBeCreated, Severity: checks.Error,
			Test:    func(e EOS) bool { return !e.Exists && e.Brokers < e.ReplicationFactor },
			Subject: func(EOS) string { return TxnStateTopic },
			Summary: func(e EOS) string {
				return fmt.Sprintf("exactly.once.source.support=%s needs transactions, but %s does not exist and cannot be created: %d live broker(s), transaction.state.log.replication.factor=%d",
					e.Support, TxnStateTopic, e.Brokers, e.ReplicationFactor)
			},
			Evidence: func(EOS) string {
				return "the leader writes the config topic through a transactional producer under preparing and enabled (DistributedHerder, KIP-618); the transaction coordinator creates the topic at the first transactional id"
			},
			Fix: func(e EOS) string {
				return fmt.Sprintf("start at least %d brokers, or set transaction.state.log.replication.factor (and transaction.state.log.min.isr) on the brokers to what the cluster has", e.ReplicationFactor)
			}},
		{ID: IDTxnStateBelowMinISR, Severity: checks.Error,
			Test:    func(e EOS) bool { return e.Exists && len(e.BelowMinISR) > 0 },
			Subject: func(EOS) string { return TxnStateTopic },
			Summary: func(e EOS) string {
				return fmt.Sprintf("%s has %d partition(s) below min.insync.replicas=%d: transactions that map to them fail, so exactly-once tasks and the transactional leader stop", TxnStateTopic, len(e.BelowMinISR), e.MinISR)
			},
			Evidence: func(e EOS) string { return fmt.Sprintf("partitions %v", e.BelowMinISR) },
			Fix: func(EOS) string {
				return "bring the brokers of those partitions back (kafka-topics --describe --under-min-isr-partitions --topic __transaction_state names them)"
			}},
		{ID: IDConfigTopicTxnHanging, Severity: checks.Error,
			Test:    func(e EOS) bool { return e.Hanging },
			Subject: func(e EOS) string { return e.ConfigTopic },
			Summary: func(e EOS) string {
				return fmt.Sprintf("a transaction on the config topic %s stays open (last stable offset %d below the high watermark over %s): workers reading it read_committed cannot pass it, miss worker.sync.timeout.ms and back off",
					e.ConfigTopic, e.HangingAt, e.Window)
			},
			Evidence: func(EOS) string {
				return "KafkaConfigBackingStore reads the config topic read_committed under exactly.once.source.support=enabled"
			},
			Fix: func(e EOS) string {
				return fmt.Sprintf("find the producer (kafka-transactions --bootstrap-server ... find-hanging --topic %s) and abort its transaction (kafka-transactions ... abort); a stopped leader's transaction ends at its transaction.timeout.ms", e.ConfigTopic)
			}},
		txnIDCheck(),
		brokersTooOldCheck(),
		{ID: IDTxnIDUnchecked, Severity: checks.Warning,
			Test: func(e EOS) bool {
				return e.Unchecked != "" || e.Access != nil && len(e.Access.Missing) == 0 && len(e.Access.Undecided) > 0
			},
			Subject: func(e EOS) string { return "TransactionalId " + e.TxnID },
			Summary: func(e EOS) string {
				if e.Unchecked != "" {
					return fmt.Sprintf("cannot tell whether the worker may Write TransactionalId %s, which the exactly-once leader writes the config topic with: %s", e.TxnID, e.Unchecked)
				}
				return fmt.Sprintf("cannot tell whether %s may %s TransactionalId %s, which the exactly-once leader writes the config topic with: %s",
					e.Principal, strings.Join(e.Access.Undecided, " and "), e.TxnID, strings.Join(e.Access.Rules, "; "))
			},
			Evidence: func(EOS) string {
				return "DistributedConfig.transactionalProducerId: the leader's config-topic producer under exactly.once.source.support=preparing or enabled (KIP-618: Write and Describe on it)"
			},
			Fix: func(e EOS) string { return "check it, or grant it: " + aclLine(e, []string{OpWrite, OpDescribe}) }},
	}
}

// txnIDCheck refuses a worker whose principal lacks what the leader needs
// on its transactional id: the leader's producer fails with
// TransactionalIdAuthorizationException and the config topic cannot be
// written (connectors cannot be created or changed).
func txnIDCheck() checks.Check[EOS] {
	return checks.Check[EOS]{ID: IDTxnIDNotAuthorized, Severity: checks.Error,
		Test:    func(e EOS) bool { return e.Access != nil && len(e.Access.Missing) > 0 },
		Subject: func(e EOS) string { return "TransactionalId " + e.TxnID },
		Summary: func(e EOS) string {
			return fmt.Sprintf("exactly.once.source.support=%s: the worker's principal %s may not %s TransactionalId %s, which the leader writes the config topic with: as leader it could not create or change a connector",
				e.Support, e.Principal, strings.Join(e.Access.Missing, " or "), e.TxnID)
		},
		Evidence: func(e EOS) string { return strings.Join(e.Access.Rules, "; ") },
		Fix: func(e EOS) string {
			fix := "grant it: " + aclLine(e, e.Access.Missing)
			for _, r := range e.Access.Rules {
				if strings.Contains(r, "denied by DENY") {
					fix += ", and remove the ACL that denies it (" + r + ")"
				}
			}
			return fix + "; each exactly-once task's producer also needs Write on <group.id>-<connector>-<task> (the same with --resource-pattern-type prefixed --transactional-id " + e.GroupID + "-)"
		}}
}

// aclLine is the kafka-acls command that grants the worker's principal
// ops on the transactional id.
func aclLine(e EOS, ops []string) string {
	b := e.Bootstrap
	if b == "" {
		b = "<brokers>"
	}
	p := e.Principal
	if p == "" {
		p = "User:<the worker's principal>"
	}
	line := fmt.Sprintf("kafka-acls --bootstrap-server %s --command-config <an admin's client properties> --add --allow-principal '%s'", b, p)
	for _, op := range ops {
		line += " --operation " + op
	}
	return line + " --transactional-id " + e.TxnID
}

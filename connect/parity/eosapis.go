package parity

import (
	"fmt"
	"sort"
	"strings"

	"github.com/connect-init/connect-init/checks"
)

// IDBrokersTooOld: a broker lacks a request (or its version) that
// exactly-once source support needs.
const IDBrokersTooOld = "eos-brokers-too-old"

// EOSAPI is one broker request exactly-once source support needs, at its
// least version, and who in Connect sends it.
type EOSAPI struct {
	Key        int16
	Name       string
	MinVersion int16
	Why        string
}

// eosAPIs are the requests the exactly-once runtime sends beyond a
// worker's usual ones (read in Kafka's source). All are in every broker
// since Kafka 0.11 (KIP-98); a broker, or a Kafka-compatible service,
// without transactions lacks the first three.
var eosAPIs = []EOSAPI{
	{Key: 22, Name: "InitProducerId", Why: "the leader's transactional config-topic producer (KafkaConfigBackingStore.fencableProducerProps), each task's transactional producer (ExactlyOnceWorkerSourceTask) and the fencing of a connector's older tasks (DistributedHerder.fenceZombieSourceTasks -> Admin.fenceProducers)"},
	{Key: 24, Name: "AddPartitionsToTxn", Why: "every transaction's first write to a partition"},
	{Key: 26, Name: "EndTxn", Why: "every commit and abort"},
	{Key: 10, Name: "FindCoordinator", MinVersion: 1, Why: "finding the transaction coordinator (key type TRANSACTION, FindCoordinator v1)"},
	{Key: 2, Name: "ListOffsets", MinVersion: 2, Why: "the end offsets of a read_committed log: KafkaBasedLog reads them through the admin client and refuses to start without it (requireAdminForOffsets; the isolation level came with ListOffsets v2)"},
}

// EOSAPIs are the requests exactly-once source support needs (one home:
// the broker check and the docs read it).
func EOSAPIs() []EOSAPI { return append([]EOSAPI(nil), eosAPIs...) }

// MissingEOSAPIs lists, for one broker's ApiVersions answer (key -> max
// version), the needed requests it lacks or serves below their least
// version ("EndTxn", "ListOffsets v2 (the broker has v1)").
func MissingEOSAPIs(max map[int16]int16) []string {
	var out []string
	for _, a := range eosAPIs {
		v, ok := max[a.Key]
		switch {
		case !ok:
			out = append(out, a.Name)
		case v < a.MinVersion:
			out = append(out, fmt.Sprintf("%s v%d (the broker has v%d)", a.Name, a.MinVersion, v))
		}
	}
	return out
}

// brokersTooOldCheck refuses exactly-once on brokers that cannot serve
// it: the leader's first transactional write, or the first read of the
// config topic read_committed, fails with UnsupportedVersionException.
func brokersTooOldCheck() checks.Check[EOS] {
	return checks.Check[EOS]{ID: IDBrokersTooOld, Severity: checks.Error,
		Test:    func(e EOS) bool { return len(e.OldBrokers) > 0 },
		Subject: func(e EOS) string { return "brokers " + strings.Join(sortedKeys(e.OldBrokers), ", ") },
		Summary: func(e EOS) string {
			return fmt.Sprintf("exactly.once.source.support=%s needs transactions, but %d broker(s) lack requests it sends", e.Support, len(e.OldBrokers))
		},
		Evidence: func(e EOS) string {
			var parts []string
			for _, b := range sortedKeys(e.OldBrokers) {
				parts = append(parts, "broker "+b+" lacks "+strings.Join(e.OldBrokers[b], ", "))
			}
			return strings.Join(parts, "; ") + " (ApiVersions)"
		},
		Fix: func(EOS) string {
			return "upgrade those brokers to a Kafka with transactions (0.11 or later; Connect 4.x clients need 2.1 or later anyway), or, on a Kafka-compatible service without transactions, set exactly.once.source.support=disabled on every worker"
		}}
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

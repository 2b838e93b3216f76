package parity

// Class says how the workers of one group must relate on a setting.
type Class string

// The classes, from the strictest.
const (
	// MustEqual: every worker of the group must hold the same effective
	// value.
	MustEqual Class = "must-equal"
	// Compatible: not equal but related (each worker's signature algorithm
	// in every worker's verification list).
	Compatible Class = "compatible"
	// MustDiffer: no two workers may hold the same value.
	MustDiffer Class = "must-differ"
	// Staged: a transition made in steps (Stages), every worker at most
	// one step from every other.
	Staged Class = "staged"
	// LeaderWins: only the leader's value acts; a difference is a warning
	// (the value changes when leadership does).
	LeaderWins Class = "leader-wins"
	// PerWorker: each worker's own; never compared.
	PerWorker Class = "per-worker"
)

// Row is one worker setting of the table.
type Row struct {
	// Key is the worker property, or a derived name: "config.providers.*.class"
	// stands for each declared provider's class, "connect.version" for the
	// worker's Kafka Connect version (major.minor).
	Key   string
	Class Class
	// Default is Connect's default, the effective value when unset; ""
	// means no default (unset is a value of its own).
	Default string
	// Fold lower-cases the value before comparing (Connect parses it
	// case-insensitively), List compares it as a comma-separated list.
	Fold, List bool
	// Stages are the steps of a Staged row, in order.
	Stages []string
	// Source is the Kafka class (and member) that makes the row so.
	Source string
	// Effect says what a mismatch does to Connect.
	Effect string
}

// Derived keys.
const (
	// KeyProviderClasses stands for config.providers.<name>.class of each
	// provider config.providers declares.
	KeyProviderClasses = "config.providers.*.class"
	// KeyVersion is the worker's Kafka Connect version, major.minor.
	KeyVersion = "connect.version"
	// KeySignature and KeyVerification are the two halves of the
	// compatibility row.
	KeySignature    = "inter.worker.signature.algorithm"
	KeyVerification = "inter.worker.verification.algorithms"
	// KeyProtocol and KeyExactlyOnce are the staged rows.
	KeyProtocol    = "connect.protocol"
	KeyExactlyOnce = "exactly.once.source.support"
	// KeyAdvertisedURL is the must-differ row, the URL the registry
	// record is keyed by (not part of the fingerprint).
	KeyAdvertisedURL = "rest.advertised.url"
)

// Table is the classification of the worker settings a Connect group
// shares, each row with the Kafka source that makes it so (read on
// apache/kafka trunk; docs/settings-parity.md says what each mismatch does
// and what connect-init does about it). It is the one list: the
// fingerprint publishes its rows, the judgement compares them, doctor
// shows them.
func Table() []Row {
	const (
		dc  = "DistributedConfig."
		wc  = "WorkerConfig."
		hmc = "HmacSHA256"
	)
	return []Row{
		{Key: "group.id", Class: MustEqual, Source: dc + "GROUP_ID_CONFIG; WorkerGroupMember joins the group it names",
			Effect: "another group id is another Connect cluster: the worker does not join this group at all"},
		{Key: "config.storage.topic", Class: MustEqual, Source: dc + "CONFIG_TOPIC_CONFIG; KafkaConfigBackingStore, DistributedHerder (config offset against the assignment's)",
			Effect: "members read different config logs: \"config state offset ... does not match group assignment ... Forcing rebalance\" forever, or two connector sets in one group when both topics sit at the same offset"},
		{Key: "offset.storage.topic", Class: MustEqual, Source: dc + "OFFSET_STORAGE_TOPIC_CONFIG; KafkaOffsetBackingStore, Worker (source task offsets)",
			Effect: "a source task moved to that worker resumes from other offsets: duplicates or a full re-snapshot"},
		{Key: "status.storage.topic", Class: MustEqual, Source: dc + "STATUS_STORAGE_TOPIC_CONFIG; KafkaStatusBackingStore",
			Effect: "the REST status of connectors and tasks depends on which worker answers"},
		{Key: "key.converter", Class: MustEqual, Source: wc + "KEY_CONVERTER_CLASS_CONFIG; Worker (a task without its own converter uses its host worker's)",
			Effect: "a connector writes or reads another key format depending on where its tasks land"},
		{Key: "value.converter", Class: MustEqual, Source: wc + "VALUE_CONVERTER_CLASS_CONFIG; Worker (a task without its own converter uses its host worker's)",
			Effect: "a connector writes or reads another value format depending on where its tasks land"},
		{Key: "header.converter", Class: MustEqual, Default: "org.apache.kafka.connect.storage.SimpleHeaderConverter",
			Source: wc + "HEADER_CONVERTER_CLASS_CONFIG (default SimpleHeaderConverter); Worker",
			Effect: "headers are written in another format depending on where the tasks land"},
		{Key: "config.providers", Class: MustEqual, List: true, Source: wc + "CONFIG_PROVIDERS_CONFIG; Worker, WorkerConfigTransformer (each worker resolves connector configs with its own providers)",
			Effect: "a task on a worker without the provider gets the literal ${provider:...} reference"},
		{Key: KeyProviderClasses, Class: MustEqual, Source: wc + "CONFIG_PROVIDERS_CONFIG + \".<name>.class\"; Plugins.newConfigProvider",
			Effect: "one provider name resolves to another implementation depending on the worker"},
		{Key: "topic.creation.enable", Class: MustEqual, Default: "true", Fold: true, Source: wc + "TOPIC_CREATION_ENABLE_CONFIG (default true); Worker, TopicCreation",
			Effect: "a source connector's topic.creation.* settings are honoured or ignored (or the task fails) depending on where its tasks land"},
		{Key: "connector.client.config.override.policy", Class: MustEqual, Default: "All",
			Source: wc + "CONNECTOR_CLIENT_POLICY_CLASS_CONFIG (default All); Worker (the policy is checked where the task starts), AbstractHerder.validate",
			Effect: "a connector's client overrides are accepted by one worker and make its tasks fail on another"},
		{Key: KeyVersion, Class: MustEqual, Source: "AppInfoParser.getVersion; WorkerConfig, ConnectProtocol (internal formats change between versions: KIP-738 removed the internal converters in 3.0)",
			Effect: "workers of other versions may write or expect other internal formats and settings; a rolling upgrade is the one time they may differ"},
		{Key: KeySignature, Class: Compatible, Default: hmc, Source: dc + "INTER_WORKER_SIGNATURE_ALGORITHM_CONFIG; DistributedHerder, InternalRequestSignature (the leader verifies forwarded task configs)",
			Effect: "the leader answers this worker's forwarded task configs with 400 when its algorithm is not in the leader's verification list; under exactly-once, tasks on it cannot start"},
		{Key: KeyVerification, Class: Compatible, Default: hmc, List: true, Source: dc + "INTER_WORKER_VERIFICATION_ALGORITHMS_CONFIG; DistributedHerder",
			Effect: "a worker whose list lacks another worker's signature algorithm rejects that worker's requests while it leads"},
		{Key: KeyAdvertisedURL, Class: MustDiffer, Source: "RestServer.advertisedUrl, ConnectProtocol (the URL is the member's identity in assignments), KafkaStatusBackingStore (worker ids)",
			Effect: "two workers advertising one address break request forwarding and the status topic's worker ids"},
		{Key: KeyProtocol, Class: Staged, Default: "sessioned", Fold: true, Stages: []string{"eager", "compatible", "sessioned"},
			Source: dc + "CONNECT_PROTOCOL_CONFIG (default sessioned); ConnectProtocolCompatibility, WorkerCoordinator (the group uses the highest protocol every member supports)",
			Effect: "one older worker downgrades the whole group (a log warning only): request signing off, or stop-the-world rebalances with eager (KAFKA-13816)"},
		{Key: KeyExactlyOnce, Class: Staged, Default: "disabled", Fold: true, Stages: []string{"disabled", "preparing", "enabled"},
			Source: dc + "EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG (default disabled; \"first set to preparing on every worker ... then enabled\"); Worker, DistributedHerder",
			Effect: "a source task placed on a disabled worker runs without transactions or fencing, silently"},
		{Key: "scheduled.rebalance.max.delay.ms", Class: LeaderWins, Default: "300000", Source: dc + "SCHEDULED_REBALANCE_MAX_DELAY_MS_CONFIG; IncrementalCooperativeAssignor (run by the leader)",
			Effect: "the delay before a departed worker's tasks move changes with the leader"},
		{Key: "inter.worker.key.generation.algorithm", Class: LeaderWins, Default: hmc, Source: dc + "INTER_WORKER_KEY_GENERATION_ALGORITHM_CONFIG; DistributedHerder (the leader generates the session key)",
			Effect: "the session key's algorithm changes with the leader"},
		{Key: "inter.worker.key.size", Class: LeaderWins, Source: dc + "INTER_WORKER_KEY_SIZE_CONFIG (default: the algorithm's); DistributedHerder",
			Effect: "the session key's size changes with the leader"},
		{Key: "inter.worker.key.ttl.ms", Class: LeaderWins, Default: "3600000", Source: dc + "INTER_WORKER_KEY_TTL_MS_CONFIG; DistributedHerder (the leader rotates the key)",
			Effect: "the session key's rotation changes with the leader"},
	}
}

// RowOf returns the row of key, false when the table has none (a per-worker
// setting: timeouts, flush intervals, client settings).
func RowOf(key string) (Row, bool) {
	for _, r := range Table() {
		if r.Key == key {
			return r, true
		}
	}
	return Row{}, false
}

// Package doctor explains the state of a Kafka cluster and a Connect worker
// group, for `connect-init doctor [--json]`. It takes the same one-shot
// looks as the gates of `connect-init run` (package gate) but never
// creates or changes anything, and turns what it saw into findings, each
// with a stable id, a severity, the evidence and the fix.
//
// Why a separate command: when a Connect cluster misbehaves (incident 1's
// endless "Forcing rebalance", incident 2's COORDINATOR_NOT_AVAILABLE), the
// operator needs the cause named from the cluster's own state, including
// the worker group's members as Connect's protocol describes them, which no
// Kafka tool prints.
//
// The work is split so that the judgement is testable without Kafka:
// [Collect] does the I/O and returns a [Snapshot]; [Diagnose] derives the
// findings from a Snapshot alone; [NewDocument] builds the output.
//
// # Looks
//
//  1. Brokers: metadata from the bootstrap servers, then ApiVersions to every
//     registered broker at its advertised address (gate.BrokerGate.Probe).
//  2. Internal topics, inspect only (gate.TopicGate with Create=false).
//  3. Whether __consumer_offsets exists (metadata, auto-creation off). If it
//     does not, the coordinator and group looks are skipped: FindCoordinator
//     would create it.
//  4. The group's coordinator and its __consumer_offsets partition, one look
//     (gate.CoordinatorGate with Wait=false).
//  5. The worker group (gate.GroupGate, waiting at most 5s for a Stable
//     snapshot), and our config topic's end offset read_uncommitted and
//     read_committed; if they differ, they are read again 5s later.
//  6. Every advertised REST URL of the group, leader first: DNS resolution
//     and a TCP connection from this host, 2s each.
//  7. Plugin parity: every member's GET /connector-plugins (foreign members
//     left out), judged against the others with plugins.Verdict over the
//     classes the connectors use (our config topic as the group look read
//     it, and CONNECT_INIT_CONNECTORS_DIR); and, when one of the worker's
//     plugin.path entries exists here (doctor runs in its container), a
//     complete scan of this worker's plugins.
//
// # Findings
//
// Severity error means `connect-init run` would refuse to start a worker, or
// Connect cannot work; doctor then exits 1. Warnings are risks, or facts
// doctor cannot judge from where it runs; infos are context.
//
//	id                                 severity        condition
//	group-rebalance-storm              error           the group rebalanced 3+ times in the window of looks and did not settle (said first; names the foreign members forcing it)
//	broker-unreachable                 error           no bootstrap server answers, or a registered broker does not answer at its advertised address
//	broker-count-below-expected        error           fewer brokers live than connect-init run waits for; the missing ones named by id and last address
//	controller-unknown                 error           the metadata names no controller
//	controller-quorum-lost             error           the KRaft controller quorum has no leader (DescribeQuorum)
//	broker-not-live                    warning         a broker is registered but fenced, or was registered and is gone: no gate waits for it
//	internal-topic-missing             warning|error   an internal topic does not exist (error when the group already has Connect members)
//	topic-configs-unreadable           error           an internal topic's settings cannot be read (DescribeConfigs refused): its cleanup.policy is unverified
//	config-topic-partitions            error           the config topic has more than one partition
//	topic-not-compacted                error           an internal topic's cleanup.policy is not exactly compact (an empty policy included)
//	topic-under-replicated             error|warning   partitions without a leader (error); ISR smaller than the replicas (warning)
//	topic-replication-below-configured warning         fewer replicas than <role>.storage.replication.factor
//	topic-min-insync-too-high          warning         min.insync.replicas >= replication factor > 1
//	consumer-offsets-missing           info            __consumer_offsets does not exist yet
//	consumer-offsets-single-replica    warning         the group's __consumer_offsets partition has < 2 in-sync replicas on a multi-broker cluster (error with CONNECT_INIT_STRICT)
//	coordinator-not-available          error           FindCoordinator fails for the worker group
//	foreign-group-member               error           a member is foreign by any group-identity rule (gate/identity.go): a config offset beyond our config topic's end, a config offset stuck behind the assignment, an assigned connector our config topic never names, a Stable group that runs none of our connectors, a URL the cluster registry holds for another cluster, not a Connect worker, or bytes that are not Connect's protocol
//	group-registered-to-another-cluster error          the cluster registry says another Connect cluster (another config topic) owns the group.id
//	cluster-registry-unreadable        warning         the cluster registry could not be read, so the group is not proven this cluster's
//	unverified-group-member            warning         a member neither the registry nor Connect's own records prove ours or foreign (an error for run and prepare with CONNECT_INIT_STRICT)
//	member-behind-unjudged             error           a member stayed behind the assignment until the timeout without a verdict (neither 2 rebalances nor gate.BehindFor at one offset, nor caught up)
//	worker-setting-differs             error           a setting every worker of a group must share differs between live registered workers (connect/parity's table: the internal topics, converters, config.providers, ...)
//	worker-signature-not-verified      error           a worker's inter.worker.signature.algorithm is not in another worker's inter.worker.verification.algorithms
//	worker-setting-transition          warning|error   a staged setting (connect.protocol, exactly.once.source.support) one step apart between workers (error two steps apart)
//	worker-leader-setting-differs      warning         a setting only the group's leader applies differs between workers (scheduled.rebalance.max.delay.ms, the session key's settings)
//	worker-advertised-url-shared       error           two live workers advertise one REST URL
//	eos-transaction-state-cannot-be-created error    exactly.once.source.support is preparing or enabled, __transaction_state does not exist and the cluster has fewer live brokers than transaction.state.log.replication.factor
//	eos-transaction-state-below-min-isr error         a partition of __transaction_state has fewer in-sync replicas than its min.insync.replicas (exactly-once workers)
//	eos-transactional-id-not-authorized error        the worker's principal may not Write or Describe TransactionalId connect-cluster-<group.id>, the exactly-once leader's (ACLs, and the broker's answer to DescribeTransactions)
//	eos-transactional-id-unchecked     warning         the transactional id's ACLs could not be judged: principal not told (GSSAPI, OAUTHBEARER, certificates), ACLs unreadable, or no ACL names the id
//	eos-brokers-too-old                error           a broker lacks a request exactly-once sends (ApiVersions: InitProducerId, AddPartitionsToTxn, EndTxn, FindCoordinator v1, ListOffsets v2)
//	member-config-offset-behind        warning         a member joined with a config offset below the assignment's (the endless rebalance loop, seen from the cluster whose topic is longer)
//	assignment-config-mismatch         error           an assignment carries error CONFIG_MISMATCH (the leader cannot read up to a member's offset)
//	duplicate-advertised-url           error           two members advertise the same REST URL
//	advertised-url-unresolvable        warning         a member's advertised host does not resolve from this host
//	advertised-url-unreachable         warning         a member's advertised host:port does not accept TCP connections from this host
//	config-topic-open-transaction      error|warning   the config topic's last stable offset stays below its end offset (error when unchanged after the recheck)
//	group-not-stable                   warning         no Stable snapshot of the group within the wait: members' offsets unchecked
//	group-empty                        info            the worker group has no members
//	plugin-missing                     error|warning   a member cannot load a class the connectors use that other members load; one per member and class, with the connectors at risk (error under CONNECT_INIT_PLUGIN_CHECK=fail, as run would refuse such a worker)
//	plugin-missing-everywhere          warning         a class a connector uses that no member that answered can load
//	plugin-version-differs             warning         the members run a plugin a connector uses in different versions
//	plugin-version-unverified          info            a connector's plugin version could not be compared across the members
//	rest-credentials-refused           error           a member refused connect-init's REST request (401/403): the REST checks need credentials
//	plugin-no-manifest                 info|warning    this worker's plugins without ServiceLoader manifests (Connect's slow reflective scan); warning under plugin.discovery=hybrid_fail
//	plugin-path-problem                warning         a plugin.path entry, location or file this worker skips
//	rebalance-delay-default            warning         scheduled.rebalance.max.delay.ms is Connect's default 5 minutes (unset or 300000) under cooperative rebalancing: a departed worker's tasks stay unassigned that long in a rolling update
//	rebalance-delay-below-rejoin       warning         scheduled.rebalance.max.delay.ms is shorter than the time a restarted or replaced worker was away from the group, as doctor --watch measured it (its lower bound; see RejoinTracker)
//	check-failed                       warning         a look failed for another reason (authorization, a describe error, a member that does not list its plugins)
//
// # JSON document (--json), schema_version 1
//
// One object; fields are never removed or change meaning within a schema
// version, new ones may be added. Durations are nanoseconds. Config offsets
// follow Connect's meaning (package connect/proto): -1 means "has read
// nothing", so an offset that is unknown is null for members and
// assignments; the config topic's end offsets, never negative when known,
// are -1 when unknown. DescribeGroups does not report the group's
// generation, so the document has none.
//
//	{
//	  "schema_version": 1,
//	  "connect_init_version": "v1.2.3",
//	  "generated_at": "2025-01-01T12:00:00Z",            // RFC 3339, UTC
//	  "group_id": "connect-cluster",
//	  "bootstrap_servers": ["kafka-1:9092"],
//	  "cluster": {
//	    "brokers": {                                       // null if not looked at
//	      "expected": 3, "registered": 3, "reachable": 3, "controller_id": 1,
//	      "list": [{"id": 1, "advertised_address": "kafka-1:9092", "reachable": true, "error": ""}],
//	      "bootstrap_errors": {"kafka-1:9092": "connection refused"},  // only when no bootstrap server answered
//	      "absent": [{"id": 3, "last_known_address": "kafka-3:9092",  // brokers not live: "registered but fenced",
//	                  "state": "registered but fenced"}]             // "no longer registered", ... (id -1: a bootstrap address only)
//	    },
//	    "topics": [{"role": "config", "name": "_connect-configs", "exists": true, "partitions": 1,
//	                "replication_factor": 3, "configured_replication_factor": 3,
//	                "cleanup_policy": "compact", "min_insync_replicas": "2",
//	                "under_replicated_partitions": [], "offline_partitions": []}],
//	    "coordinator": {"id": 2, "address": "kafka-2:9092", "partition": 13, "partitions": 50, "leader": 2,
//	                    "replicas": [2, 3, 1], "isr": [2, 3, 1], "offsets_topic_replication_factor": "3",
//	                    "find_error": "",                  // set when no coordinator was found (id -1); the partition is still read
//	                    "down_replicas": []},              // replicas whose broker is not live, like brokers.absent; [] when none
//	    "group": {                                         // null if not looked at
//	      "group_id": "connect-cluster",
//	      "state": "Stable",                               // Stable|Empty|Dead|PreparingRebalance|CompletingRebalance|NotFound
//	      "protocol_type": "connect", "protocol": "sessioned",
//	      "stable_seen": true, "snapshots": 2, "waited_ns": 1200000,
//	      "window": {"samples": 2, "span_ns": 100000000,   // the looks after the first (gate/window.go); null if not Stable
//	                 "rebalances": 0, "calm": true,
//	                 "stuck_behind": [], "behind": []},     // {member_id, url, client_host, config_offset, assignment_offset, rebalances, for_ns}
//	      "leader_id": "connect-1-...", "leader_url": "http://connect-1:8083/",
//	      "assignment_offset": 12,                        // null if no assignment was decoded
//	      "members": [{"member_id": "connect-1-...", "group_instance_id": "", "client_id": "connect-1",
//	                   "client_host": "/10.0.0.7", "url": "http://connect-1:8083/", "protocol_version": 2,
//	                   "config_offset": 12,                // null if unknown
//	                   "leader": true,
//	                   "assignment": {"version": 2, "error": 0, "leader_id": "connect-1-...",
//	                                  "leader_url": "http://connect-1:8083/", "config_offset": 12,
//	                                  "connectors": ["c"], "tasks": ["c-0"],
//	                                  "revoked_connectors": [], "revoked_tasks": [], "delay_ms": 0},  // null if none
//	                   "metadata_error": "", "assignment_error": ""}],
//	      "config_topic": "_connect-configs",
//	      "config_end_offset": 12, "config_last_stable_offset": 12, "config_offsets_error": "",
//	      "foreign": [{"member_id": "...", "client_id": "...", "client_host": "/10.0.50.95",
//	                   "url": "http://10.0.50.95:8083/", "config_offset": 819, "assignment_offset": 819,
//	                   "our_config_end_offset": 0,
//	                   "reasons": ["config-offset-ahead", "assignment-offset-ahead"],  // or the rule id of gate.Rule*
//	                   "message": "group member ... "}],
//	      "note": "",                                      // set when no Stable snapshot was seen
//	      "identity": {"kafka_cluster_id": "...",          // what the identity rules read; absent when off
//	                   "registry": {"topic": "_connect-init-registry", "exists": true,
//	                                "claims": [{"kafka_cluster_id": "...", "group_id": "...", "config_topic": "...",
//	                                            "offset_topic": "...", "status_topic": "...", "offset": 3,
//	                                            "first_seen": "...", "url": "...", "host": "...", "handed_over_from": ""}],
//	                                "workers": [{...cluster fields, "url": "...", "host": "...", "first_seen": "...",
//	                                             "last_seen": "...", "offset": 7}]},   // null if unreadable
//	                   "registry_error": "", "claimed_by": {...claim},   // claimed_by only when another cluster owns the group
//	                   "config_records": 16, "config_connectors_defined": 5, "config_error": "", "status_error": ""},
//	      "verdicts": [{"member_id": "...", "url": "...", "client_host": "/10.0.0.7",
//	                    "verdict": "ours|foreign|unverified", "rule": "registry-worker", "evidence": "..."}]
//	    },
//	    "config_offsets_recheck": {"after_ns": 5000000000, "config_end_offset": 14,
//	                               "config_last_stable_offset": 12, "error": ""},  // only after an open transaction
//	    "peers": [{"url": "http://connect-1:8083/", "address": "connect-1:8083", "leader": true,
//	               "members": ["connect-1-..."], "resolved": true, "addresses": ["10.0.0.7"],
//	               "reachable": true, "error": ""}],
//	    "plugins": {"check_mode": "fail",                 // null when the group was not described
//	                "uses": [{"connector": "c", "key": "connector.class", "kind": "connector", "class": "FileStreamSource"}],
//	                "config_error": "", "definitions_error": "",
//	                "members": [{"member": "http://connect-1:8083/",
//	                             "plugins": [{"class": "...", "type": "source", "version": "4.1.1"}]}],
//	                "unanswered": [{"url": "http://connect-2:8083/", "error": "..."}],
//	                "local": {...plugins.Inventory},       // only in the worker's container
//	                "local_skipped": "plugin.path is not set"},
//	    "skipped": ["coordinator, group and peers: __consumer_offsets does not exist yet ..."]
//	  },
//	  "findings": [{"id": "foreign-group-member", "severity": "error", "subject": "<member id>",
//	                "summary": "...", "evidence": "...", "fix": "..."}],   // errors, then warnings, then infos
//	  "counts": {"error": 1, "warning": 0, "info": 0},
//	  // under --watch: "changes": {"appeared": [...], "cleared": [...], "joined": [...], "left": [...],
//	  //   "state_from": "Stable", "state_to": "PreparingRebalance", "rebalances": 0, "span_ns": 0}
//	  "exit_code": 1
//	}
//
// Empty strings and empty lists shown above may be omitted where the field
// is marked omitempty in the Go types (error, bootstrap_errors, note,
// group_instance_id, metadata_error, assignment_error, revoked_*,
// config_offsets_error, addresses, members of a peer, leader_id/leader_url
// of the group).
package doctor

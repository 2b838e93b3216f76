// Package registry is connect-init's cluster registry: which Connect
// cluster owns a worker group.id, and which cluster each worker URL last
// started for. connect-init's group gate reads it before judging a group's
// members and writes it only once they are judged (run and prepare; doctor
// only reads).
//
// # Where it lives
//
// A topic of its own (default "_connect-init-registry"), not the startup
// lock's topic:
//   - The lock can be disabled (CONNECT_INIT_LOCK=false); the registry must
//     still be written and read. A registry inside the lock topic would
//     make the lock topic mandatory.
//   - The two have opposite lifetimes: lock records are a queue, withdrawn
//     and replaced at every start, and an operator may empty or recreate the
//     lock topic to clear a stuck queue. A claim must outlive every start and
//     go only when an operator hands the group over on purpose.
//   - The lock package knows nothing about Connect and parses every record
//     of its topic as its own; foreign record kinds there would be noise to
//     it, or worse.
//
// The topic is compacted (cleanup.policy=compact: the latest record of each
// key stays forever), has one partition (one order for all claims) and uses
// message.timestamp.type=LogAppendTime, so first and last seen are the
// broker's clock, never a container's.
//
// # Records
//
// Keys are JSON arrays, values JSON objects (version field "v": 1):
//
//	["claim", <kafka cluster id>, <group.id>, <config topic>]
//	    {"v":1,"group_id":..,"config_topic":..,"offset_topic":..,
//	     "status_topic":..,"kafka_cluster_id":..,"url":..,"host":..,
//	     "handed_over_from":..}
//	["worker", <kafka cluster id>, <group.id>, <advertised URL>]
//	    {"v":1, same cluster fields, "url":..,"host":..,"first_seen_ms":..,
//	     "settings":{<setting>: <effective value>, ...}}
//
// A worker record's "settings" is its settings fingerprint (package
// connect/parity: the settings a group must agree on, effective values,
// no secret among them); a record without it is a worker whose
// connect-init predates it, read as unknown. A start whose fingerprint
// differs from its record writes the record again.
//
// A Connect cluster is identified by its Kafka cluster id, group.id and
// config topic: the config topic is what a member's config offset and
// assignment refer to (two workers of one group reading different config
// topics force rebalances forever). Records of another Kafka cluster id
// (a mirrored registry topic) are ignored.
//
// # Ownership
//
//   - The first claim owns the group: among a group's surviving claims the
//     one at the lowest offset. A claim is written once and never rewritten
//     (last seen lives in the worker records), so compaction never moves it.
//     Two clusters registering at the same moment both write; the one whose
//     claim landed second sees the other's first, removes its own claim
//     (tombstone) and refuses.
//   - A group claimed by another config topic is foreign to us whatever the
//     offsets say; a worker URL whose latest record names another cluster
//     is that cluster's worker.
//
// # How ownership ends
//
// Only on purpose: set CONNECT_INIT_GROUP_HANDOVER=<config topic of the
// current owner> on the new cluster's workers (or its prepare task). Its
// first run whose group has no live member of the old cluster writes a
// tombstone for the old claim and for the old cluster's worker records of
// this group, then its own claim (handed_over_from names the old config
// topic). Remove the setting afterwards; while it is set and the group is
// ours it does nothing. While any member of the old cluster is still in
// the group, the handover is refused: stop the old cluster first. Without
// connect-init, the same tombstone can be written with any producer (key
// as above, null value).
package registry

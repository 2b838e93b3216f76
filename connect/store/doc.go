// Package store reads what Kafka Connect itself wrote to a cluster's
// config and status topics, to tie group members to a Connect cluster with
// Connect's own records. It decodes only what the identity rules and the
// plugins step (the classes the connectors' configurations name) need, the
// way Connect's backing stores read the same bytes (Kafka's source,
// connect/runtime/.../storage/):
//
//   - Config topic (KafkaConfigBackingStore): one partition; record keys
//     "connector-<name>" (value {"properties":{...}}, null = connector
//     deleted), "task-<name>-<n>", "commit-<name>" ({"tasks":N}),
//     "target-state-<name>" ({"state":..,"state.v2":..}), "restart-connector-
//     <name>", "tasks-fencing-<name>", "session-key", "logger-cluster-<ns>".
//     Values are JSON without schemas (ConnectDistributed configures the
//     internal JsonConverter with schemas.enable=false). A task key is split
//     as parseTaskId does: the number after the last "-".
//   - A record's position: Connect's config offset is "offset of the last
//     record read + 1" (KafkaConfigBackingStore.ConsumeCallback: offset =
//     record.offset() + 1), so an assignment "at config offset X" was
//     computed from the records at offsets below X.
//   - Status topic (KafkaStatusBackingStore): keys "status-connector-<name>"
//     and "status-task-<name>-<n>" with {"state","trace","worker_id",
//     "generation"}; worker_id is the writing worker's advertised URL as
//     host:port (AbstractConnectCli: workerId = advertisedUrl.getHost() +
//     ":" + advertisedUrl.getPort()). "status-topic-..." records carry no
//     worker id.
//
// It depends on sarama and kafkalog only.
package store

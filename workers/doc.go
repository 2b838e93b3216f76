// Package workers is the Kafka Connect cluster as `connect-init apply`
// meets it: which worker's REST API to talk to, and the proof that it is a
// ready, live member of our worker group before anything is written to it.
//
// Why it is not in package main: which worker belongs to our group is a
// rule (the Kafka cluster id of our brokers, the members' advertised URLs
// from DescribeGroups decoded by connect/proto, the group gate's offset
// rules), and the command only wires flags to it. Why it is not in package
// apply: the proof needs the Kafka clients and the gates (kafka, gate),
// which apply, kept narrow so that it can be read and tested alone, does
// not import. apply asks this package through its own small interfaces.
//
// The proof, for every candidate (--url, else CONNECT_INIT_PEERS, else the
// group's members, leader first; with --wait-local this container's
// worker):
//
//   - GET / answers as Connect does (version and kafka_cluster_id), with the
//     Kafka cluster id of our brokers (another one is refused at once);
//   - the worker is a member of our group: its URL is a member's advertised
//     URL, or every connector and task it reports runs on a member (a load
//     balancer in front of the group);
//   - it is ready: GET /health 200 with Connect's {"status":"healthy"}, or
//     the herder's 404 on workers without /health.
//
// The self-probe connect-init serves before the exec answers none of this
// as Connect does, so it is never taken for the worker.
package workers

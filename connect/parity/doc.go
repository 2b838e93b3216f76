// Package parity is what the workers of one Connect group must agree on,
// read in Kafka's source: one table of worker settings, each with its
// class (must be equal, compatible, must differ, staged one step at a
// time, the leader's value wins, per worker), Connect's default and the
// class of Kafka that makes it so; each worker's fingerprint of those
// settings, published in its cluster registry record; and the judgement
// of one worker's fingerprint against the group's live workers, as
// check results (package checks) that the group step refuses on and
// doctor renders.
//
// Connect itself checks almost none of this: a joining worker tells the
// group only its REST URL and its config offset
// (IncrementalCooperativeConnectProtocol), so a drifted worker joins and
// each task then behaves as its host worker's settings say
// (docs/settings-parity.md).
//
// # Secrets
//
// A fingerprint holds class names, topic names, enumerations and numbers
// in clear, and never a value that may be secret: a setting the project's
// one list of secret names marks (workerconfig.IsSensitive), and every
// config.providers.<name>.param.* (a provider's parameters often hold a
// token or an address with credentials), are not published at all, not
// even as digests. A digest comparable across the workers of a group needs
// a salt they all share, which would sit beside it in the registry topic:
// anyone who can read the topic can then try a dictionary of low-entropy
// values (passwords) against it offline. None of the settings Connect
// needs equal is secret, so the fingerprint gives up nothing by leaving
// them out.
package parity

// Package zkmode holds connect-init's smoke test on a ZooKeeper-mode
// cluster: Kafka 3.4 (testbed.ZooKeeperVersion, the Kafka of Confluent
// Platform 7.4 that incident 1 ran), one ZooKeeper server and three
// brokers, started once for the package. It runs prepare, a repeated
// prepare, doctor --json, run with the startup lock, a killed and a
// stopped broker against the built binary. It has no code of its own; `make smoke-zk`
// runs it.
package zkmode

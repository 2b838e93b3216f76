// Package degraded holds connect-init's integration tests on a cluster in
// trouble (a stopped, fenced or unregistered broker, a lost group
// coordinator), run against the built binary on one real KRaft cluster
// with a single controller, started once for the package. It has no code
// of its own.
package degraded

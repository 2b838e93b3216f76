// Package monitoring holds the integration tests of the watcher
// (connect-init doctor --watch --metrics-addr) and the shipped alert rules
// (examples/monitoring/): the built binary scraped by Debian's real
// prometheus server on one real KRaft cluster with a single-replica
// __consumer_offsets (incident 2's layout), started once for the package.
// TestWatcherScrape is short and runs with -tags integration; the
// incidents' alerts take minutes and run with -tags 'integration
// monitoring' (make monitoring). It has no code of its own.
package monitoring

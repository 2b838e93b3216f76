// Package apply is connectors as code: `connect-init apply` reads connector
// definitions from a directory, compares them with what a Kafka Connect
// cluster runs, prints a plan (create, update with the changed keys only,
// unchanged, delete only when pruning), has Connect validate every new or
// changed configuration before anything is written, writes with Connect's
// own REST calls (PUT /connectors/<name>/config, PUT .../pause|stop|resume,
// DELETE with pruning) and then waits until every connector of the
// directory and its tasks run (or are in the state the file asks for).
//
// Why it exists: the usual way to create connectors at deployment time is a
// curl loop in a wrapper script that waits for the REST API and posts JSON,
// blind to failed tasks and retrying forever on a typo. Here a typo is an
// error naming the file and line before anything is touched, Connect's own
// validation is shown per field, a second run writes nothing (an
// unchanged connector gets no PUT, so no config-topic record and no task
// restart), and a failed task ends the run with the first lines of its trace.
//
// Secrets are never printed: values of keys that look secret (*.password,
// *secret*, *token*, *.key and the names connect-init's worker settings
// hide) or that Connect's validation types as PASSWORD show as [hidden],
// unless the value is a ${provider:path:key} reference, which is passed
// through untouched for Connect to resolve. Messages from Connect
// (validation errors, task traces) are scrubbed of every secret value too.
//
// Under faults it tells the truth (issue 23): a verdict rests only on
// successful status reads after the last write, spanning the hold, from a
// live member of the group, about connectors running on live members; a
// worker that stops answering is left for another member (Workers), or,
// pinned, named as unreachable while no connector is blamed. Writes are
// repeated through rebalances and read back after an ambiguous failure
// (restclient.Write), and, under a lease per group (Options.Lease), made
// once however many applies run: each plans again once it holds it.
//
// For GitOps and day-2 work (issue 31): a prune of a directory that
// defines nothing is refused (CheckPrune; the usual cause is a lost mount
// or a ConfigMap written as YAML, not a wish to delete everything), and the
// watcher, which reads its directory again at every look, deletes nothing
// while it is empty or unreadable; a dry run's plan is one JSON document
// (PlanDoc) with key names and never values, and needs only the REST API
// (Direct); a connector declared stopped or paused is created so with
// initial_state on Kafka >= 3.7, never running; offsets are code
// (SetOffsets: compared first, then stop, PATCH or DELETE, read back,
// state put back; a definition's "offsets" at creation); the watcher
// serves Prometheus metrics (Metrics).
//
// The package knows Connect's REST API only (through restclient); which
// worker to talk to, and the proof that it belongs to the right group, are
// the business of package workers, which the command wires.
package apply

// Package lock is a fair FIFO lease lock with N permits, kept in one
// single-partition, compacted Kafka topic. It exists because a process that
// exec's another (connect-init hands over to a Connect worker) cannot
// release a lock, and because Kafka is the only coordination service at
// hand: the partition's log totally orders every request, and the broker
// stamps every record with its own clock.
//
// The package knows nothing about Connect. A scope names one queue (for
// connect-init, the worker group.id); an identity names one member of it
// (the advertised REST URL); whether a holder has finished starting is an
// injected ReadyFunc.
//
// # Records
//
// Keys and values are JSON, readable with kafka-console-consumer.
//
//	member key   {"scope":S,"identity":I}
//	             {"v":1,"identity":I,"url":U,"state":"waiting"|"holding",
//	              "ticket":T,"lease_ms":L,"hold_lease_ms":H,
//	              "incarnation":X,"seq":N,"host":...}
//	release key  {"scope":S,"identity":I,"release":true}
//	             {"v":1,"identity":I,"state":"released","hold_offset":O,
//	              "reason":"ready"|"hold lease expired","by":I2}
//
// Only a member writes its member key: its request, heartbeats and claim.
// Anyone may write a release key; a release names the offset of the holding
// record it ends, and is ignored for any other hold, so a late release can
// never end a later hold. A tombstone on the member key is a withdrawal.
// The ticket is the offset of the member's first request ("ticket":-1 in
// that request itself means "this record's offset"; a request written
// again by the same incarnation before it read the first back keeps the
// first one's ticket); it fixes queue order.
// The incarnation is random per Acquire and, with seq, lets a member
// recognise its own records in the log.
//
// # Time
//
// Leases are measured in broker time only: the topic must use
// message.timestamp.type=LogAppendTime (EnsureTopic creates it so and checks
// it), and "now" is the newest record timestamp read, which a waiter's own
// heartbeats keep current. A record's age is now minus its timestamp. No
// container clock decides anything; Clock only paces heartbeats, polls and
// log lines, and its Now is sent as a CreateTime that the broker overwrites.
//
// # Algorithm
//
// Acquire reads the topic from the start to its end, writes a waiting
// request, and reads on. It heartbeats (rewrites its waiting record) every
// Lease/3. At every record and every PollInterval it evaluates, at broker
// time now:
//
//   - holders: members whose latest record is holding, with no release
//     naming that record, held for at most their hold lease;
//   - live waiters: members whose latest record is waiting and younger than
//     their lease, in ticket order (a silent waiter is dead: skipped);
//   - this member is entitled when holders < Permits and fewer than
//     Permits-holders live waiters have an earlier ticket.
//
// When entitled it writes a claim (its record, state holding) and stops
// heartbeating. When it reads its claim back it validates it against the
// state just before the claim, at the claim's timestamp: still entitled,
// and no other incarnation wrote its key. Every reader of the log reaches
// the same verdict, so at most Permits valid claims are ever unreleased.
// A valid claim returns from Acquire; an invalid one (the member decided on
// a stale view) is superseded by a new waiting record and it waits on.
//
// The holder then exec's and never writes again. Waiters release it: the
// first Permits live waiters call Ready for each holder every PollInterval
// and, on true, write a release ("ready"); every waiter writes a release
// ("hold lease expired") for a holder held longer than its hold lease
// (HoldLease, measured from the claim's timestamp). Expiry is a rule, not a
// record: it applies from that broker time on whether or not the release
// record is written. Releases are idempotent; several may appear.
//
// If Acquire's context ends while waiting, it writes a tombstone on its
// member key (best effort, within WithdrawTimeout) and returns ctx.Err().
//
// # Restarts
//
// A restarted member (same scope and identity) writes over its own entry.
// If its previous entry was waiting, it keeps that ticket: it was queued and
// merely restarted (a crash loop or an orchestrator retry must not cost its
// place). If its previous entry was holding, the previous process has
// started and died; the new request supersedes the holding record, so that
// hold ends at once, and the member goes to the back of the queue with a new
// ticket (as it does after a release or a withdrawal). Two live processes
// must never share an identity: the one that joined first sees the other's
// records and fails with ErrSuperseded; late records of the previous start
// are tolerated and overwritten.
//
// # Failure model
//
//   - Broker failover: writes use an idempotent producer with acks=all and
//     Net.MaxOpenRequests=1, so retried records are neither duplicated nor
//     reordered. A heartbeat that fails is retried at the next tick; a
//     failed claim is dropped and made again. Readers follow the new leader.
//     An outage longer than a lease makes waiters look dead to each other;
//     that costs order (skipped waiters keep their tickets and count again
//     once they heartbeat), never safety, because claims are validated
//     against the log. The new leader's clock is the new "now": broker
//     clocks are assumed synchronised to well within a lease.
//   - Dead waiter: skipped once silent for its lease; it keeps its ticket
//     and is in line again as soon as it heartbeats.
//   - Dead holder: it cannot be told from a slow one; its hold lease ends
//     it. A holder that is never seen ready holds for its full hold lease.
//   - Duplicate holders: prevented by claim validation. A claim that fails
//     validation, until its writer supersedes it, counts as a holder for
//     everybody (over-counting delays, never admits too many); if its writer
//     dies in that instant, it blocks a permit for its hold lease.
//   - Compaction: every decision depends only on the latest record per key
//     and the newest timestamp, which compaction keeps, so a member starting
//     after compaction decides as one that read every record. Kafka's
//     cleaner never touches the active segment. Tombstones last
//     delete.retention.ms, far longer than a member needs to catch up.
//   - Lost records: acks=all with the default unclean.leader.election=false
//     does not lose acknowledged records. If one were lost anyway (unclean
//     election), a lost heartbeat makes a waiter look dead for a while, a
//     lost release delays until the hold lease, and a lost claim whose
//     writer already proceeded would free its permit early: the one case
//     that could admit one holder too many.
//   - Misconfiguration: all members of a scope must use the same Permits;
//     leases travel in each record, so a member is always judged by the
//     lease it promised.
//
// # Observability
//
// Acquire logs, through the injected *slog.Logger, "waiting for startup
// lock" with position, of, holder, held_for and lease (on change, and at
// least every LogInterval), "skipping a silent waiter ...", "releasing the
// startup lock holder" with the reason, and "acquired startup lock" with
// waited (broker time since its request). Lock.Queue returns the scope's
// queue without writing anything, for health checks and diagnostics.
//
// # Code
//
// A session (one Acquire) speaks to the topic only through recordLog
// (log.go): records in, appends out, failures back. saramaLog
// (saramalog.go) is that log over Kafka. session.go is the loop and the
// handling of records, writes.go the requests, heartbeats, claims and
// releases, ready.go the readiness rounds, progress.go the logging, and
// end.go the one path by which a session stops (withdraw when cancelled,
// flush in every case). view.go folds records into a scope's queue and
// derives each member's State; queue.go is Queue's snapshot; record.go the
// wire format; topic.go EnsureTopic.
//
// # Testing
//
// Protocol tests run against an in-memory record log (memlog_test.go): no
// broker, every append under the test's control. The other unit tests run
// against franz-go's kfake. kfake ignores a topic's message.timestamp.type
// and keeps the producer's CreateTime, which is why records carry Clock.Now
// as CreateTime: in tests the fake clock is then also the broker's clock, and
// on a real broker the LogAppendTime replaces it.
package lock

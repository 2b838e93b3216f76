package lock

import "github.com/connect-init/connect-init/internal/clock"

// Clock paces the lock: heartbeats, polls and log throttling. It never
// decides a lease: lease ages come from broker timestamps only. It is
// connect-init's one clock (internal/clock), so that tests drive the lock,
// the gates and the REST checks with the same fake clock.
//
// Now is also used as the CreateTime of records the lock writes; a broker
// discards it on a LogAppendTime topic, and a fake broker that keeps it (such
// as kfake) thereby lets tests control broker time with the same fake clock.
type Clock = clock.Clock

// SystemClock is the Clock backed by package time; it is the default.
type SystemClock = clock.System

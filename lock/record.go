package lock

import (
	"encoding/json"
	"fmt"
	"time"
)

// The wire format. Keys and values are JSON so that an operator can read the
// topic with kafka-console-consumer (--property print.key=true) and see who
// is queued, and so that unrelated scopes can share one topic.
//
// Member key:  {"scope":"<scope>","identity":"<identity>"}
// Release key: {"scope":"<scope>","identity":"<identity>","release":true}
//
// A member key carries that member's own request, heartbeats and claim; only
// the member itself writes it. A release key carries the release of that
// member's hold; any member may write it. Keeping the two apart means a late
// release written by a third party can never overwrite (and, after
// compaction, erase) a newer request of the member.

// recordKey is the key of every lock record.
type recordKey struct {
	Scope    string `json:"scope"`
	Identity string `json:"identity"`
	Release  bool   `json:"release,omitempty"`
}

func (k recordKey) encode() []byte {
	b, err := json.Marshal(k)
	if err != nil { // cannot happen for strings and a bool
		panic(fmt.Sprintf("lock: encoding key: %v", err))
	}
	return b
}

func decodeKey(b []byte) (recordKey, error) {
	var k recordKey
	if err := json.Unmarshal(b, &k); err != nil {
		return k, fmt.Errorf("decoding lock record key %q: %w", b, err)
	}
	if k.Scope == "" || k.Identity == "" {
		return k, fmt.Errorf("lock record key %q has no scope or identity", b)
	}
	return k, nil
}

// formatVersion is the "v" field of every value this package writes.
const formatVersion = 1

// memberValue is the value under a member key.
type memberValue struct {
	V        int    `json:"v"`
	Identity string `json:"identity"`
	URL      string `json:"url,omitempty"`
	// State is StateWaiting or StateHolding: the only states a member
	// writes; the others are derived by readers.
	State State `json:"state"`
	// Ticket is the offset of the member's first request; -1 in the first
	// request itself, which cannot know its own offset ("this record").
	Ticket int64 `json:"ticket"`
	// LeaseMS is the writer's waiter lease: it promises a heartbeat at least
	// every LeaseMS/3 while waiting. Readers judge its liveness by it.
	LeaseMS int64 `json:"lease_ms"`
	// HoldLeaseMS is how long, from this record's timestamp, a holding
	// record keeps its permit if nobody sees the holder ready.
	HoldLeaseMS int64 `json:"hold_lease_ms"`
	// Incarnation identifies one Acquire call (one process start); Seq
	// numbers its writes. Together they let a member recognise its own
	// records and notice a second process with the same identity.
	Incarnation string `json:"incarnation"`
	Seq         uint64 `json:"seq"`
	Host        string `json:"host,omitempty"`
}

// releaseValue is the value under a release key.
type releaseValue struct {
	V        int    `json:"v"`
	Identity string `json:"identity"`
	State    State  `json:"state"` // always StateReleased
	// HoldOffset is the offset of the holding record being released; a
	// release applies only to that hold, never to a later one.
	HoldOffset int64  `json:"hold_offset"`
	Reason     string `json:"reason"`
	By         string `json:"by"`
}

// rawRecord is one record as read from the topic: Timestamp is the broker's
// (LogAppendTime on a correctly configured topic) and Value is nil for a
// tombstone.
type rawRecord struct {
	Offset    int64
	Timestamp time.Time
	Key       []byte
	Value     []byte
}

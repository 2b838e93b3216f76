package chaos

import (
	"encoding/json"
	"time"
)

// decode reads one lock-topic record in the wire format of lock/doc.go. It
// is written again here, not borrowed from the lock package, so that the
// judge does not share the code it judges.
func decode(offset int64, ts time.Time, key, value []byte) Record {
	var k struct {
		Scope    string `json:"scope"`
		Identity string `json:"identity"`
		Release  bool   `json:"release"`
	}
	_ = json.Unmarshal(key, &k)
	r := Record{Offset: offset, Time: ts, Scope: k.Scope, Identity: k.Identity, Release: k.Release, Tombstone: value == nil}
	if value == nil {
		return r
	}
	var v struct {
		State       string `json:"state"`
		Ticket      int64  `json:"ticket"`
		LeaseMS     int64  `json:"lease_ms"`
		HoldLeaseMS int64  `json:"hold_lease_ms"`
		Incarnation string `json:"incarnation"`
	}
	_ = json.Unmarshal(value, &v)
	r.State, r.Ticket, r.Incarnation = v.State, v.Ticket, v.Incarnation
	r.Lease, r.HoldLease = time.Duration(v.LeaseMS)*time.Millisecond, time.Duration(v.HoldLeaseMS)*time.Millisecond
	return r
}

package chaos

import (
	"strings"
	"testing"
	"time"
)

// Histories made by hand: each property's verdict on a history that keeps
// it and on one that breaks it.

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func waiting(off int64, s float64, id string, ticket int64) Record {
	return Record{Offset: off, Time: at(s), Scope: "g", Identity: id, State: "waiting", Ticket: ticket, Lease: 10 * time.Second, HoldLease: 20 * time.Second}
}

func holding(off int64, s float64, id string, ticket int64) Record {
	r := waiting(off, s, id, ticket)
	r.State = "holding"
	return r
}

func properties(vs []Violation) string {
	var p []string
	for _, v := range vs {
		p = append(p, v.Property)
	}
	return strings.Join(p, ",")
}

// a then b, each ready before the next acquires: no violation.
func calm() *History {
	return &History{Scope: "g", Permits: 1, Start: at(0), Bound: time.Minute,
		Records: []Record{waiting(0, 1, "a", -1), waiting(1, 1.1, "b", -1), holding(2, 1.2, "a", 0), holding(3, 4, "b", 1)},
		Contenders: []*Contender{
			{Name: "a", Identity: "a", Acquired: at(1.3), Ready: at(3)},
			{Name: "b", Identity: "b", Acquired: at(4.1), Ready: at(6)},
		}}
}

func TestCheckCalm(t *testing.T) {
	if vs := Check(calm()); len(vs) != 0 {
		t.Fatalf("violations in a calm history: %v", vs)
	}
}

func TestCheckSafety(t *testing.T) {
	h := calm()
	h.Contenders[0].Ready = at(5) // a still starting when b acquires
	if got := properties(Check(h)); got != "safety" {
		t.Fatalf("violations %q, want safety", got)
	}
	// An expired hold ends at its claim's time plus its hold lease, not at
	// its ready time.
	h = calm()
	h.Contenders[0].Ready = time.Time{}
	h.Records[3] = holding(3, 21.3, "b", 1)
	h.Contenders[1].Acquired, h.Contenders[1].Ready = at(21.4), at(23)
	if vs := Check(h); len(vs) != 1 || vs[0].Property != "liveness" {
		t.Fatalf("violations %v, want only a's liveness (b acquired after a's hold lease)", vs)
	}
}

func TestCheckOrder(t *testing.T) {
	h := calm()
	// b acquires first while a (earlier ticket) heartbeat 0.9 s before.
	h.Records = []Record{waiting(0, 1, "a", -1), waiting(1, 1.1, "b", -1), holding(2, 1.2, "b", 1), holding(3, 4, "a", 0)}
	h.Contenders[0].Acquired, h.Contenders[0].Ready = at(4.1), at(6)
	h.Contenders[1].Acquired, h.Contenders[1].Ready = at(1.3), at(3)
	if got := properties(Check(h)); got != "order" {
		t.Fatalf("violations %q, want order", got)
	}
	// The same with a silent for longer than its lease: a skipped waiter.
	h.Records = []Record{waiting(0, 1, "a", -1), waiting(1, 11.5, "b", -1), holding(2, 11.6, "b", 1), holding(3, 14, "a", 0)}
	h.Contenders[0].Acquired, h.Contenders[0].Ready = at(14.1), at(16)
	h.Contenders[1].Acquired, h.Contenders[1].Ready = at(11.7), at(13)
	if vs := Check(h); len(vs) != 0 {
		t.Fatalf("violations %v for a skipped silent waiter", vs)
	}
}

// The shape of round seed 13389776: b's first request lands at offset 0
// but its acknowledgement is lost (a follower was killed under acks=all),
// so b writes it again at offset 2, after a requested at offset 1. The lock
// keeps b's first ticket (0) and serves b first; so must the judge. The
// same second request from a new process start (another incarnation) is a
// new ticket, and then b going first is out of order.
func TestCheckOrderRequestWrittenAgain(t *testing.T) {
	rec := func(r Record, inc string) Record { r.Incarnation = inc; return r }
	h := calm()
	h.Records = []Record{
		rec(waiting(0, 1, "b", -1), "b1"),
		rec(waiting(1, 1.1, "a", -1), "a1"),
		rec(waiting(2, 1.2, "b", -1), "b1"),
		rec(holding(3, 1.3, "b", 0), "b1"),
		rec(holding(4, 4, "a", 1), "a1"),
	}
	h.Contenders[0].Acquired, h.Contenders[0].Ready = at(4.1), at(6)
	h.Contenders[1].Acquired, h.Contenders[1].Ready = at(1.4), at(3)
	if vs := Check(h); len(vs) != 0 {
		t.Fatalf("violations %v for a request written again by the same process", vs)
	}
	h.Records[2].Incarnation, h.Records[3].Incarnation = "b2", "b2"
	h.Records[3].Ticket = 2
	if got := properties(Check(h)); got != "order" {
		t.Fatalf("violations %q, want order for a new start that went first", got)
	}
}

func TestCheckLivenessAndExits(t *testing.T) {
	h := calm()
	h.Contenders[1].Ready = time.Time{}
	if got := properties(Check(h)); got != "liveness" {
		t.Fatalf("violations %q, want liveness", got)
	}
	h.Contenders[1].Killed = true // killed on purpose: excused
	if vs := Check(h); len(vs) != 0 {
		t.Fatalf("violations %v for a contender the harness killed", vs)
	}
	h = calm()
	h.Bound = 5 * time.Second
	if got := properties(Check(h)); got != "liveness" {
		t.Fatalf("violations %q, want liveness beyond the bound", got)
	}
	h = calm()
	h.Contenders[1].Exited, h.Contenders[1].ExitCode = true, 1
	if got := properties(Check(h)); got != "false exit" {
		t.Fatalf("violations %q, want false exit", got)
	}
	h = calm()
	h.Contenders[1].Acquired, h.Contenders[1].Ready, h.Contenders[1].Unlocked = time.Time{}, time.Time{}, at(30)
	h.Records = h.Records[:3]
	if vs := Check(h); len(vs) != 0 {
		t.Fatalf("violations %v for a start without the lock", vs)
	}
}

// decode reads the wire format of lock/doc.go: a request, a claim, a
// release and a tombstone.
func TestDecode(t *testing.T) {
	key := []byte(`{"scope":"g","identity":"http://w:8083/"}`)
	r := decode(7, at(1), key, []byte(`{"v":1,"identity":"http://w:8083/","state":"waiting","ticket":-1,"lease_ms":30000,"hold_lease_ms":180000,"incarnation":"x","seq":1}`))
	if r.Scope != "g" || r.Identity != "http://w:8083/" || r.State != "waiting" || r.Ticket != -1 || r.Lease != 30*time.Second || r.HoldLease != 3*time.Minute || r.Offset != 7 || r.Incarnation != "x" {
		t.Fatalf("request decoded as %+v", r)
	}
	r = decode(8, at(2), []byte(`{"scope":"g","identity":"http://w:8083/","release":true}`), []byte(`{"v":1,"state":"released","hold_offset":7,"reason":"ready"}`))
	if !r.Release || r.State != "released" {
		t.Fatalf("release decoded as %+v", r)
	}
	if r = decode(9, at(3), key, nil); !r.Tombstone || r.Release {
		t.Fatalf("tombstone decoded as %+v", r)
	}
}

func TestRecordLines(t *testing.T) {
	h := calm()
	h.Contenders[0].Identity = "http://a:8083/"
	h.Records[0].Identity, h.Records[0].Incarnation = "http://a:8083/", "i1"
	got := strings.Split(strings.TrimSpace(h.RecordLines()), "\n")
	if len(got) != 4 || !strings.Contains(got[0], " a ") || !strings.Contains(got[0], "ticket  -1 inc i1") || !strings.Contains(got[3], "holding") {
		t.Fatalf("record lines:\n%s", strings.Join(got, "\n"))
	}
}

package proto

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// canonicalAssignment returns a copy with every list sorted. Encoding groups
// tasks by connector (as Kafka does), so a decode-encode-decode cycle keeps
// the same connectors and tasks but not necessarily their order; values are
// "equivalent" when their canonical forms are equal.
func canonicalAssignment(a Assignment) Assignment {
	sortTasks := func(ts []TaskID) []TaskID {
		ts = slices.Clone(ts)
		slices.SortFunc(ts, func(x, y TaskID) int {
			return cmp.Or(strings.Compare(x.Connector, y.Connector), cmp.Compare(x.Task, y.Task))
		})
		return ts
	}
	sortStrings := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	a.Connectors = sortStrings(a.Connectors)
	a.Tasks = sortTasks(a.Tasks)
	a.RevokedConnectors = sortStrings(a.RevokedConnectors)
	a.RevokedTasks = sortTasks(a.RevokedTasks)
	return a
}

func canonicalMetadata(m MemberMetadata) MemberMetadata {
	if m.Allocation != nil {
		a := canonicalAssignment(*m.Allocation)
		m.Allocation = &a
	}
	return m
}

func TestRoundTripMemberMetadata(t *testing.T) {
	alloc := &Assignment{Version: 1, Leader: "connect-1-5f0c", LeaderURL: "http://connect-1:8083/", ConfigOffset: 42,
		Connectors: []string{"jdbc-source", "s3-sink"}, Tasks: []TaskID{{"jdbc-source", 0}, {"s3-sink", 0}, {"s3-sink", 1}}}
	cases := map[string]MemberMetadata{
		"zero":                  {},
		"v0":                    {Version: 0, URL: "http://connect-1:8083/", ConfigOffset: 819},
		"v1 nil allocation":     {Version: 1, URL: "https://connect-2.example:8443/", ConfigOffset: -1},
		"v1 allocation":         {Version: 1, URL: "http://connect-1:8083/", ConfigOffset: 42, Allocation: alloc},
		"v2 allocation":         {Version: 2, URL: "http://connect-1:8083/", ConfigOffset: 42, Allocation: alloc},
		"v0 with an allocation": {Version: 0, URL: "u", ConfigOffset: 1, Allocation: &Assignment{Version: 1}},
		"unicode url":           {Version: 2, URL: "http://wörker:8083/", ConfigOffset: 1 << 40},
		"max length url":        {Version: 1, URL: strings.Repeat("x", 32767)},
		"future version":        {Version: 9, URL: "u", ConfigOffset: 3},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeMemberMetadata(want.Encode())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestRoundTripAssignment(t *testing.T) {
	cases := map[string]Assignment{
		"zero":            {},
		"v0 empty":        {Version: 0, Leader: "l", LeaderURL: "http://l:8083/", ConfigOffset: -1},
		"v0 full":         {Version: 0, Leader: "l", LeaderURL: "u", ConfigOffset: 3, Connectors: []string{"a", "b"}, Tasks: []TaskID{{"a", 0}, {"b", 0}, {"b", 1}}},
		"v0 with revoked": {Version: 0, RevokedTasks: []TaskID{{"a", 0}}},
		"v0 with delay":   {Version: 0, Delay: 5},
		"v1 mismatch":     {Version: 1, Error: AssignmentConfigMismatch, Leader: "x", LeaderURL: "http://10.0.50.95:8083/", ConfigOffset: 819},
		"v2 everything": {Version: 2, Leader: "l", LeaderURL: "u", ConfigOffset: 1<<62 + 1,
			Connectors: []string{"a"}, Tasks: []TaskID{{"a", 0}, {"c", 7}},
			RevokedConnectors: []string{"b"}, RevokedTasks: []TaskID{{"b", 0}, {"b", 1}}, Delay: 300000},
		"tasks only":         {Version: 1, Tasks: []TaskID{{"only-tasks", 0}}},
		"negative delay":     {Version: 1, Delay: -1},
		"empty connector id": {Version: 1, Connectors: []string{""}, Tasks: []TaskID{{"", 3}}},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeAssignment(want.Encode())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestEncodeGroupsByConnector pins the Kafka asMap grouping: one entry per
// connector in first-appearance order, connectors before tasks, so the
// decoded task order may differ from the input order.
func TestEncodeGroupsByConnector(t *testing.T) {
	in := Assignment{Version: 1, Tasks: []TaskID{{"a", 0}, {"b", 0}, {"a", 1}}, Connectors: []string{"b"}}
	got, err := DecodeAssignment(in.Encode())
	if err != nil {
		t.Fatal(err)
	}
	want := []TaskID{{"b", 0}, {"a", 0}, {"a", 1}}
	if !reflect.DeepEqual(got.Tasks, want) {
		t.Fatalf("tasks %v, want %v", got.Tasks, want)
	}
	if !reflect.DeepEqual(canonicalAssignment(got), canonicalAssignment(in)) {
		t.Fatal("not equivalent")
	}
}

func TestEncodePanicsOnOverlongString(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("want panic")
		}
	}()
	MemberMetadata{URL: strings.Repeat("x", 32768)}.Encode()
}

func TestProtocolNames(t *testing.T) {
	for _, c := range []struct {
		name string
		v    int16
	}{{"default", 0}, {"compatible", 1}, {"sessioned", 2}} {
		if v, ok := ProtocolVersion(c.name); !ok || v != c.v {
			t.Errorf("ProtocolVersion(%q) = %d, %v", c.name, v, ok)
		}
		if n, ok := ProtocolName(c.v); !ok || n != c.name {
			t.Errorf("ProtocolName(%d) = %q, %v", c.v, n, ok)
		}
	}
	if v, ok := ProtocolVersion("SESSIONED"); !ok || v != 2 {
		t.Error("names are case-insensitive in Kafka")
	}
	if _, ok := ProtocolVersion("consumer"); ok {
		t.Error("consumer is not a Connect protocol")
	}
	if _, ok := ProtocolName(3); ok {
		t.Error("version 3 is not defined")
	}
	if TaskID.String(TaskID{"jdbc", 2}) != "jdbc-2" {
		t.Error("TaskID.String")
	}
}

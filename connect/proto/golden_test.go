package proto

import (
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// hx joins hex chunks, ignoring spaces, so golden vectors can be written one
// field per line with a comment. The vectors below were written by hand
// from the Java schema definitions (ConnectProtocol.CONFIG_STATE_V0,
// ASSIGNMENT_V0, IncrementalCooperativeConnectProtocol.ALLOCATION_V1,
// ASSIGNMENT_V1), not produced by this package's encoder, so that a mistake
// shared by encoder and decoder cannot cancel out.
func hx(t testing.TB, chunks ...string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(strings.Join(chunks, ""), " ", ""))
	if err != nil {
		t.Fatalf("bad golden hex: %v", err)
	}
	return b
}

// url15 is the 15-byte STRING "http://w1:8083/".
const url15 = "000f 687474703a2f2f77313a383038332f"

func goldenMetadata(t testing.TB) []struct {
	name string
	wire []byte
	want MemberMetadata
	// exact: Encode(want) must reproduce wire byte for byte (false for
	// inputs only a tolerant decoder sees).
	exact bool
} {
	return []struct {
		name  string
		wire  []byte
		want  MemberMetadata
		exact bool
	}{
		{
			name: "v0 default protocol",
			wire: hx(t,
				"0000",             // Version INT16 = 0
				url15,              // Url STRING: len 15, "http://w1:8083/"
				"0000000000000333", // ConfigOffset INT64 = 819
			),
			want:  MemberMetadata{Version: 0, URL: "http://w1:8083/", ConfigOffset: 819},
			exact: true,
		},
		{
			name: "v1 compatible, nothing read, no previous allocation",
			wire: hx(t,
				"0001",             // Version = 1
				url15,              // Url
				"ffffffffffffffff", // ConfigOffset = -1 (nothing consumed yet)
				"ffffffff",         // Allocation NULLABLE_BYTES length -1 = null
			),
			want:  MemberMetadata{Version: 1, URL: "http://w1:8083/", ConfigOffset: -1},
			exact: true,
		},
		{
			name: "v2 sessioned with previous allocation",
			wire: hx(t,
				"0002",             // Version = 2
				url15,              // Url
				"0000000000000005", // ConfigOffset = 5
				"0000002d",         // Allocation NULLABLE_BYTES length 45, then a whole assignment:
				"0002",             //   Version = 2 (header of the nested assignment)
				"0000",             //   Error = 0
				"0001 6c",          //   Leader STRING "l"
				"0001 75",          //   LeaderUrl STRING "u"
				"0000000000000005", //   ConfigOffset = 5
				"00000001",         //   Assignment ARRAY: 1 connector entry
				"0001 63",          //     Connector "c"
				"00000002",         //     Tasks ARRAY: 2 entries
				"ffffffff",         //       -1 = the connector itself
				"00000000",         //       task 0
				"00000000",         //   Revoked ARRAY: 0 entries
				"00000000",         //   ScheduledDelay INT32 = 0
			),
			want: MemberMetadata{Version: 2, URL: "http://w1:8083/", ConfigOffset: 5, Allocation: &Assignment{
				Version: 2, Leader: "l", LeaderURL: "u", ConfigOffset: 5,
				Connectors: []string{"c"}, Tasks: []TaskID{{"c", 0}},
			}},
			exact: true,
		},
		{
			name: "v1 without the optional allocation field (tolerated by ALLOCATION_V1)",
			wire: hx(t,
				"0001",             // Version = 1
				url15,              // Url
				"0000000000000000", // ConfigOffset = 0
			),
			want: MemberMetadata{Version: 1, URL: "http://w1:8083/", ConfigOffset: 0},
		},
		{
			name: "v0 followed by an allocation (the v1 decoder Kafka uses reads it)",
			wire: hx(t,
				"0000", url15, "0000000000000001",
				"0000001c",                   // Allocation length 28
				"0001 0000 0000 0000",        //   v1, no error, Leader "", LeaderUrl ""
				"0000000000000001",           //   ConfigOffset 1
				"ffffffff ffffffff 00000000", //   Assignment null, Revoked null, Delay 0
			),
			want: MemberMetadata{Version: 0, URL: "http://w1:8083/", ConfigOffset: 1, Allocation: &Assignment{Version: 1, ConfigOffset: 1}},
		},
		{
			name: "future version 7 parsed as v1, trailing bytes ignored",
			wire: hx(t, "0007", url15, "0000000000000009", "ffffffff", "deadbeef"),
			want: MemberMetadata{Version: 7, URL: "http://w1:8083/", ConfigOffset: 9},
		},
	}
}

func goldenAssignments(t testing.TB) []struct {
	name  string
	wire  []byte
	want  Assignment
	exact bool
} {
	return []struct {
		name  string
		wire  []byte
		want  Assignment
		exact bool
	}{
		{
			name: "v0 eager: connector plus tasks of two connectors",
			wire: hx(t,
				"0000",             // Version = 0
				"0000",             // Error = 0
				"0002 6c31",        // Leader "l1"
				"0005 753a383038",  // LeaderUrl "u:808"
				"0000000000000333", // ConfigOffset = 819
				"00000002",         // Assignment ARRAY: 2 connector entries
				"0001 61",          //   Connector "a"
				"00000003",         //   Tasks: 3
				"ffffffff",         //     -1 = connector a itself
				"00000000",         //     task a-0
				"00000001",         //     task a-1
				"0001 62",          //   Connector "b"
				"00000001",         //   Tasks: 1
				"00000000",         //     task b-0
				/* v0: no Revoked, no Delay */
			),
			want: Assignment{Version: 0, Leader: "l1", LeaderURL: "u:808", ConfigOffset: 819,
				Connectors: []string{"a"}, Tasks: []TaskID{{"a", 0}, {"a", 1}, {"b", 0}}},
			exact: true,
		},
		{
			name: "v1 config mismatch, incident 1 shape (leader URL is an IP)",
			wire: hx(t,
				"0001",    // Version = 1
				"0001",    // Error = 1 CONFIG_MISMATCH
				"0001 78", // Leader "x"
				"0017",    // LeaderUrl: 23 bytes
				"687474703a2f2f31302e302e35302e39353a383038332f", // "http://10.0.50.95:8083/"
				"0000000000000333", // ConfigOffset = 819
				"00000000",         // Assignment: 0 entries
				"00000000",         // Revoked: 0 entries
				"00000000",         // Delay = 0
			),
			want:  Assignment{Version: 1, Error: 1, Leader: "x", LeaderURL: "http://10.0.50.95:8083/", ConfigOffset: 819},
			exact: true,
		},
		{
			name: "v2 with revocations and a scheduled delay",
			wire: hx(t,
				"0002",             // Version = 2
				"0000",             // Error = 0
				"0000",             // Leader ""
				"0000",             // LeaderUrl ""
				"000000000000000a", // ConfigOffset = 10
				"00000001",         // Assignment: 1 entry
				"0001 61",          //   "a"
				"00000001",         //   1 task
				"00000002",         //     a-2
				"00000002",         // Revoked: 2 entries
				"0001 62",          //   "b"
				"00000001",         //   1 task
				"ffffffff",         //     connector b
				"0001 63",          //   "c"
				"00000002",         //   2 tasks
				"00000000",         //     c-0
				"00000003",         //     c-3
				"0000ea60",         // Delay = 60000 ms
			),
			want: Assignment{Version: 2, ConfigOffset: 10, Tasks: []TaskID{{"a", 2}},
				RevokedConnectors: []string{"b"}, RevokedTasks: []TaskID{{"c", 0}, {"c", 3}}, Delay: 60000},
			exact: true,
		},
		{
			name: "v1 truncated after ConfigOffset: Assignment, Revoked, Delay take defaults",
			wire: hx(t, "0001", "0000", "0001 6c", "0001 75", "0000000000000007"),
			want: Assignment{Version: 1, Leader: "l", LeaderURL: "u", ConfigOffset: 7},
		},
		{
			name: "v1 null arrays (ArrayOf.nullable), Delay missing",
			wire: hx(t, "0001", "0000", "0000", "0000", "0000000000000007", "ffffffff", "80000000"),
			want: Assignment{Version: 1, ConfigOffset: 7},
		},
		{
			name: "same connector in two entries, negative non-sentinel task kept as a task",
			wire: hx(t, "0001 0000 0000 0000", "0000000000000001",
				"00000003",
				"0001 61 00000001 00000001",          // a: [1]
				"0001 62 00000001 ffffffff",          // b: [-1]
				"0001 61 00000002 ffffffff fffffffe", // a: [-1, -2]
				"00000000 00000000",
				"cafe", // trailing bytes are ignored
			),
			want: Assignment{Version: 1, ConfigOffset: 1, Connectors: []string{"b", "a"}, Tasks: []TaskID{{"a", 1}, {"a", -2}}},
		},
	}
}

func TestGoldenMemberMetadata(t *testing.T) {
	for _, tc := range goldenMetadata(t) {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeMemberMetadata(tc.wire)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decode:\n got %+v\nwant %+v", got, tc.want)
			}
			if tc.exact {
				if enc := tc.want.Encode(); !reflect.DeepEqual(enc, tc.wire) {
					t.Fatalf("encode:\n got %x\nwant %x", enc, tc.wire)
				}
			}
		})
	}
}

func TestGoldenAssignment(t *testing.T) {
	for _, tc := range goldenAssignments(t) {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeAssignment(tc.wire)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decode:\n got %+v\nwant %+v", got, tc.want)
			}
			if tc.exact {
				if enc := tc.want.Encode(); !reflect.DeepEqual(enc, tc.wire) {
					t.Fatalf("encode:\n got %x\nwant %x", enc, tc.wire)
				}
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	meta := []struct {
		name  string
		wire  []byte
		empty bool
	}{
		{"nil", nil, true},
		{"empty", []byte{}, true},
		{"one byte", hx(t, "00"), false},
		{"negative version", hx(t, "ffff", url15, "0000000000000000"), false},
		{"negative url length", hx(t, "0000 ffff 0000000000000000"), false},
		{"url longer than input", hx(t, "0000 0010 687474703a2f2f"), false},
		{"offset truncated", hx(t, "0000", url15, "00000000"), false},
		{"allocation length truncated", hx(t, "0001", url15, "0000000000000000", "0000"), false},
		{"allocation longer than input", hx(t, "0001", url15, "0000000000000000", "00000010 0001"), false},
		{"allocation present but empty", hx(t, "0001", url15, "0000000000000000", "00000000"), false},
		{"allocation missing its offset", hx(t, "0001", url15, "0000000000000000", "00000008 0001 0000 0000 0000"), false},
	}
	for _, tc := range meta {
		t.Run("metadata "+tc.name, func(t *testing.T) {
			_, err := DecodeMemberMetadata(tc.wire)
			if err == nil {
				t.Fatal("want error")
			}
			if errors.Is(err, ErrEmpty) != tc.empty || errors.Is(err, ErrMalformed) == tc.empty {
				t.Fatalf("wrong error class: %v", err)
			}
		})
	}
	asg := []struct {
		name  string
		wire  []byte
		empty bool
	}{
		{"empty (no assignment yet)", []byte{}, true},
		{"negative version", hx(t, "8000 0000 0000 0000 0000000000000000"), false},
		{"missing leader url", hx(t, "0001 0000 0000"), false},
		{"missing config offset", hx(t, "0001 0000 0000 0000"), false},
		{"negative tasks count", hx(t, "0001 0000 0000 0000 0000000000000000 00000001 0001 61 ffffffff"), false},
		{"array count beyond input", hx(t, "0001 0000 0000 0000 0000000000000000 7fffffff 00"), false},
		{"partial delay", hx(t, "0001 0000 0000 0000 0000000000000000 00000000 00000000 0000"), false},
		{"1 stray byte where the array count is", hx(t, "0001 0000 0000 0000 0000000000000000 00"), false},
	}
	for _, tc := range asg {
		t.Run("assignment "+tc.name, func(t *testing.T) {
			_, err := DecodeAssignment(tc.wire)
			if err == nil {
				t.Fatal("want error")
			}
			if errors.Is(err, ErrEmpty) != tc.empty || errors.Is(err, ErrMalformed) == tc.empty {
				t.Fatalf("wrong error class: %v", err)
			}
		})
	}
}

package proto

import (
	"reflect"
	"strings"
	"testing"
)

func connectMember(id, host, url string, offset int64, asg *Assignment) Member {
	m := Member{MemberID: id, ClientID: "connect-" + id, ClientHost: host, ProtocolType: ProtocolType, Protocol: ProtocolSessioned}
	md := MemberMetadata{Version: 2, URL: url, ConfigOffset: offset}
	if asg != nil {
		a := *asg
		m.Assignment = &a
	}
	m.Metadata = &md
	return m
}

func TestFindForeign(t *testing.T) {
	// Incident 1: cluster B's worker (config topic read up to 819) is the
	// leader of the shared group; our config topic is empty (end offset 0).
	foreignAsg := &Assignment{Version: 2, Error: AssignmentNoError, Leader: "b-1", LeaderURL: "http://10.0.50.95:8083/", ConfigOffset: 819}
	ourAsg := &Assignment{Version: 2, Leader: "a-1", LeaderURL: "http://connect-a1:8083/", ConfigOffset: 12}

	tests := []struct {
		name    string
		members []Member
		end     int64
		want    map[string][]Reason // member id -> reasons
		msgHas  map[string][]string // member id -> substrings of Message
	}{
		{
			name:    "empty group",
			members: nil, end: 0, want: map[string][]Reason{},
		},
		{
			name: "healthy group: caught up (offset == end) and behind",
			members: []Member{
				connectMember("a-1", "/10.0.0.1", "http://connect-a1:8083/", 12, ourAsg),
				connectMember("a-2", "/10.0.0.2", "http://connect-a2:8083/", 7, ourAsg),
				connectMember("a-3", "/10.0.0.3", "http://connect-a3:8083/", -1, nil),
			},
			end: 12, want: map[string][]Reason{},
		},
		{
			name: "new cluster, empty config topic: -1 is fine, end offset 0",
			members: []Member{
				connectMember("a-1", "/10.0.0.1", "http://connect-a1:8083/", -1, &Assignment{Version: 2, Leader: "a-1", ConfigOffset: -1}),
			},
			end: 0, want: map[string][]Reason{},
		},
		{
			name: "incident 1: foreign leader and our worker holding its assignment",
			members: []Member{
				connectMember("b-1", "/10.0.50.95", "http://10.0.50.95:8083/", 819, foreignAsg),
				connectMember("a-1", "/10.0.0.1", "http://connect-a1:8083/", -1, foreignAsg),
			},
			end: 0,
			want: map[string][]Reason{
				"b-1": {ReasonConfigOffsetAhead, ReasonAssignmentOffsetAhead},
				"a-1": {ReasonAssignmentOffsetAhead},
			},
			msgHas: map[string][]string{
				"b-1": {`"b-1"`, "/10.0.50.95", "http://10.0.50.95:8083/", "reported config offset 819 vs our config topic's end offset 0", `client id "connect-b-1"`},
				"a-1": {`leader "b-1" (http://10.0.50.95:8083/)`, "at config offset 819", "reported config offset -1 vs our config topic's end offset 0"},
			},
		},
		{
			name: "one past the end is unreachable",
			members: []Member{
				connectMember("b-1", "/h", "http://b:8083/", 13, nil),
			},
			end:  12,
			want: map[string][]Reason{"b-1": {ReasonConfigOffsetAhead}},
		},
		{
			name: "unknown end offset disables offset checks",
			members: []Member{
				connectMember("b-1", "/h", "http://b:8083/", 819, foreignAsg),
			},
			end: -1, want: map[string][]Reason{},
		},
		{
			name: "consumer group with our group.id",
			members: []Member{
				{MemberID: "consumer-1-x", ClientID: "consumer-1", ClientHost: "/10.1.1.1", ProtocolType: "consumer", Protocol: "range"},
			},
			end:    5,
			want:   map[string][]Reason{"consumer-1-x": {ReasonProtocolType}},
			msgHas: map[string][]string{"consumer-1-x": {`"consumer"`, `"range"`, "/10.1.1.1", "advertised URL unknown"}},
		},
		{
			name: "undecodable bytes count, empty bytes do not",
			members: func() []Member {
				bad := Member{MemberID: "bad", ProtocolType: ProtocolType}
				bad.Decode([]byte{0xff, 0xff, 0, 0}, nil)
				notStable := Member{MemberID: "not-stable", ProtocolType: ProtocolType}
				notStable.Decode(nil, nil)
				return []Member{bad, notStable}
			}(),
			end:    5,
			want:   map[string][]Reason{"bad": {ReasonUndecodable}},
			msgHas: map[string][]string{"bad": {"unsupported Connect protocol version -1"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FindForeign(tc.members, tc.end)
			reasons := map[string][]Reason{}
			for _, f := range got {
				reasons[f.Member.MemberID] = f.Reasons
				if f.OurEndOffset != tc.end || f.String() != f.Message {
					t.Errorf("bad Foreign %+v", f)
				}
				for _, r := range f.Reasons {
					if !f.Has(r) {
						t.Errorf("Has(%s) false", r)
					}
				}
				for _, s := range tc.msgHas[f.Member.MemberID] {
					if !strings.Contains(f.Message, s) {
						t.Errorf("message for %s lacks %q:\n%s", f.Member.MemberID, s, f.Message)
					}
				}
				t.Log(f.Message)
			}
			if !reflect.DeepEqual(reasons, tc.want) {
				t.Fatalf("reasons %v, want %v", reasons, tc.want)
			}
		})
	}
}

func TestMemberDecode(t *testing.T) {
	md := MemberMetadata{Version: 1, URL: "http://a:8083/", ConfigOffset: 4}
	as := Assignment{Version: 1, Leader: "a", LeaderURL: "http://a:8083/", ConfigOffset: 4}
	m := Member{MemberID: "a", ProtocolType: ProtocolType, Protocol: ProtocolCompatible}
	m.Decode(md.Encode(), as.Encode())
	if m.MetadataErr != nil || m.AssignmentErr != nil || !reflect.DeepEqual(*m.Metadata, md) || !reflect.DeepEqual(*m.Assignment, as) {
		t.Fatalf("%+v", m)
	}
	if m.URL() != "http://a:8083/" {
		t.Fatal(m.URL())
	}
	c := Member{ProtocolType: "consumer"}
	c.Decode(md.Encode(), as.Encode())
	if c.Metadata != nil || c.Assignment != nil || c.MetadataErr != nil || c.AssignmentErr != nil {
		t.Fatalf("decoded a non-connect member: %+v", c)
	}
}

func TestLeaderFirstURLs(t *testing.T) {
	asg := &Assignment{Leader: "m3", LeaderURL: "http://three:8083/"}
	members := []Member{
		connectMember("m1", "", "http://one:8083/", 1, asg),
		connectMember("m2", "", "http://one:8083/", 1, asg), // duplicate URL
		connectMember("m3", "", "http://three:8083/", 1, asg),
		{MemberID: "m4", ProtocolType: ProtocolType}, // no metadata
		connectMember("m5", "", "", 1, nil),          // empty URL
	}
	want := []string{"http://three:8083/", "http://one:8083/"}
	if got := LeaderFirstURLs(members); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}

	// A leader that is not (or no longer) a member is still listed first,
	// from its assignment.
	gone := &Assignment{Leader: "gone", LeaderURL: "http://10.0.50.95:8083/"}
	members = []Member{connectMember("m1", "", "http://one:8083/", 1, gone)}
	want = []string{"http://10.0.50.95:8083/", "http://one:8083/"}
	if got := LeaderFirstURLs(members); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}

	// No assignment at all: member order.
	members = []Member{connectMember("m1", "", "http://b:8083/", 1, nil), connectMember("m2", "", "http://a:8083/", 1, nil)}
	want = []string{"http://b:8083/", "http://a:8083/"}
	if got := LeaderFirstURLs(members); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := LeaderFirstURLs(nil); got != nil {
		t.Fatalf("got %v", got)
	}
}

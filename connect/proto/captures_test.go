package proto

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// capture is one file in testdata/captures: raw bytes seen on the wire from
// a real Connect worker (DescribeGroups MemberMetadata / MemberAssignment).
// See testdata/captures/README.md for the format.
type capture struct {
	Description string          `json:"description"`
	Source      string          `json:"source"`
	Kind        string          `json:"kind"`     // "metadata" or "assignment"
	Protocol    string          `json:"protocol"` // group protocol at capture time, optional
	Hex         string          `json:"hex"`
	Want        json.RawMessage `json:"want"` // optional expected decoded value
}

// TestCaptures decodes every capture, checks the header version against the
// group protocol, the optional expected value, and that re-encoding yields an
// equivalent value.
func TestCaptures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "captures", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no captures in testdata/captures: the real workers' bytes belong there (see its README)")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var c capture
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&c); err != nil {
				t.Fatalf("bad capture file: %v", err)
			}
			wire, err := hex.DecodeString(strings.Join(strings.Fields(c.Hex), ""))
			if err != nil {
				t.Fatalf("bad hex: %v", err)
			}
			wantVersion, checkVersion := ProtocolVersion(c.Protocol)
			switch c.Kind {
			case "metadata":
				got, err := DecodeMemberMetadata(wire)
				if err != nil {
					t.Fatal(err)
				}
				if checkVersion && got.Version != wantVersion {
					t.Errorf("version %d under protocol %q, want %d", got.Version, c.Protocol, wantVersion)
				}
				if len(c.Want) > 0 {
					var want MemberMetadata
					strictUnmarshal(t, c.Want, &want)
					if !reflect.DeepEqual(canonicalMetadata(got), canonicalMetadata(want)) {
						t.Errorf("decoded\n %+v\nwant\n %+v", got, want)
					}
				}
				again, err := DecodeMemberMetadata(got.Encode())
				if err != nil || !reflect.DeepEqual(canonicalMetadata(again), canonicalMetadata(got)) {
					t.Errorf("re-encode: %+v, %v", again, err)
				}
				t.Logf("%+v", got)
			case "assignment":
				got, err := DecodeAssignment(wire)
				if err != nil {
					t.Fatal(err)
				}
				if checkVersion && got.Version != wantVersion {
					t.Errorf("version %d under protocol %q, want %d", got.Version, c.Protocol, wantVersion)
				}
				if len(c.Want) > 0 {
					var want Assignment
					strictUnmarshal(t, c.Want, &want)
					if !reflect.DeepEqual(canonicalAssignment(got), canonicalAssignment(want)) {
						t.Errorf("decoded\n %+v\nwant\n %+v", got, want)
					}
				}
				again, err := DecodeAssignment(got.Encode())
				if err != nil || !reflect.DeepEqual(canonicalAssignment(again), canonicalAssignment(got)) {
					t.Errorf("re-encode: %+v, %v", again, err)
				}
				t.Logf("%+v", got)
			default:
				t.Fatalf("kind %q, want metadata or assignment", c.Kind)
			}
		})
	}
}

func strictUnmarshal(t *testing.T, raw []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("bad want: %v", err)
	}
}

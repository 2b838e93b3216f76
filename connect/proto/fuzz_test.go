package proto

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzDecodeMemberMetadata checks that garbage never panics and that
// whatever decodes re-encodes to bytes that decode to an equivalent value.
func FuzzDecodeMemberMetadata(f *testing.F) {
	for _, g := range goldenMetadata(f) {
		f.Add(g.wire)
	}
	for _, g := range goldenAssignments(f) {
		f.Add(g.wire)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMemberMetadata(b)
		if err != nil {
			return
		}
		enc := m.Encode()
		again, err := DecodeMemberMetadata(enc)
		if err != nil {
			t.Fatalf("re-encoded %+v does not decode: %v", m, err)
		}
		if !reflect.DeepEqual(canonicalMetadata(again), canonicalMetadata(m)) {
			t.Fatalf("round trip changed the value:\nfirst %+v\nagain %+v", m, again)
		}
		// Our encoding is canonical: encoding what it produced is stable.
		if !bytes.Equal(again.Encode(), enc) {
			t.Fatalf("encoding not stable:\n%x\n%x", enc, again.Encode())
		}
	})
}

// FuzzDecodeAssignment is FuzzDecodeMemberMetadata for assignments.
func FuzzDecodeAssignment(f *testing.F) {
	for _, g := range goldenAssignments(f) {
		f.Add(g.wire)
	}
	for _, g := range goldenMetadata(f) {
		f.Add(g.wire)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeAssignment(b)
		if err != nil {
			return
		}
		enc := a.Encode()
		again, err := DecodeAssignment(enc)
		if err != nil {
			t.Fatalf("re-encoded %+v does not decode: %v", a, err)
		}
		if !reflect.DeepEqual(canonicalAssignment(again), canonicalAssignment(a)) {
			t.Fatalf("round trip changed the value:\nfirst %+v\nagain %+v", a, again)
		}
		if !bytes.Equal(again.Encode(), enc) {
			t.Fatalf("encoding not stable:\n%x\n%x", enc, again.Encode())
		}
	})
}

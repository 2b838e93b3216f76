package doctor

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// enc writes Kafka's primitive types, classic or flexible, for test
// records built by the schema (GroupMetadataKey/GroupMetadataValue).
type enc struct {
	b        []byte
	flexible bool
}

func (e *enc) i16(v int16) *enc { e.b = binary.BigEndian.AppendUint16(e.b, uint16(v)); return e }
func (e *enc) i32(v int32) *enc { e.b = binary.BigEndian.AppendUint32(e.b, uint32(v)); return e }
func (e *enc) i64(v int64) *enc { e.b = binary.BigEndian.AppendUint64(e.b, uint64(v)); return e }
func (e *enc) uv(v int) *enc    { e.b = binary.AppendUvarint(e.b, uint64(v)); return e }

func (e *enc) str(s string) *enc {
	if e.flexible {
		return e.uv(len(s) + 1).raw([]byte(s))
	}
	return e.i16(int16(len(s))).raw([]byte(s))
}

func (e *enc) null() *enc {
	if e.flexible {
		return e.uv(0)
	}
	return e.i16(-1)
}

func (e *enc) bytes(b []byte) *enc {
	if e.flexible {
		return e.uv(len(b) + 1).raw(b)
	}
	return e.i32(int32(len(b))).raw(b)
}

func (e *enc) count(n int) *enc {
	if e.flexible {
		return e.uv(n + 1)
	}
	return e.i32(int32(n))
}

func (e *enc) tags() *enc {
	if e.flexible {
		return e.uv(0)
	}
	return e
}

func (e *enc) raw(b []byte) *enc { e.b = append(e.b, b...); return e }

func groupKey(group string) []byte { return (&enc{}).i16(2).str(group).b }

// groupValue is a group metadata value of version v with n Connect
// members, as the coordinator writes it.
func groupValue(v int16, gen int32, n int) []byte {
	e := &enc{flexible: v >= 4}
	e.i16(v)
	e.str("connect").i32(gen).str("sessioned").str("connect-1-abc")
	if v >= 2 {
		e.i64(1765000000000)
	}
	e.count(n)
	for i := range n {
		e.str("connect-" + string(rune('1'+i)) + "-abc")
		if v >= 3 {
			e.null()
		}
		e.str("connect-1").str("/127.0.0.1")
		if v >= 1 {
			e.i32(60000)
		}
		e.i32(10000).bytes([]byte{0, 1, 2}).bytes(nil)
		e.tags()
	}
	return e.tags().b
}

// Every version of the value decodes to its generation, protocol and
// members; a tombstone is a deleted group; other keys are not ours.
func TestDecodeGroupMetadata(t *testing.T) {
	for v := int16(0); v <= 4; v++ {
		gm, err := DecodeGroupMetadata(groupKey("connect-cluster"), groupValue(v, 17, 3))
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		want := GroupMetadata{Group: "connect-cluster", Version: v, ProtocolType: "connect", Generation: 17, Protocol: "sessioned", Leader: "connect-1-abc", Members: 3}
		if gm != want {
			t.Errorf("version %d: %+v, want %+v", v, gm, want)
		}
	}
	// A version 4 value with a tagged field of the group, and a null
	// protocol and leader (an Empty group).
	e := &enc{flexible: true}
	e.i16(4).str("connect").i32(9).null().null().i64(-1).count(0).uv(1).uv(7).uv(2).raw([]byte{1, 2})
	gm, err := DecodeGroupMetadata(groupKey("g"), e.b)
	if err != nil || gm.Generation != 9 || gm.Members != 0 || gm.Protocol != "" {
		t.Errorf("empty group with a tagged field: %+v, %v", gm, err)
	}
	gm, err = DecodeGroupMetadata(groupKey("g"), nil)
	if err != nil || !gm.Deleted || gm.Group != "g" {
		t.Errorf("tombstone: %+v, %v", gm, err)
	}
	offsetCommit := (&enc{}).i16(1).str("g").str("topic").i32(0).b
	if g, ok, err := groupMetadataKey(offsetCommit); ok || err != nil {
		t.Errorf("an offset commit key read as group metadata of %q (%v)", g, err)
	}
}

// A truncated or corrupt record is an error, never a panic or a wrong
// generation.
func TestDecodeGroupMetadataTruncated(t *testing.T) {
	for _, v := range []int16{3, 4} {
		val := groupValue(v, 5, 2)
		for n := range len(val) {
			if _, err := DecodeGroupMetadata(groupKey("g"), val[:n]); err == nil {
				t.Errorf("version %d cut at %d of %d bytes decoded", v, n, len(val))
			}
		}
	}
	if _, _, err := groupMetadataKey([]byte{0, 2, 0, 9, 'a'}); err == nil {
		t.Error("a key whose group id is cut short decoded")
	}
	huge := (&enc{}).i16(3).str("connect").i32(1).str("p").str("l").i64(0).i32(1 << 30).b
	if _, err := DecodeGroupMetadata(groupKey("g"), huge); err == nil {
		t.Error("a member count beyond the record decoded")
	}
}

// The vectors in testdata/ are group metadata records a real broker wrote
// for a real Connect group (dumped by the integration test
// TestDoctorWatchCountsGenerations with CITEST_DUMP_GROUP_METADATA):
// key and value in hex, then the generation and members the workers' own
// logs gave.
func TestDecodeGroupMetadataVectors(t *testing.T) {
	files, _ := filepath.Glob("testdata/groupmeta-*.txt")
	if len(files) == 0 {
		t.Fatal("no vectors in testdata/groupmeta-*.txt")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fields := map[string]string{}
		for _, line := range strings.Split(string(raw), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
				fields[k] = v
			}
		}
		key, err1 := hex.DecodeString(fields["key"])
		val, err2 := hex.DecodeString(fields["value"])
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", f, err1, err2)
		}
		gm, err := DecodeGroupMetadata(key, val)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if got := fmt.Sprintf("%s %d %d %s %s", gm.Group, gm.Generation, gm.Members, gm.ProtocolType, gm.Protocol); got != fields["want"] {
			t.Errorf("%s: decoded %q, want %q", f, got, fields["want"])
		}
	}
}

package doctor

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The group metadata records of __consumer_offsets, as the classic group
// coordinator writes them (Kafka's GroupMetadataKey and GroupMetadataValue
// message schemas, group-coordinator/src/main/resources/common/message/):
// the key is an int16 record type, 2 for group metadata (0 and 1 are
// offset commits, 3 and up the new protocol's records), then the group id
// as an int16-length string; the value is an int16 version, then
// protocolType (string), generation (int32), protocol and leader
// (nullable strings), currentStateTimestamp (int64, version 2 and up) and
// the members. Versions 0-3 use the classic encoding; version 4 is the
// first flexible one (compact strings, arrays and bytes, tagged fields).
// KIP-915 keeps later versions to added tagged fields, so a version above
// 4 is read as 4. A null value is a tombstone: the group was deleted.

// groupMetadataKeyType is the record type of a group metadata key.
const groupMetadataKeyType = 2

// GroupMetadata is what the watcher reads of one group metadata record.
type GroupMetadata struct {
	Group string
	// Deleted is true for a tombstone (the group was deleted); the other
	// fields are then zero.
	Deleted      bool
	Version      int16
	ProtocolType string
	// Generation is the group's generation: each completed join phase
	// (a rebalance) adds one.
	Generation int32
	Protocol   string
	Leader     string
	Members    int
}

// groupMetadataKey returns the group id of a group metadata record's key,
// ok false for every other record of __consumer_offsets.
func groupMetadataKey(key []byte) (group string, ok bool, err error) {
	r := &recordReader{b: key}
	typ := r.int16()
	if r.err != nil {
		return "", false, fmt.Errorf("group metadata key: %w", r.err)
	}
	if typ != groupMetadataKeyType {
		return "", false, nil
	}
	group = r.string()
	if r.err != nil {
		return "", false, fmt.Errorf("group metadata key: %w", r.err)
	}
	return group, true, nil
}

// DecodeGroupMetadata decodes a group metadata record (key and value) of
// __consumer_offsets; a record of another type is an error.
func DecodeGroupMetadata(key, value []byte) (GroupMetadata, error) {
	group, ok, err := groupMetadataKey(key)
	if err != nil {
		return GroupMetadata{}, err
	}
	if !ok {
		return GroupMetadata{}, errors.New("not a group metadata record")
	}
	gm := GroupMetadata{Group: group}
	if value == nil {
		gm.Deleted = true
		return gm, nil
	}
	r := &recordReader{b: value}
	gm.Version = r.int16()
	r.flexible = gm.Version >= 4
	gm.ProtocolType = r.string()
	gm.Generation = r.int32()
	gm.Protocol = r.string()
	gm.Leader = r.string()
	if gm.Version >= 2 {
		r.int64() // currentStateTimestamp
	}
	n := r.arrayLen()
	for i := 0; i < n && r.err == nil; i++ {
		r.member(gm.Version)
	}
	r.taggedFields()
	if r.err != nil {
		return GroupMetadata{}, fmt.Errorf("group metadata value of group %q (version %d): %w", group, gm.Version, r.err)
	}
	gm.Members = n
	return gm, nil
}

// recordReader reads Kafka's primitive types; the first error sticks.
type recordReader struct {
	b        []byte
	flexible bool
	err      error
}

var errShort = errors.New("record too short")

func (r *recordReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = errShort
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *recordReader) int16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *recordReader) int32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *recordReader) int64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *recordReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShort
		return 0
	}
	r.b = r.b[n:]
	return v
}

// length reads a length prefix: int16 (strings) or int32 (bytes, arrays)
// classic, unsigned varint of length+1 flexible; -1 is null.
func (r *recordReader) length(classicBytes int) int {
	if r.flexible {
		v := r.uvarint()
		if v > uint64(len(r.b))+1 {
			r.err = errShort
			return 0
		}
		return int(v) - 1
	}
	if classicBytes == 2 {
		return int(r.int16())
	}
	return int(r.int32())
}

// string reads a string or a nullable string ("" for null).
func (r *recordReader) string() string {
	n := r.length(2)
	if n < 0 {
		return ""
	}
	return string(r.take(n))
}

func (r *recordReader) bytes() {
	if n := r.length(4); n > 0 {
		r.take(n)
	}
}

// arrayLen reads an array's length; its elements hold at least a byte
// each, which bounds a corrupt length.
func (r *recordReader) arrayLen() int {
	n := r.length(4)
	if n > len(r.b) {
		r.err = errShort
		return 0
	}
	return max(n, 0)
}

// member reads (and skips) one MemberMetadata.
func (r *recordReader) member(version int16) {
	r.string() // memberId
	if version >= 3 {
		r.string() // groupInstanceId
	}
	r.string() // clientId
	r.string() // clientHost
	if version >= 1 {
		r.int32() // rebalanceTimeout
	}
	r.int32() // sessionTimeout
	r.bytes() // subscription
	r.bytes() // assignment
	r.taggedFields()
}

// taggedFields skips a flexible struct's tagged fields.
func (r *recordReader) taggedFields() {
	if !r.flexible {
		return
	}
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		r.uvarint() // tag
		size := r.uvarint()
		if size > uint64(len(r.b)) {
			r.err = errShort
			return
		}
		r.take(int(size))
	}
}

package proto

import (
	"encoding/binary"
	"fmt"
	"math"
)

// ErrEmpty is returned (wrapped) when the bytes to decode are empty. The
// group coordinator returns empty metadata and assignments for members of a
// group that is not Stable, and an empty assignment for a member that has
// joined but not yet received one: "nothing to decode yet", not corruption.
// Test with errors.Is.
const ErrEmpty = constError("proto: empty bytes (group not Stable, or no assignment yet)")

// ErrMalformed is wrapped by every decoding error other than [ErrEmpty]:
// the bytes are not Connect's group protocol (or are truncated).
const ErrMalformed = constError("proto: malformed Connect group protocol bytes")

// reader walks a byte slice the way Kafka's ByteBuffer-based Schema.read
// does; it records the name of the field being read for error messages.
type reader struct {
	b   []byte
	pos int
}

func (r *reader) remaining() int { return len(r.b) - r.pos }

func (r *reader) fail(field, format string, args ...any) error {
	return fmt.Errorf("%w: field %q at byte %d: %s", ErrMalformed, field, r.pos, fmt.Sprintf(format, args...))
}

func (r *reader) need(field string, n int) error {
	if r.remaining() < n {
		return r.fail(field, "need %d bytes, only %d left", n, r.remaining())
	}
	return nil
}

func (r *reader) int16(field string) (int16, error) {
	if err := r.need(field, 2); err != nil {
		return 0, err
	}
	v := int16(binary.BigEndian.Uint16(r.b[r.pos:]))
	r.pos += 2
	return v, nil
}

func (r *reader) int32(field string) (int32, error) {
	if err := r.need(field, 4); err != nil {
		return 0, err
	}
	v := int32(binary.BigEndian.Uint32(r.b[r.pos:]))
	r.pos += 4
	return v, nil
}

func (r *reader) int64(field string) (int64, error) {
	if err := r.need(field, 8); err != nil {
		return 0, err
	}
	v := int64(binary.BigEndian.Uint64(r.b[r.pos:]))
	r.pos += 8
	return v, nil
}

// string reads a Kafka STRING: INT16 length, never negative (Type.STRING
// rejects negative lengths; there is no null). Invalid UTF-8 is kept as is,
// where Java would substitute U+FFFD.
func (r *reader) string(field string) (string, error) {
	n, err := r.int16(field)
	if err != nil {
		return "", err
	}
	if n < 0 {
		return "", r.fail(field, "string length %d cannot be negative", n)
	}
	if err := r.need(field, int(n)); err != nil {
		return "", err
	}
	s := string(r.b[r.pos : r.pos+int(n)])
	r.pos += int(n)
	return s, nil
}

// nullableBytes reads NULLABLE_BYTES: INT32 length, any negative length is
// null (returned as nil, true=null).
func (r *reader) nullableBytes(field string) (b []byte, null bool, err error) {
	n, err := r.int32(field)
	if err != nil {
		return nil, false, err
	}
	if n < 0 {
		return nil, true, nil
	}
	if err := r.need(field, int(n)); err != nil {
		return nil, false, err
	}
	b = r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b, false, nil
}

// arrayLen reads an ARRAY's INT32 count. A negative count is null when
// nullable, an error otherwise; like Kafka's ArrayOf, a count larger than the
// bytes left is rejected up front, which also bounds allocations.
func (r *reader) arrayLen(field string, nullable bool) (n int, null bool, err error) {
	c, err := r.int32(field)
	if err != nil {
		return 0, false, err
	}
	if c < 0 {
		if nullable {
			return 0, true, nil
		}
		return 0, false, r.fail(field, "array size %d cannot be negative", c)
	}
	if int(c) > r.remaining() {
		return 0, false, r.fail(field, "array of size %d, only %d bytes left", c, r.remaining())
	}
	return int(c), false, nil
}

// writer builds the big-endian encoding.
type writer struct{ b []byte }

func (w *writer) int16(v int16) { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) int32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) int64(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }

// string writes a Kafka STRING. Like Kafka's Type.STRING.write it refuses
// strings longer than 32767 bytes; that is a programming error here (decoded
// values never hold one), so it panics.
func (w *writer) string(field, s string) {
	if len(s) > math.MaxInt16 {
		panic(fmt.Sprintf("proto: %s is %d bytes, longer than a Kafka STRING can hold (%d)", field, len(s), math.MaxInt16))
	}
	w.int16(int16(len(s)))
	w.b = append(w.b, s...)
}

func (w *writer) arrayLen(field string, n int) {
	if n > math.MaxInt32 {
		panic(fmt.Sprintf("proto: %s has %d elements, more than a Kafka ARRAY can hold", field, n))
	}
	w.int32(int32(n))
}

// constError is an error that is a constant, so that no importer can
// replace a sentinel that errors.Is compares against.
type constError string

func (e constError) Error() string { return string(e) }

package proto

import "fmt"

// MemberMetadata is what a Connect worker tells the group when it joins: its
// advertised REST URL and how far it has read its config topic. The leader
// assigns at the maximum ConfigOffset reported, so a single member reading a
// different config topic can hold the whole group at an offset the others
// never reach.
type MemberMetadata struct {
	// Version is the protocol version from the header: 0 under "default",
	// 1 under "compatible", 2 under "sessioned" (higher values are parsed as
	// v1, as Kafka does).
	Version int16
	// URL is the worker's advertised REST URL (rest.advertised.*).
	URL string
	// ConfigOffset is the worker's config-topic position: -1 if it has
	// consumed nothing, else the offset of the last record it consumed plus
	// one (see the package documentation).
	ConfigOffset int64
	// Allocation is the worker's current assignment (v1+), a complete
	// versioned assignment nested in NULLABLE_BYTES; nil when the worker has
	// none (first join) or under v0. Its Version is the metadata's protocol
	// version, not necessarily the one the assignment was received under.
	Allocation *Assignment
}

// DecodeMemberMetadata decodes Connect member metadata of any protocol
// version, as the group leader does (IncrementalCooperativeConnectProtocol
// .deserializeMetadata, used for v0 too): the header, URL and ConfigOffset
// must be present; the Allocation is read only if bytes remain, and a null
// (negative length) Allocation decodes as nil. A present but empty
// Allocation is malformed, as in Kafka. Empty input returns an error
// wrapping [ErrEmpty] (DescribeGroups on a group that is not Stable);
// anything else that does not parse wraps [ErrMalformed].
func DecodeMemberMetadata(b []byte) (MemberMetadata, error) {
	if len(b) == 0 {
		return MemberMetadata{}, fmt.Errorf("decoding Connect member metadata: %w", ErrEmpty)
	}
	m, err := decodeMemberMetadata(&reader{b: b})
	if err != nil {
		return MemberMetadata{}, fmt.Errorf("decoding Connect member metadata: %w", err)
	}
	return m, nil
}

func decodeMemberMetadata(r *reader) (MemberMetadata, error) {
	var m MemberMetadata
	var err error
	if m.Version, err = r.int16("version"); err != nil {
		return MemberMetadata{}, err
	}
	if m.Version < 0 {
		return MemberMetadata{}, r.fail("version", "unsupported Connect protocol version %d", m.Version)
	}
	if m.URL, err = r.string("url"); err != nil {
		return MemberMetadata{}, err
	}
	if m.ConfigOffset, err = r.int64("config-offset"); err != nil {
		return MemberMetadata{}, err
	}
	if r.remaining() == 0 {
		return m, nil // v0, or v1+ without the optional allocation
	}
	raw, null, err := r.nullableBytes("allocation")
	if err != nil || null {
		return m, err
	}
	// The nested assignment is parsed from its own slice: trailing bytes
	// inside it are ignored, and an empty one fails on its header.
	a, err := decodeAssignment(&reader{b: raw})
	if err != nil {
		return MemberMetadata{}, fmt.Errorf("in allocation: %w", err)
	}
	m.Allocation = &a
	return m, nil
}

// Encode serializes the metadata as a Connect worker writes it, so fakes can
// join a group as a Connect worker. Version 0 writes the eager layout
// (ConnectProtocol.serializeMetadata: no Allocation); Version 1 and later
// always write the Allocation, null when nil. A v0 value with an Allocation
// writes it too, so that decoding what was encoded gives the value back. It
// panics on a string longer than 32767 bytes, which Kafka cannot encode
// either.
func (m MemberMetadata) Encode() []byte {
	w := &writer{}
	w.int16(m.Version)
	w.string("url", m.URL)
	w.int64(m.ConfigOffset)
	if m.Version < VersionCompatible && m.Allocation == nil {
		return w.b
	}
	if m.Allocation == nil {
		w.int32(-1)
		return w.b
	}
	nested := m.Allocation.Encode()
	w.int32(int32(len(nested)))
	w.b = append(w.b, nested...)
	return w.b
}

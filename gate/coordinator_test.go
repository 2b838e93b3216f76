package gate

import "testing"

// Expected values printed by Java 17 (String.hashCode, then Kafka's
// Utils.abs(h) % 50), so the group's __consumer_offsets partition matches
// the broker's choice, including the Integer.MIN_VALUE corner.
func TestJavaStringHashCodeAndGroupPartition(t *testing.T) {
	cases := []struct {
		s         string
		hash      int32
		partition int32
	}{
		{"", 0, 0},
		{"hello", 99162322, 22},
		{"connect-cluster", 1440343063, 13},
		{"testGroup", -1202336499, 49},
		{"polygenelubricants", -2147483648, 0},
		{"GydZG_", -2147483648, 0},
		{"DESIGNING WORKHOUSES", -2147483648, 0},
		{"\u00e9t\u00e9", 227742, 42},
		{"😀emoji", -1233692477, 27}, // a surrogate pair: two UTF-16 units
		{"connect-init", 1867517971, 21},
	}
	for _, c := range cases {
		if got := JavaStringHashCode(c.s); got != c.hash {
			t.Errorf("JavaStringHashCode(%q) = %d, want %d", c.s, got, c.hash)
		}
		if got := GroupPartition(c.s, 50); got != c.partition {
			t.Errorf("GroupPartition(%q, 50) = %d, want %d", c.s, got, c.partition)
		}
	}
}

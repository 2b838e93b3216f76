package proto

import "testing"

// CaughtUp is the one rule for "read the config topic to the assignment":
// no error, and the member's reported offset is the assignment's.
func TestCaughtUp(t *testing.T) {
	md := func(off int64) *MemberMetadata { return &MemberMetadata{ConfigOffset: off} }
	as := func(off int64, e int16) *Assignment { return &Assignment{ConfigOffset: off, Error: e} }
	for _, c := range []struct {
		name string
		md   *MemberMetadata
		a    *Assignment
		want bool
	}{
		{"at the assignment", md(16), as(16, AssignmentNoError), true},
		{"behind", md(4), as(16, AssignmentNoError), false},
		{"ahead (another config topic)", md(20), as(16, AssignmentNoError), false},
		{"CONFIG_MISMATCH", md(16), as(16, AssignmentConfigMismatch), false},
		{"no metadata", nil, as(16, AssignmentNoError), false},
		{"no assignment", md(16), nil, false},
	} {
		if got := CaughtUp(c.md, c.a); got != c.want {
			t.Errorf("%s: CaughtUp = %v, want %v", c.name, got, c.want)
		}
	}
}

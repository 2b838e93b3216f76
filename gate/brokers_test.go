package gate

import "testing"

// The three-refusal rule: the broker gate gives up on the third look in a
// row in which every bootstrap server refused us for our settings; any
// other look (a broker down, one that answers) starts the count again.
func TestThreeRefusalRule(t *testing.T) {
	cases := []struct {
		name   string
		looks  []bool // Permanent per look
		giveUp int    // index of the look that gives up, -1 for none
	}{
		{"three in a row", []bool{true, true, true}, 2},
		{"two are not enough", []bool{true, true}, -1},
		{"a transient look resets", []bool{true, true, false, true, true}, -1},
		{"reset, then three", []bool{true, false, true, true, true, true}, 4},
		{"never refused", []bool{false, false, false, false}, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r refusals
			got := -1
			for i, p := range c.looks {
				if r.observe(p) {
					got = i
					break
				}
			}
			if got != c.giveUp {
				t.Fatalf("gave up at look %d, want %d", got, c.giveUp)
			}
		})
	}
}

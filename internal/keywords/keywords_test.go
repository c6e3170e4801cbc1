package keywords

import (
	"slices"
	"testing"
)

// Scan finds which keywords occur, overlapping and in either case; Bits
// is the union of their bits, and nothing without them.
func TestIndex(t *testing.T) {
	x := New([]string{"he", "she", "his", "hers", "akia"})
	bits := []uint32{1, 2, 4, 8, 16}
	for _, tt := range []struct {
		text string
		want []bool
	}{
		{"ushers", []bool{true, true, false, true, false}},
		{"HIS KEY: AKIA...", []bool{false, false, true, false, true}},
		{"nothing", []bool{false, false, false, false, false}},
		{"", []bool{false, false, false, false, false}},
	} {
		got := x.Scan(tt.text)
		if want := slices.Contains(tt.want, true); (got != nil) != want {
			t.Errorf("Scan(%q) = %v; a keyword occurs: %v", tt.text, got, want)
		}
		var u uint32
		for i := range tt.want {
			if (len(got.Of(i)) > 0) != tt.want[i] {
				t.Errorf("Scan(%q) = %v, want %v", tt.text, got, tt.want)
			}
			if tt.want[i] {
				u |= bits[i]
			}
		}
		if b := x.Bits(tt.text, bits); b != u {
			t.Errorf("Bits(%q) = %b, want %b", tt.text, b, u)
		}
	}
}

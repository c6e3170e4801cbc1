package ask

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExcerpt(t *testing.T) {
	filler := func(word string) string { return strings.TrimSpace(strings.Repeat(word+" filler text here. ", 12)) } // 240 bytes or so
	terms := []string{"billing", "migration"}
	tests := []struct {
		name      string
		text      string
		max       int
		cut       bool
		has, hasn []string
	}{
		{name: "short text whole", text: "The billing migration slipped.", max: 800, has: []string{"The billing migration slipped."}},
		{name: "the paragraphs with the question's words",
			text: filler("alpha") + "\n\n" + "The billing migration moves to Q4." + "\n\n" + filler("beta") + "\n\n" + "Billing owners changed." + "\n\n" + filler("gamma"),
			max:  300, cut: true,
			has:  []string{"The billing migration moves to Q4.", "Billing owners changed.", "…"},
			hasn: []string{"alpha", "beta", "gamma"}},
		{name: "no word shared: the opening",
			text: filler("alpha") + "\n\n" + filler("beta") + "\n\n" + filler("gamma"),
			max:  300, cut: true,
			has: []string{"alpha filler", "…"}, hasn: []string{"beta", "gamma"}},
		{name: "one long paragraph cut at a sentence",
			text: strings.Repeat("The billing migration is late. ", 40),
			max:  200, cut: true,
			has: []string{"The billing migration is late. The", "late. …"}},
		{name: "runes are not split",
			text: strings.Repeat("é", 500),
			max:  101, cut: true,
			has: []string{"é …"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := excerpt(tt.text, terms, tt.max)
			if cut != tt.cut {
				t.Errorf("cut %v, want %v", cut, tt.cut)
			}
			for _, piece := range strings.Split(got, "…") {
				if piece = strings.TrimSpace(piece); !strings.Contains(tt.text, piece) {
					t.Errorf("%q is not in the text", piece)
				}
			}
			if len(got) > tt.max+20 {
				t.Errorf("excerpt of %d bytes, asked for %d:\n%s", len(got), tt.max, got)
			}
			for _, s := range tt.has {
				if !strings.Contains(got, s) {
					t.Errorf("excerpt lacks %q:\n%s", s, got)
				}
			}
			for _, s := range tt.hasn {
				if strings.Contains(got, s) {
					t.Errorf("excerpt holds %q:\n%s", s, got)
				}
			}
			if !utf8.ValidString(got) {
				t.Errorf("invalid UTF-8: %q", got)
			}
		})
	}
}

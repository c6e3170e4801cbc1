package corpus

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sotlabs/sot/internal/tokens"
)

// checkParts checks what Split promises of parts of text: in order, every
// byte once, each within budget unless it is a single rune, each whole
// runes, and numbered.
func checkParts(t *testing.T, text string, budget int, parts []Part) {
	t.Helper()
	var joined strings.Builder
	for i, p := range parts {
		if p.Index != i || p.Count != len(parts) || p.Offset != joined.Len() {
			t.Errorf("part %d: index %d, count %d, offset %d; want %d, %d, %d", i, p.Index, p.Count, p.Offset, i, len(parts), joined.Len())
		}
		if p.Text == "" || !utf8.ValidString(p.Text) {
			t.Errorf("part %d is empty or cuts a rune: %q", i, p.Text)
		}
		if p.Tokens != tokens.Count(p.Text) {
			t.Errorf("part %d: %d tokens, counted %d", i, p.Tokens, tokens.Count(p.Text))
		}
		if budget > 0 && p.Tokens > budget && utf8.RuneCountInString(p.Text) > 1 {
			t.Errorf("part %d: %d tokens, over the budget of %d: %q", i, p.Tokens, budget, p.Text)
		}
		joined.WriteString(p.Text)
	}
	if joined.String() != text {
		t.Errorf("parts put together differ from the text:\n%q\nwant\n%q", joined.String(), text)
	}
}

func TestSplit(t *testing.T) {
	section := func(name string, n int) string {
		return "## " + name + "\n\n" + strings.Repeat("The committee met and agreed on the budget. ", n) + "\n\n"
	}
	tests := []struct {
		name   string
		text   string
		budget int
		// starts are the beginnings the parts must have, when given.
		starts []string
	}{
		{"fits", "short text", 100, []string{"short text"}},
		{"no budget", strings.Repeat("x ", 1000), 0, nil},
		{"sections whole", section("A", 10) + section("B", 10) + section("C", 10), 110, []string{"## A", "## B", "## C"}},
		{"small sections share", section("A", 2) + section("B", 2) + section("C", 8), 100, []string{"## A", "## C"}},
		{"a large section", section("A", 2) + section("B", 40) + section("C", 2), 120, nil},
		{"paragraphs", strings.Repeat("One paragraph of words here.\n\n", 40), 30, nil},
		{"one long line", strings.Repeat("word ", 500), 50, nil},
		{"one long word", strings.Repeat("abcdefghij", 300), 20, nil},
		{"no spaces, many runes", strings.Repeat("日本語のテキスト", 200), 25, nil},
		{"emoji", strings.Repeat("👩‍👩‍👧‍👦🇯🇵", 100), 3, nil},
		{"budget of one", "a bc déf 日本 👍 end", 1, nil},
		{"fenced heading", "# Real\n\ntext text text\n\n```sh\n# not a heading\necho hi\n```\n\n# Second\n\nmore text", 12, nil},
		{"trailing newlines", "line\n\n\n\nline\n\n\n", 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts := Split(tt.text, tt.budget)
			checkParts(t, tt.text, tt.budget, parts)
			if tt.starts != nil {
				if len(parts) != len(tt.starts) {
					t.Fatalf("%d parts, want %d: %+v", len(parts), len(tt.starts), parts)
				}
				for i, s := range tt.starts {
					if !strings.HasPrefix(parts[i].Text, s) {
						t.Errorf("part %d starts %q, want %q", i, parts[i].Text[:min(20, len(parts[i].Text))], s)
					}
				}
			}
			if tt.name == "fenced heading" {
				for _, p := range parts {
					if strings.HasPrefix(p.Text, "# not a heading") {
						t.Errorf("cut before a comment in a fence")
					}
				}
			}
		})
	}
	if Split("", 10) != nil {
		t.Error("Split of nothing is not nil")
	}
}

// TestLoadSplits loads the seed with a small budget: all of its text is
// in the parts, and the parts cut at its headings.
func TestLoadSplits(t *testing.T) {
	for _, budget := range []int{50, 300, 1000, 100000} {
		srcs, _, err := Load([]string{seedPath}, Options{PartTokens: budget})
		if err != nil {
			t.Fatal(err)
		}
		s := srcs[0]
		if budget == 100000 {
			if s.Parts != nil {
				t.Errorf("a text that fits was split into %d parts", len(s.Parts))
			}
			continue
		}
		if len(s.Parts) < 2 {
			t.Fatalf("budget %d: %d parts", budget, len(s.Parts))
		}
		checkParts(t, s.Text, budget, s.Parts)
		if budget == 1000 {
			for _, p := range s.Parts[1:] {
				if !strings.HasPrefix(p.Text, "#") {
					t.Errorf("budget %d: part %d starts %.40q, not at a heading", budget, p.Index, p.Text)
				}
			}
		}
	}
}

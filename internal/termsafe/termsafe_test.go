package termsafe

import "testing"

func TestLineAndText(t *testing.T) {
	for _, tc := range []struct {
		name, in, line, text string
	}{
		{"plain", "Q3 planning", "Q3 planning", "Q3 planning"},
		{"unicode", "Zürich — 会議", "Zürich — 会議", "Zürich — 会議"},
		{"title escape", "a\x1b]0;pwned\x07b", `a\x1b]0;pwned\x07b`, `a\x1b]0;pwned\x07b`},
		{"clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`},
		{"fake log line", "theme\nsot: all checks passed", `theme\nsot: all checks passed`, "theme\nsot: all checks passed"},
		{"carriage return", "ok\rFAIL", `ok\rFAIL`, `ok\rFAIL`},
		{"crlf", "a\r\nb", `a\r\nb`, "a\nb"},
		{"tab", "a\tb", `a\tb`, "a\tb"},
		{"c1 csi", "a\u009b31mb", `a\u009b31mb`, `a\u009b31mb`},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"bad utf8", "a\xffb", `a\xffb`, `a\xffb`},
		{"del", "a\x7fb", `a\x7fb`, `a\x7fb`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line(tc.in); got != tc.line {
				t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
			}
			if got := Text(tc.in); got != tc.text {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
			}
			if Safe(tc.in) != (tc.in == tc.line) {
				t.Errorf("Safe(%q) = %v", tc.in, Safe(tc.in))
			}
		})
	}
}

func TestCleanTextIsNotCopied(t *testing.T) {
	s := "nothing to escape here"
	if allocs := testing.AllocsPerRun(100, func() { _ = Line(s) }); allocs != 0 {
		t.Errorf("Line allocated %v times for clean text", allocs)
	}
}

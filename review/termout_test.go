package review

import (
	"bytes"
	"io"
	"testing"
)

// Moderator mode prints a model's answer as it streams in: its control
// characters are escaped, its line breaks and tabs kept, and a piece that
// ends inside a UTF-8 character or between "\r" and "\n" is escaped as the
// whole text would be.
func TestTermOutEscapesStreamedText(t *testing.T) {
	for _, tt := range []struct {
		name   string
		pieces []string
		want   string
	}{
		{"clean", []string{"Zürich — ", "会議\n\tok"}, "Zürich — 会議\n\tok"},
		{"escapes", []string{"a\x1b]0;pwned\x07", "\x1b[2Jb"}, `a\x1b]0;pwned\x07\x1b[2Jb`},
		{"split rune", []string{"Z\xc3", "\xbcrich \xe4\xbc", "\x9a"}, "Zürich 会"},
		{"split crlf", []string{"line\r", "\nnext"}, "line\nnext"},
		{"lone cr", []string{"ok\r", "FAIL"}, `ok\rFAIL`},
		{"c1 and bidi", []string{"\u009b31m", "\u202e"}, `\u009b31m\u202e`},
		{"held at the end", []string{"end\xe4\xbc"}, `end\xe4\xbc`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			out := &termOut{w: &b}
			for _, p := range tt.pieces {
				if n, err := io.WriteString(out, p); err != nil || n != len(p) {
					t.Fatalf("Write(%q) = %d, %v", p, n, err)
				}
			}
			if err := out.Flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got %q, want %q", b.String(), tt.want)
			}
		})
	}
}

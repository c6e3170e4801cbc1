package markdown

import (
	"strings"
	"testing"
)

func TestOneLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{" \t\n", ""},
		{"plain", "plain"},
		{"  two\n\nlines\r\nand\ttabs  ", "two lines and tabs"},
		{"a\u2028b\u00a0c", "a b c"},
		{"# heading\n## another", "# heading ## another"},
	}
	for _, tt := range tests {
		if got := OneLine(tt.in); got != tt.want {
			t.Errorf("OneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{" \n ", ""},
		{"auth/session.go:41", "`auth/session.go:41`"},
		{"a\nb", "`a b`"},
		{"a`b", "`` a`b ``"},
		{"a``b", "``` a``b ```"},
		{"`a` ``b`` ```c```", "```` `a` ``b`` ```c``` ````"},
		{"`", "`` ` ``"},
	}
	for _, tt := range tests {
		if got := Code(tt.in); got != tt.want {
			t.Errorf("Code(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestQuote(t *testing.T) {
	tests := []struct {
		name, indent, in, want string
	}{
		{"empty", "", "", ">\n"},
		{"one line", "", "text", "> text\n"},
		{"indent", "  ", "a\nb", "  > a\n  > b\n"},
		{"blank lines inside, trimmed outside", "", "\n\na\n\n\nb  \n\n", "> a\n>\n>\n> b\n"},
		{"line endings", "", "a\r\nb\rc", "> a\n> b\n> c\n"},
		{"ATX headings", "", "# Title\n  ## Sub\n\t#tag", "> \\# Title\n> \\## Sub\n> \\#tag\n"},
		{"setext underlines", "", "Title\n=====\nSub\n  ---", "> Title\n> \\=====\n> Sub\n> \\---\n"},
		{"mixed rule is no underline", "", "a\n-=-", "> a\n> -=-\n"},
		{"trailing spaces", "", "a \t\nb", "> a\n> b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quote(tt.indent, tt.in); got != tt.want {
				t.Errorf("Quote(%q, %q) = %q, want %q", tt.indent, tt.in, got, tt.want)
			}
		})
	}
}

func TestMultiLine(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"", false},
		{"one line", false},
		{"\n\none line\n\n", false},
		{"two\nlines", true},
		{"two\rlines", true},
		{"two\r\nlines", true},
	}
	for _, tt := range tests {
		if got := MultiLine(tt.in); got != tt.want {
			t.Errorf("MultiLine(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestDemote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"text", "text"},
		{"# Title", "### Title"},
		{"## Sub", "#### Sub"},
		{"#", "###"},
		{"##", "####"},
		{"   # Title", "### Title"},
		{"    # code", "    # code"},
		{"### Deeper", "### Deeper"},
		{"#tag", "#tag"},
		{"===", `\===`},
		{"  ---", `\---`},
		{"- item", "- item"},
	}
	for _, tt := range tests {
		if got := Demote(tt.in); got != tt.want {
			t.Errorf("Demote(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestControlCharacters holds every function to escaping what a terminal
// acts on (ESC sequences, carriage returns, C1 controls, bidirectional
// controls) as visible text, so a document shown with cat cannot set the
// window title, clear the screen or reorder its text.
func TestControlCharacters(t *testing.T) {
	const (
		osc  = "\x1b]0;pwned\x07"
		csi  = "\x1b[2J"
		c1   = "\u009b31m"
		bidi = "\u202e"
	)
	for _, tt := range []struct {
		name, fn, in, want string
	}{
		{"osc", "OneLine", "a" + osc + "b", `a\x1b]0;pwned\x07b`},
		{"csi", "OneLine", csi + "title", `\x1b[2Jtitle`},
		{"cr", "OneLine", "ok\rFAIL", "ok FAIL"},
		{"c1", "OneLine", "a" + c1 + "b", `a\u009b31mb`},
		{"bidi", "OneLine", "abc" + bidi + "fed", `abc\u202efed`},
		{"osc", "Code", "x" + osc, "`x\\x1b]0;pwned\\x07`"},
		{"csi", "Code", csi, "`\\x1b[2J`"},
		{"cr", "Code", "a\rb", "`a b`"},
		{"c1", "Code", c1, "`\\u009b31m`"},
		{"bidi", "Code", "a`" + bidi, "`` a`\\u202e ``"},
		{"osc", "Quote", "a" + osc + "\nb", "> a\\x1b]0;pwned\\x07\n> b\n"},
		{"csi", "Quote", csi + "# x", "> \\x1b[2J# x\n"},
		{"cr", "Quote", "ok\rFAIL", "> ok\n> FAIL\n"},
		{"c1", "Quote", "a" + c1, "> a\\u009b31m\n"},
		{"bidi", "Quote", bidi + "x\ty", "> \\u202ex\ty\n"},
		{"osc", "Demote", "# " + osc, "### \\x1b]0;pwned\\x07"},
		{"csi", "Demote", csi + "# x", "\\x1b[2J# x"},
		{"cr", "Demote", "ok\rFAIL", `ok\rFAIL`},
		{"newline", "Demote", "ok\n# FAIL", `ok\n# FAIL`},
		{"c1", "Demote", "\ta" + c1, "\ta\\u009b31m"},
		{"bidi", "Demote", "a" + bidi + "\tb", "a\\u202e\tb"},
	} {
		t.Run(tt.fn+"/"+tt.name, func(t *testing.T) {
			var got string
			switch tt.fn {
			case "OneLine":
				got = OneLine(tt.in)
			case "Code":
				got = Code(tt.in)
			case "Quote":
				got = Quote("", tt.in)
			case "Demote":
				got = Demote(tt.in)
			}
			if got != tt.want {
				t.Errorf("%s(%q) = %q, want %q", tt.fn, tt.in, got, tt.want)
			}
			if strings.ContainsAny(got, "\x1b\x07\r\u009b\u202e") {
				t.Errorf("%s(%q) = %q still holds a control character", tt.fn, tt.in, got)
			}
		})
	}
}

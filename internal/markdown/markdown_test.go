package markdown

import "testing"

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

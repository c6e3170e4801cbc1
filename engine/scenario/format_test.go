package scenario

import "testing"

func TestFormatName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"markdown", "markdown"},
		{"md", "markdown"},
		{"MD", "markdown"},
		{" Markdown ", "markdown"},
		{"rdjsonl", "rdjson"},
		{"RDJSONL", "rdjson"},
		{"rdjson", "rdjson"},
		{"JSON", "json"},
		{"Sarif", "sarif"},
		{"html", "html"},
		{"", ""},
		{"yaml", "yaml"},
	} {
		if got := FormatName(tc.in); got != tc.want {
			t.Errorf("FormatName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFormatSetHas(t *testing.T) {
	s := FormatSet{"markdown", "json", "rdjson"}
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"markdown", true},
		{"MD", true},
		{"Json", true},
		{"rdjsonl", true},
		{"html", false},
		{"", false},
		{"jsonl", false},
	} {
		if got := s.Has(tc.in); got != tc.want {
			t.Errorf("Has(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

package shell

import "testing"

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"review", "review"},
		{"--diff=main..HEAD", "--diff=main..HEAD"},
		{"out dir", "'out dir'"},
		{"it's", `'it'\''s'`},
		{"", "''"},
		{"$HOME", "'$HOME'"},
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

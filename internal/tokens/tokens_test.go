package tokens

import "testing"

func TestCount(t *testing.T) {
	tests := []struct {
		in       string
		min, max int
	}{
		{"", 0, 0},
		{"hello world", 2, 2},
		{"func main() { fmt.Println(\"hi\") }", 8, 14},
		{"\xff\xfe not utf-8", 3, 10},
	}
	for _, tt := range tests {
		if got := Count(tt.in); got < tt.min || got > tt.max {
			t.Errorf("Count(%q) = %d, want %d..%d", tt.in, got, tt.min, tt.max)
		}
	}
}

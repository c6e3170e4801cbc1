package tokens

import (
	"strings"
	"testing"
)

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

func TestCountMemoizesLargeStrings(t *testing.T) {
	big := ""
	for len(big) < 10_000 {
		big += "func handler(w http.ResponseWriter) { w.WriteHeader(200) }\n"
	}
	first := Count(big)
	if first < 1000 || Count(big) != first {
		t.Errorf("Count = %d then %d", first, Count(big))
	}
	if Count(big+"x") == 0 {
		t.Error("a different string must be counted anew")
	}
}

func TestWithin(t *testing.T) {
	text := strings.Repeat("word ", 100) // 500 bytes, about 100 tokens
	tests := []struct {
		budget int
		texts  []string
		want   bool
	}{
		{500, []string{text}, true},                    // fits in bytes
		{Count(text) + 3, []string{text, "abc"}, true}, // fits in tokens only
		{Count(text) - 1, []string{text}, false},
		{0, nil, true},
	}
	for _, tt := range tests {
		if got := Within(tt.budget, tt.texts...); got != tt.want {
			t.Errorf("Within(%d, %d texts) = %v, want %v", tt.budget, len(tt.texts), got, tt.want)
		}
	}
}

package llm

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"http date", map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"milliseconds win", map[string]string{"Retry-After": "7", "retry-after-ms": "250"}, 250 * time.Millisecond},
		{"bad ms falls back", map[string]string{"Retry-After": "2", "retry-after-ms": "soon"}, 2 * time.Second},
		{"garbage", map[string]string{"Retry-After": "later"}, 0},
		{"negative", map[string]string{"Retry-After": "-3"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := ParseRetryAfter(h, now); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if ParseRetryAfter(nil, now) != 0 {
		t.Error("nil header")
	}
}

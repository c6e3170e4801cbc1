package llm

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseRetryAfter reads how long a provider asked the client to wait:
// "retry-after-ms" (milliseconds) when present, else "Retry-After" as seconds
// or as an HTTP date (relative to now). It returns 0 when neither is usable.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f < 1e12 {
			return time.Duration(f * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 0 || f > 1e9 {
			return 0
		}
		return time.Duration(f * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

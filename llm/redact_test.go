package llm

import "testing"

func TestRedact(t *testing.T) {
	RegisterSecret("registered-secret-value-42")
	tests := []struct{ in, want string }{
		{"key sk-abcdefghijklmnop rejected", "key [REDACTED] rejected"},
		{"Authorization: Bearer abcdefghijkl", "Authorization: [REDACTED]"},
		{"value registered-secret-value-42 leaked", "value [REDACTED] leaked"},
		{"http://user:hunter2pw@127.0.0.1:8299/v1 refused", "http://user:[REDACTED]@127.0.0.1:8299/v1 refused"},
		{`"http://alice:pa/ss+W11@127.0.0.1:9/v1" is not a URL`, `"http://alice:[REDACTED]@127.0.0.1:9/v1" is not a URL`},
		{"https://user@host/v1", "https://user@host/v1"},         // no password
		{"http://127.0.0.1:8299/v1", "http://127.0.0.1:8299/v1"}, // a port is not a password
		{"a plain message", "a plain message"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

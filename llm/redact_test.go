package llm

import (
	"strings"
	"testing"
)

// Tokens of formats that Redact knows by their shape; they are made up and
// built here so that no literal token is written down.
var (
	awsKeyID  = "AKIA" + "Q7ZK3M5RT2XW4N6P"
	githubPAT = "ghp_" + "R8d2Kq9ZxW" + "4mN7vB3tY6" + "pL1sF5hJ0c" + "A2eG8u"
	slackBot  = "xoxb-" + "123456789012-987654321098-" + strings.Repeat("Ab1Cd2", 4)
)

func TestRedact(t *testing.T) {
	RegisterSecret("registered-secret-value-42")
	tests := []struct{ in, want string }{
		{"aws_access_key_id = " + awsKeyID, "aws_access_key_id = [REDACTED]"},
		{"remote: Invalid token " + githubPAT + ".", "remote: Invalid token [REDACTED]."},
		{"SLACK_TOKEN=" + slackBot + " in the output", "SLACK_TOKEN=[REDACTED] in the output"},
		{"api_key_env: OPENROUTER_API_KEY is not set", "api_key_env: OPENROUTER_API_KEY is not set"}, // not a value
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

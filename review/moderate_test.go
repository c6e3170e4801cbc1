package review

import (
	"strings"
	"testing"

	"github.com/sotlabs/sot/review/finding"
)

func TestChallengeAnswersFollowTheRules(t *testing.T) {
	f := &finding.Finding{Grounds: "auth/session.go:6 copies the token into the cookie", Warrant: "query strings are attacker controlled"}
	tests := []struct {
		name string
		a    challengeAnswer
		want string
	}{
		{"defence with new evidence", challengeAnswer{Verdict: "defend", NewEvidence: "auth/session.go:7 sets no Secure flag on the cookie"}, ""},
		{"defence repeating the grounds", challengeAnswer{Verdict: "defend", NewEvidence: "copies the token into the cookie"}, "repeats the finding's own grounds"},
		{"defence without evidence", challengeAnswer{Verdict: "defend", NewEvidence: "I stand by it"}, "must bring new evidence"},
		{"specific concession", challengeAnswer{Verdict: "concede", Reasoning: "the middleware in auth/mw.go rejects unknown tokens before Refresh runs"}, ""},
		{"bare agreement", challengeAnswer{Verdict: "concede", Reasoning: "You are right."}, "must say specifically why"},
		{"neither", challengeAnswer{Verdict: "maybe"}, "neither defend nor concede"},
	}
	for _, tt := range tests {
		err := tt.a.check(f)
		if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

package middleware

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

// Made-up tokens of the formats a model may quote back, built from pieces
// so that none is written down whole.
var (
	quotedAWS       = "AKIA" + "Q7ZK3M5RT2XW4N6P"
	quotedGitHub    = "ghp_" + "R8d2Kq9ZxW" + "4mN7vB3tY6" + "pL1sF5hJ0c" + "A2eG8u"
	quotedSlack     = "xoxb-" + "123456789012-987654321098-" + "Zx81Qw2Er7Ty4Ui9Op3As5Df"
	quotedAnthropic = "sk-ant-api03-" + "Hq7Lm2Np9Rs4Tv6Wx8Yz1Ab3Cd5Ef"
)

func quoted() map[string]string {
	return map[string]string{"aws": quotedAWS, "github": quotedGitHub, "slack": quotedSlack, "anthropic": quotedAnthropic, "the client's key": testKey}
}

// assertMasked fails if text holds one of the quoted tokens, or the part
// of one after its first four characters.
func assertMasked(t *testing.T, where, text string) {
	t.Helper()
	for name, tok := range quoted() {
		if strings.Contains(text, tok[4:]) {
			t.Errorf("%s holds the %s token:\n%s", where, name, text)
		}
	}
}

func TestRedactMasksAnswers(t *testing.T) {
	llm.RegisterSecret(testKey)
	reply := "The config commits " + quotedAWS + " at line 12.\nAlso " + quotedGitHub + ", " + quotedSlack + " and " + quotedAnthropic + ".\nYour key " + testKey + " too."
	p, _ := backend(t, llmtest.Config{Rules: []llmtest.Rule{{User: "question 1", Reply: reply}}})
	resp := complete(t, Redact(p), ask(1))
	assertMasked(t, "the answer", resp.Text)
	want := "The config commits AKIA" + secrets.Marker + "aws-access-token] at line 12.\n"
	if !strings.HasPrefix(resp.Text, want) {
		t.Errorf("answer = %q, want it to start %q", resp.Text, want)
	}
	if strings.Count(resp.Text, "\n") != 2 {
		t.Errorf("the answer's lines changed: %q", resp.Text)
	}
}

func TestRedactKeepsStructuredAnswersValid(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"findings":{"type":"array","items":{"type":"object","properties":{"claim":{"type":"string"},"lines":{"type":"array","items":{"type":"integer"}}},"required":["claim","lines"]}}},"required":["findings"]}`)
	for _, tt := range []struct {
		name   string
		answer any
		want   string // the masked answer, as compact JSON
	}{
		{
			"tokens in strings",
			map[string]any{"findings": []any{
				map[string]any{"claim": `key "` + quotedAWS + `" is committed`, "lines": []int{12}},
				map[string]any{"claim": "token " + quotedGitHub, "lines": []int{3, 4}},
			}},
			`{"findings":[{"claim":"key \"AKIA…[secret: aws-access-token]\" is committed","lines":[12]},{"claim":"token ghp_…[secret: github-pat]","lines":[3,4]}]}`,
		},
		{
			"nothing to mask",
			map[string]any{"findings": []any{map[string]any{"claim": "a plain claim", "lines": []int{1}}}},
			`{"findings":[{"claim":"a plain claim","lines":[1]}]}`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := backend(t, llmtest.Config{Rules: []llmtest.Rule{{JSON: tt.answer}}})
			req := ask(1)
			req.Schema = &llm.Schema{Name: "findings", JSON: schema}
			resp := complete(t, CheckSchema(Redact(p)), req)
			assertMasked(t, "the structured answer", string(resp.JSON)+resp.Text)
			if err := Validate(schema, resp.JSON); err != nil {
				t.Errorf("the masked answer no longer validates: %v\n%s", err, resp.JSON)
			}
			var got, want any
			if err := json.Unmarshal(resp.JSON, &got); err != nil {
				t.Fatalf("the masked answer is not JSON: %v\n%s", err, resp.JSON)
			}
			json.Unmarshal([]byte(tt.want), &want)
			if g, w := mustJSON(got), mustJSON(want); g != w {
				t.Errorf("answer = %s, want %s", g, w)
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRedactMasksTheStream(t *testing.T) {
	// The fake server streams the answer in four pieces, which cut the
	// tokens in the middle.
	llm.RegisterSecret(testKey)
	reply := "First line names " + quotedAWS + ".\nSecond line names " + quotedSlack + ".\nLast: " + testKey
	p, _ := backend(t, llmtest.Config{Rules: []llmtest.Rule{{Reply: reply}}})
	var pieces []string
	req := ask(1)
	req.OnDelta = func(s string) { pieces = append(pieces, s) }
	resp := complete(t, Redact(p), req)
	streamed := strings.Join(pieces, "")
	assertMasked(t, "the stream", streamed)
	if streamed != resp.Text {
		t.Errorf("streamed %q, answered %q", streamed, resp.Text)
	}
	if len(pieces) < 2 {
		t.Errorf("the answer came in %d piece(s); it should stream line by line", len(pieces))
	}
}

func TestStreamMaskPassesOnSentencesOfALongLine(t *testing.T) {
	var out []string
	s := &streamMask{out: func(x string) { out = append(out, x) }}
	sentence := strings.Repeat("word ", 20) + "ends here. "
	for range 6 {
		s.write(sentence)
	}
	if len(out) == 0 {
		t.Fatal("a long line without a line break was held back whole")
	}
	s.write("tail " + quotedGitHub[:10])
	s.write(quotedGitHub[10:])
	s.flush()
	all := strings.Join(out, "")
	assertMasked(t, "the stream", all)
	if !strings.HasSuffix(all, "tail ghp_"+secrets.Marker+"github-pat]") {
		t.Errorf("stream ends %q", all[max(0, len(all)-60):])
	}
}

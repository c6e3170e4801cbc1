package llmtest

import (
	"encoding/json"
	"strings"
	"testing"
)

// dropKey removes key from every object of v.
func dropKey(v any, key string) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, key)
		for _, e := range x {
			dropKey(e, key)
		}
	case []any:
		for _, e := range x {
			dropKey(e, key)
		}
	}
}

// countKey counts the objects of v that hold key.
func countKey(v any, key string) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x[key]; ok {
			n++
		}
		for _, e := range x {
			n += countKey(e, key)
		}
	case []any:
		for _, e := range x {
			n += countKey(e, key)
		}
	}
	return n
}

// ExtraKey adds model_note to every object of a structured answer (and
// nothing else), WrapJSON puts it in prose and a ```json fence; answers
// without a schema are left alone.
func TestSloppyAnswers(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"findings":{"type":"array","minItems":2,"items":{"type":"object",
		"properties":{"line":{"type":"integer"},"claim":{"type":"string"}},"required":["line","claim"],"additionalProperties":false}}},
		"required":["findings"],"additionalProperties":false}`)
	for _, tc := range []struct {
		name        string
		cfg         Config
		extra, wrap bool
	}{
		{"neither", Config{}, false, false},
		{"an extra key", Config{ExtraKey: true}, true, false},
		{"wrapped", Config{WrapJSON: true}, false, true},
		{"both", Config{ExtraKey: true, WrapJSON: true}, true, true},
		{"a rule's JSON, both", Config{ExtraKey: true, WrapJSON: true, Rules: []Rule{{JSON: map[string]any{
			"findings": []any{map[string]any{"line": json.Number("12345678901234567890"), "claim": "a"}, map[string]any{"line": 2, "claim": "b"}}}}}}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.cfg)
			body := oaiBody("m", "sys", "hi")
			body["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "f", "schema": schema, "strict": true}}
			text := oaiCall(t, s, body, nil).text(t)
			raw := text
			if tc.wrap {
				before, rest, ok := strings.Cut(text, "```json\n")
				inner, after, ok2 := strings.Cut(rest, "\n```")
				if !ok || !ok2 || strings.TrimSpace(before) == "" || strings.TrimSpace(after) == "" {
					t.Fatalf("not wrapped in prose and a fence: %q", text)
				}
				raw = inner
			} else if strings.Contains(text, "```") {
				t.Fatalf("wrapped: %q", text)
			}
			var v any
			if err := json.Unmarshal([]byte(raw), &v); err != nil {
				t.Fatalf("not JSON: %v: %q", err, raw)
			}
			want := 0
			if tc.extra {
				want = 3 // the answer and its two findings
			}
			if n := countKey(v, sloppyKey); n != want {
				t.Errorf("%d objects hold %s, want %d: %s", n, sloppyKey, want, raw)
			}
			if tc.cfg.Rules != nil && !strings.Contains(raw, "12345678901234567890") {
				t.Errorf("a number changed form: %s", raw)
			}
			dropKey(v, sloppyKey)
			b, _ := json.Marshal(v)
			mustValidate(t, schema, b)

			plain := oaiCall(t, s, oaiBody("m", "sys", "hi"), nil).text(t)
			if tc.cfg.Rules == nil && (strings.Contains(plain, sloppyKey) || strings.Contains(plain, "```")) {
				t.Errorf("an answer without a schema was changed: %q", plain)
			}
		})
	}
}

// Over the Anthropic API, ExtraKey keeps the forced tool call (with the
// key added); WrapJSON answers in text instead, as a chatty model would.
func TestSloppyAnthropic(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`)
	call := func(cfg Config) antResult {
		s := newServer(t, cfg)
		ab := antBody("m", "sys", "hi")
		ab["tools"] = []map[string]any{{"name": "answer", "input_schema": schema}}
		ab["tool_choice"] = map[string]any{"type": "tool", "name": "answer"}
		return antCall(t, s, ab, nil).ant(t)
	}
	a := call(Config{ExtraKey: true})
	if len(a.Content) != 1 || a.Content[0].Type != "tool_use" || !strings.Contains(string(a.Content[0].Input), sloppyKey) {
		t.Errorf("extra key: %+v", a)
	}
	a = call(Config{WrapJSON: true})
	if len(a.Content) != 1 || a.Content[0].Type != "text" || !strings.Contains(a.Content[0].Text, "```json") {
		t.Errorf("wrapped: %+v", a)
	}
}

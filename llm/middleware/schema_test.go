package middleware

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

var verdictSchema = json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string","enum":["yes","no"]},"score":{"type":"integer","minimum":0}},"required":["verdict","score"],"additionalProperties":false}`)

func structured(n int) *llm.Request {
	r := ask(n)
	r.Schema = &llm.Schema{Name: "verdict", JSON: verdictSchema}
	return r
}

func TestSchemaRepairsOnce(t *testing.T) {
	p, srv := backend(t, llmtest.Config{Rules: []llmtest.Rule{
		{Times: 1, JSON: map[string]any{"verdict": "maybe", "score": -1}},
		{JSON: map[string]any{"verdict": "yes", "score": 3}},
	}})
	m := NewMeter(Budget{}, llm.PriceTable{}, nil)
	resp := complete(t, CheckSchema(m.Wrap(p)), structured(1))
	if string(resp.JSON) != `{"score":3,"verdict":"yes"}` && string(resp.JSON) != `{"verdict":"yes","score":3}` {
		t.Errorf("JSON = %s", resp.JSON)
	}
	if resp.Calls != 2 || m.Totals().Calls != 2 {
		t.Errorf("calls = %d (metered %d), want 2: both attempts cost money", resp.Calls, m.Totals().Calls)
	}
	second := srv.Requests()[1]
	if !strings.Contains(second.LastUser(), "does not validate") || len(second.Messages) != 3 {
		t.Errorf("the repair request should carry the bad answer and the validation error: %+v", second.Messages)
	}
}

func TestSchemaFailsAfterTwoBadAnswers(t *testing.T) {
	tests := []struct {
		name string
		rule llmtest.Rule
	}{
		{"wrong shape", llmtest.Rule{JSON: map[string]any{"verdict": 7}}},
		{"not JSON at all", llmtest.Rule{Reply: "I think the answer is yes."}},
		{"server-side violation", llmtest.Rule{Fault: llmtest.FaultSchemaViolation}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, srv := backend(t, llmtest.Config{Rules: []llmtest.Rule{tt.rule}})
			resp, err := CheckSchema(p).Complete(context.Background(), structured(1))
			var se *SchemaError
			if !errors.Is(err, llm.ErrSchema) || !errors.As(err, &se) || resp != nil {
				t.Fatalf("resp %v, err %v; want a *SchemaError and no answer", resp, err)
			}
			if srv.Count() != 2 {
				t.Errorf("%d requests, want exactly one retry", srv.Count())
			}
			if !strings.Contains(err.Error(), "test/1") {
				t.Errorf("error %q should name the failed step", err)
			}
		})
	}
}

func TestSchemaPassesPlainRequests(t *testing.T) {
	p, srv := backend(t, llmtest.Config{})
	complete(t, CheckSchema(p), ask(1))
	if srv.Count() != 1 {
		t.Errorf("%d requests", srv.Count())
	}
}

func TestExtractJSON(t *testing.T) {
	tests := map[string]string{
		`{"a":1}`:                           `{"a":1}`,
		"```json\n{\"a\": 1}\n```":          `{"a": 1}`,
		"Here it is: {\"a\": [1, 2]} done.": `{"a": [1, 2]}`,
		"[1,2]":                             `[1,2]`,
		"no json here":                      ``,
		"{broken":                           ``,
	}
	for in, want := range tests {
		if got := string(llm.ExtractJSON(in)); got != want {
			t.Errorf("ExtractJSON(%q) = %q, want %q", in, got, want)
		}
	}
}

// An answer cut off at its output limit is asked for again with the limit
// named and a request to be brief (asked as before, a model runs into the
// same limit), and a second cut answer fails saying it was cut off, not
// that it held no JSON.
func TestSchemaCutAnswer(t *testing.T) {
	long := map[string]any{"verdict": "yes", "score": 3, "why": strings.Repeat("because ", 400)}
	tests := []struct {
		name  string
		rules []llmtest.Rule
		ok    bool
	}{
		{"cut, then brief", []llmtest.Rule{{Times: 1, JSON: long}, {JSON: map[string]any{"verdict": "yes", "score": 3}}}, true},
		{"cut twice", []llmtest.Rule{{JSON: long}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, srv := backend(t, llmtest.Config{Rules: tt.rules})
			req := structured(1)
			req.MaxTokens = 100
			resp, err := CheckSchema(p).Complete(context.Background(), req)
			if srv.Count() != 2 {
				t.Fatalf("%d requests, want 2", srv.Count())
			}
			if again := srv.Requests()[1].LastUser(); !strings.Contains(again, "cut off at the output limit (100 tokens)") || !strings.Contains(again, "more briefly") {
				t.Errorf("the second request says %q; want it to name the limit and ask for brevity", again)
			}
			if tt.ok {
				if err != nil || resp.Calls != 2 {
					t.Fatalf("resp %+v, err %v; want the brief answer after two calls", resp, err)
				}
				return
			}
			var se *SchemaError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "cut off at the output limit (100 tokens)") {
				t.Fatalf("err %v; want a *SchemaError saying the answer was cut off", err)
			}
		})
	}
}

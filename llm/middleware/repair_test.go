package middleware

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

var findingsSchema = json.RawMessage(`{"type":"object","additionalProperties":false,"required":["findings"],
 "properties":{"findings":{"type":"array","items":{"$ref":"#/$defs/finding"}},"summary":{"type":"string"}},
 "$defs":{"finding":{"type":"object","additionalProperties":false,"required":["line","severity","claim"],
  "properties":{"line":{"type":"integer"},"severity":{"type":"string","enum":["must-fix","should-fix","consider"]},
   "claim":{"type":"string"},"confident":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}}}}}}`)

// Answers in shape but for what has one reading are mended; anything else
// is left to validation.
func TestRepair(t *testing.T) {
	for _, tc := range []struct {
		name, in, out string
		notes         int
	}{
		{"valid stays untouched", `{"findings":[]}`, "", 0},
		{"an extra key at the top", `{"findings":[],"notes":"looked at it"}`, `{"findings":[]}`, 1},
		{"an extra key inside a list", `{"findings":[{"line":3,"severity":"consider","claim":"x","why":"y"}]}`,
			`{"findings":[{"claim":"x","line":3,"severity":"consider"}]}`, 1},
		{"a number as a string", `{"findings":[{"line":"12","severity":"consider","claim":"x"}]}`,
			`{"findings":[{"claim":"x","line":12,"severity":"consider"}]}`, 1},
		{"a boolean as a string", `{"findings":[{"line":1,"severity":"consider","claim":"x","confident":"true"}]}`,
			`{"findings":[{"claim":"x","confident":true,"line":1,"severity":"consider"}]}`, 1},
		{"a lone object for a list", `{"findings":{"line":1,"severity":"consider","claim":"x"}}`,
			`{"findings":[{"claim":"x","line":1,"severity":"consider"}]}`, 1},
		{"a lone string for a list", `{"findings":[{"line":1,"severity":"consider","claim":"x","tags":"auth"}]}`,
			`{"findings":[{"claim":"x","line":1,"severity":"consider","tags":["auth"]}]}`, 1},
		{"null for an optional key", `{"findings":[],"summary":null}`, `{"findings":[]}`, 1},
		{"an enum value in another case", `{"findings":[{"line":1,"severity":"Must-Fix","claim":"x"}]}`,
			`{"findings":[{"claim":"x","line":1,"severity":"must-fix"}]}`, 1},
		{"text that is no number stays", `{"findings":[{"line":"twelve","severity":"consider","claim":"x"}]}`, "", 0},
		{"a missing required key is not invented", `{"summary":"x"}`, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, notes := Repair(findingsSchema, json.RawMessage(tc.in))
			if len(notes) != tc.notes {
				t.Errorf("notes %q, want %d", notes, tc.notes)
			}
			if tc.out == "" {
				if out != nil {
					t.Errorf("mended into %s, want nothing mended", out)
				}
				return
			}
			if string(out) != tc.out {
				t.Errorf("mended into %s, want %s", out, tc.out)
			}
			if err := Validate(findingsSchema, out); err != nil {
				t.Errorf("the mended answer does not validate: %v", err)
			}
		})
	}
}

// An answer with one harmless extra key is taken as it is, mended, without
// asking again; the request keeps the strict schema and the response says
// what was mended.
func TestSchemaMendsAnExtraKey(t *testing.T) {
	p, srv := backend(t, llmtest.Config{Rules: []llmtest.Rule{
		{JSON: map[string]any{"verdict": "yes", "score": "3", "notes": "I double-checked"}},
	}})
	resp := complete(t, CheckSchema(p), structured(1))
	if srv.Count() != 1 {
		t.Errorf("%d requests, want the answer mended without asking again", srv.Count())
	}
	if string(resp.JSON) != `{"score":3,"verdict":"yes"}` {
		t.Errorf("JSON = %s", resp.JSON)
	}
	if len(resp.Repairs) != 2 || !strings.Contains(strings.Join(resp.Repairs, ";"), `"notes"`) {
		t.Errorf("repairs %q", resp.Repairs)
	}
	if !strings.Contains(string(srv.Requests()[0].Body), `"additionalProperties":false`) {
		t.Errorf("the request lost its strict schema")
	}
	var back llm.Response
	b, _ := json.Marshal(resp)
	if json.Unmarshal(b, &back) != nil || len(back.Repairs) != 2 {
		t.Errorf("the repairs are not in the journaled form: %s", b)
	}
}

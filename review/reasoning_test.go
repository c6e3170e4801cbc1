package review

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// propertyOrder returns the properties of the object schema found by
// following path (keys, as "properties", "threads", "items") from the top
// of schema, in the order they are written, and its required list: what a
// model sees, in the order it writes them.
func propertyOrder(t *testing.T, schema []byte, path ...string) (props, required []string) {
	t.Helper()
	raw := json.RawMessage(schema)
	for _, key := range path {
		var node map[string]json.RawMessage
		if err := json.Unmarshal(raw, &node); err != nil {
			t.Fatalf("%v: %v", path, err)
		}
		raw = node[key]
	}
	var node struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &node); err != nil {
		t.Fatalf("%v: %v", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(node.Properties))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		props = append(props, tok.(string))
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			t.Fatal(err)
		}
	}
	return props, node.Required
}

// Reasoning before verdicts: in the support schemas of review (a
// challenged specialist's answer, the round summary's threads), the fields
// that reason come before the fields that decide, in the properties and in
// the required list alike. Models commit to the first tokens they write.
func TestSupportSchemasReasonFirst(t *testing.T) {
	tests := []struct {
		name   string
		schema []byte
		path   []string
		want   []string
	}{
		{"moderator challenge", challengeSchema, nil, []string{"reasoning", "new_evidence", "verdict"}},
		{"round summary thread", summarySchema, []string{"properties", "threads", "items"}, []string{"thread_id", "summary", "open_questions", "decision_axis", "kind"}},
	}
	for _, tt := range tests {
		props, required := propertyOrder(t, tt.schema, tt.path...)
		if !slices.Equal(props, tt.want) || !slices.Equal(required, tt.want) {
			t.Errorf("%s: properties %v, required %v; want %v", tt.name, props, required, tt.want)
		}
	}
	if i, j := strings.Index(roundInstructions, `"examined"`), strings.Index(roundInstructions, `"positions"`); i < 0 || j < i {
		t.Error("the round instructions must ask for what was examined before the positions")
	}
	if i, j := strings.Index(roundInstructions, "argument first"), strings.Index(roundInstructions, "then the stance"); i < 0 || j < i {
		t.Error("the round instructions must ask for the argument before the stance")
	}
}

// outsideFences returns the lines of text outside the fences of nonce,
// split at every character some reader takes for a line break, and fails
// the test when a line inside one lacks the gutter.
func outsideFences(t *testing.T, text, nonce string) []string {
	t.Helper()
	begin, end := "<<<BEGIN MATERIAL "+nonce+">>>", "<<<END MATERIAL "+nonce+">>>"
	inside := false
	var out []string
	for _, line := range strings.FieldsFunc(text, lineBreak) {
		switch {
		case !inside && line == begin:
			inside = true
		case inside && line == end:
			inside = false
		case inside:
			if !strings.HasPrefix(line, "│") {
				t.Errorf("a line inside the fence lacks the gutter: %q", line)
			}
		default:
			out = append(out, line)
		}
	}
	if inside {
		t.Error("a fence is never closed")
	}
	return out
}

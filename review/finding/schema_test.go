package finding

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/persona"
)

// keysInOrder returns the keys of a JSON object in the order they are
// written, which is the order a model writes them in.
func keysInOrder(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %.60s", raw)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// objectSchema is an object schema's parts.
type objectSchema struct {
	Properties           json.RawMessage `json:"properties"`
	Required             []string        `json:"required"`
	AdditionalProperties *bool           `json:"additionalProperties"`
}

// eachObject calls fn with the path and the property order of every
// object schema in schema (through properties and items).
func eachObject(t *testing.T, path string, schema json.RawMessage, fn func(path string, order []string, o objectSchema)) {
	t.Helper()
	var o objectSchema
	var items struct {
		Items json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(schema, &o); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(schema, &items); err != nil {
		t.Fatal(err)
	}
	if len(items.Items) > 0 {
		eachObject(t, path+"[]", items.Items, fn)
	}
	if len(o.Properties) == 0 {
		return
	}
	order := keysInOrder(t, o.Properties)
	fn(path, order, o)
	var props map[string]json.RawMessage
	if err := json.Unmarshal(o.Properties, &props); err != nil {
		t.Fatal(err)
	}
	for _, k := range order {
		eachObject(t, path+"."+k, props[k], fn)
	}
}

// TestSchemasReasonBeforeTheyDecide: in every object a specialist writes,
// the fields that reason come before those that decide, and "required"
// lists the properties in the order the schema gives them (all of them,
// with no others allowed, as OpenAI's strict mode wants).
func TestSchemasReasonBeforeTheyDecide(t *testing.T) {
	// before[x] must all come before x wherever x appears.
	before := map[string][]string{
		"findings":         {"examined", "positions"},
		"positions":        {"examined"},
		"severity":         {"grounds", "file", "start_line", "end_line", "section", "warrant", "rebuttal_conditions", "suggested_verification", "finding"},
		"confidence":       {"grounds", "warrant", "rebuttal_conditions", "suggested_verification", "severity"},
		"stance":           {"argument"},
		"revised_severity": {"argument", "stance"},
	}
	for name, schema := range map[string]json.RawMessage{ReportSchemaName: ReportSchema, RoundSchemaName: RoundSchema} {
		objects := 0
		eachObject(t, name, schema, func(path string, order []string, o objectSchema) {
			objects++
			if !slices.Equal(o.Required, order) {
				t.Errorf("%s: required %v, want the properties in their order %v", path, o.Required, order)
			}
			if o.AdditionalProperties == nil || *o.AdditionalProperties {
				t.Errorf("%s: additionalProperties must be false", path)
			}
			for i, k := range order {
				for _, earlier := range before[k] {
					if j := slices.Index(order, earlier); j > i {
						t.Errorf("%s: %q comes after %q, which it reasons for: %v", path, earlier, k, order)
					}
				}
			}
		})
		if want := map[string]int{ReportSchemaName: 2, RoundSchemaName: 3}[name]; objects != want {
			t.Errorf("%s: %d object schemas walked, want %d", name, objects, want)
		}
	}
	var report struct {
		Properties struct {
			Findings struct {
				Items json.RawMessage `json:"items"`
			} `json:"findings"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(ReportSchema, &report); err != nil {
		t.Fatal(err)
	}
	var item objectSchema
	if err := json.Unmarshal(report.Properties.Findings.Items, &item); err != nil {
		t.Fatal(err)
	}
	if got := keysInOrder(t, item.Properties); got[0] != "perspective" || got[len(got)-2] != "severity" || got[len(got)-1] != "confidence" {
		t.Errorf("a finding's fields are %v: want perspective first, severity and confidence last", got)
	}
	if !json.Valid(ReportSchema) || !json.Valid(RoundSchema) {
		t.Error("a schema is not valid JSON")
	}
}

// TestSharedRulesDescribeTheSchema: the built-in shared rules' output
// format is the one description of the answer: it names every field of a
// finding, in the schema's order, states the cap on findings, and carries
// no Markdown template of its own.
func TestSharedRulesDescribeTheSchema(t *testing.T) {
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	format := lib.SharedRules().Section("Output Format")
	var report struct {
		Properties struct {
			Findings struct {
				Items objectSchema `json:"items"`
			} `json:"findings"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(ReportSchema, &report); err != nil {
		t.Fatal(err)
	}
	at := -1
	for _, field := range append([]string{"examined", "findings"}, keysInOrder(t, report.Properties.Findings.Items.Properties)...) {
		i := strings.Index(format, "`"+field+"`")
		if i < 0 {
			t.Errorf("the output format does not name %q", field)
			continue
		}
		if i < at {
			t.Errorf("the output format names %q out of the schema's order", field)
		}
		at = i
	}
	if want := fmt.Sprintf("at most %d findings", MaxFindings); !strings.Contains(format, want) {
		t.Errorf("the output format does not state the cap %q", want)
	}
	for _, template := range []*regexp.Regexp{regexp.MustCompile("```"), regexp.MustCompile(`(?m)^#+ `), regexp.MustCompile(`No Findings from`)} {
		if template.MatchString(format) {
			t.Errorf("the output format still holds a Markdown template (%s)", template)
		}
	}
}

func findingJSON(perspective string) string {
	return `{"perspective": "` + perspective + `", "finding": "Tokens reach the cookie unchecked.", "category": "input", "grounds": "a.go:3 sets the cookie",
	  "file": "a.go", "start_line": 3, "end_line": 0, "section": "", "warrant": "w", "rebuttal_conditions": "r", "suggested_verification": "v",
	  "severity": "should-fix", "confidence": "MEDIUM"}`
}

// TestFromJSONPerspective: a finding's perspective is the lens applied.
// A missing one is filled in, a wrong one repaired with a note; no
// finding is dropped for it.
func TestFromJSONPerspective(t *testing.T) {
	tests := []struct {
		name, lens string
		named      []string
		note       string
	}{
		{"right", "red-team", []string{"red-team", "Red Team", "RED_TEAM"}, ""},
		{"missing", "red-team", []string{"", ""}, ""},
		{"wrong", "red-team", []string{"premortem", "red-team", "premortem", "baseline"}, `security: findings named the perspective "premortem", "baseline", but the lens applied was red-team; they are attributed to it`},
		{"none applied", "", []string{"", "none", "N/A"}, ""},
		{"named without a lens", "", []string{"red-team"}, `security: findings named the perspective "red-team", but no lens was applied; they have no perspective`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var items []string
			for _, p := range tt.named {
				items = append(items, findingJSON(p))
			}
			r, problems, err := FromJSON(json.RawMessage(`{"examined": "a.go", "findings": [`+strings.Join(items, ",")+`]}`), "security", tt.lens, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Findings) != len(tt.named) {
				t.Errorf("kept %d of %d findings", len(r.Findings), len(tt.named))
			}
			for _, f := range r.Findings {
				if f.Lens != tt.lens {
					t.Errorf("%s has perspective %q, want the lens applied, %q", f.ID, f.Lens, tt.lens)
				}
			}
			var want []string
			if tt.note != "" {
				want = []string{tt.note}
			}
			if !slices.Equal(problems, want) {
				t.Errorf("problems %q, want %q", problems, want)
			}
		})
	}
}

// TestFromJSONKeepsFindingsBeyondTheCap: the cap is the rules', not the
// parser's: an answer over it loses nothing, and says so.
func TestFromJSONKeepsFindingsBeyondTheCap(t *testing.T) {
	items := make([]string, MaxFindings+2)
	for i := range items {
		items[i] = findingJSON("")
	}
	r, problems, err := FromJSON(json.RawMessage(`{"examined": "a.go", "findings": [`+strings.Join(items, ",")+`]}`), "security", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != MaxFindings+2 || len(problems) != 1 || !strings.Contains(problems[0], fmt.Sprintf("%d findings, more than the %d", MaxFindings+2, MaxFindings)) {
		t.Errorf("kept %d findings, problems %q", len(r.Findings), problems)
	}
	r, problems, _ = FromJSON(json.RawMessage(`{"examined": "a.go", "findings": [`+strings.Join(items[:MaxFindings], ",")+`]}`), "security", "", 0)
	if len(r.Findings) != MaxFindings || len(problems) != 0 {
		t.Errorf("at the cap: kept %d findings, problems %q", len(r.Findings), problems)
	}
}

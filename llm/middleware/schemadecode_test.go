package middleware_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sotlabs/sot/llm/middleware"
	"github.com/sotlabs/sot/review/finding"
)

// library reads doc as the library does.
func library(doc string) (*jsonschema.Schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(doc), &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// sameAsLibrary fails t unless DecodeSchema reads doc as the library does:
// the same schema, or an error where the library gives one.
func sameAsLibrary(t *testing.T, doc string) {
	t.Helper()
	want, wantErr := library(doc)
	got, err := middleware.DecodeSchema(json.RawMessage(doc))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s\nDecodeSchema error %v, the library's %v", doc, err, wantErr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%s\nDecodeSchema differs from the library (-library +DecodeSchema):\n%s", doc, diff)
	}
}

// DecodeSchema reads every schema as jsonschema.Schema's UnmarshalJSON
// does: the schemas of sot's review calls, forms at the edges of what it
// reads itself (which it leaves to the library), and schemas drawn at
// random from every keyword it knows and some it does not.
func TestDecodeSchemaAsTheLibrary(t *testing.T) {
	docs := []string{
		string(finding.ReportSchema),
		string(finding.RoundSchema),
		`true`, `false`, `{}`, `null`, `[]`, `"string"`, `{"type":"string"} {}`, `{"type":"string"`,
		`{"type":["string","null"]}`, `{"type":["string",1]}`, `{"type":1}`, `{"Type":"string"}`,
		`{"type":"string","type":"integer"}`,
		`{"items":[{"type":"string"},true]}`, `{"items":null}`, `{"items":false}`,
		`{"additionalProperties":false}`, `{"additionalProperties":null}`, `{"additionalProperties":{"type":"number"}}`,
		`{"minItems":1}`, `{"minItems":1.0}`, `{"minItems":1.5}`, `{"minItems":1e2}`, `{"minItems":1.5e1}`, `{"minItems":-0}`,
		`{"minItems":4294967296}`, `{"maxLength":"3"}`, `{"minLength":null}`,
		`{"minimum":0}`, `{"maximum":1e400}`, `{"minimum":-2.5}`, `{"minimum":"1"}`,
		`{"enum":["a","b",null,true]}`, `{"enum":[1,2]}`, `{"enum":[]}`, `{"enum":"a"}`, `{"enum":[["a"]]}`,
		`{"required":[]}`, `{"required":["a",null]}`, `{"required":"a"}`,
		`{"properties":{"a":true,"b":{"properties":{"c":{"type":"integer"}}}}}`, `{"properties":null}`,
		`{"anyOf":[{"type":"string"},{"type":"null"}]}`, `{"oneOf":{}}`, `{"allOf":[]}`,
		`{"$defs":{"x":{"type":"string"}},"$ref":"#/$defs/x"}`,
		`{"description":null}`, `{"title":"t","pattern":"^a+$","format":"date"}`,
		`{"const":null}`, `{"default":{"a":1}}`, `{"x-extra":1}`, `{"dependencies":{"a":["b"]}}`,
	}
	for _, doc := range docs {
		sameAsLibrary(t, doc)
	}
	for _, raw := range []json.RawMessage{finding.ReportSchema, finding.RoundSchema} {
		if !middleware.ReadsItself(raw) {
			t.Errorf("a schema of sot's own was left to the library:\n%s", raw)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		sameAsLibrary(t, randomSchema(r, 3))
	}
}

// randomSchema draws a schema document up to depth levels deep.
func randomSchema(r *rand.Rand, depth int) string {
	if depth == 0 || r.IntN(8) == 0 {
		return []string{`true`, `false`, `{}`, `{"type":"string"}`}[r.IntN(4)]
	}
	values := map[string]func() string{
		"type":        func() string { return pick(r, `"object"`, `"array"`, `["string","null"]`, `1`, `null`) },
		"description": func() string { return pick(r, `"what it is"`, `"a \"quoted\" \u00e9"`, `null`, `2`) },
		"pattern":     func() string { return pick(r, `"^[a-z]+$"`, `""`) },
		"format":      func() string { return pick(r, `"date-time"`, `true`) },
		"properties": func() string {
			return fmt.Sprintf(`{"a":%s,"b":%s}`, randomSchema(r, depth-1), randomSchema(r, depth-1))
		},
		"required":             func() string { return pick(r, `["a"]`, `[]`, `["a","b"]`, `[1]`, `"a"`) },
		"additionalProperties": func() string { return randomSchema(r, depth-1) },
		"items": func() string {
			if r.IntN(4) == 0 {
				return fmt.Sprintf(`[%s]`, randomSchema(r, depth-1))
			}
			return randomSchema(r, depth-1)
		},
		"anyOf":    func() string { return fmt.Sprintf(`[%s,%s]`, randomSchema(r, depth-1), randomSchema(r, depth-1)) },
		"enum":     func() string { return pick(r, `["a","b"]`, `[1,"a"]`, `[null]`, `[]`) },
		"minItems": func() string { return pick(r, `0`, `3`, `2.0`, `2.5`, `-1`, `1e1`) },
		"maxItems": func() string { return pick(r, `8`, `"8"`) },
		"minimum":  func() string { return pick(r, `0`, `0.5`, `-3`, `1e3`) },
		"maximum":  func() string { return pick(r, `100`, `null`) },
		"title":    func() string { return pick(r, `"T"`, `false`) },
		"not":      func() string { return randomSchema(r, depth-1) },
		"$comment": func() string { return pick(r, `"c"`) },
	}
	keys := slices.Sorted(maps.Keys(values))
	var parts []string
	for _, i := range r.Perm(len(keys))[:r.IntN(5)+1] {
		parts = append(parts, fmt.Sprintf("%q:%s", keys[i], values[keys[i]]()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func pick(r *rand.Rand, options ...string) string { return options[r.IntN(len(options))] }

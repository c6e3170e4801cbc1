package llmtest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// validate checks instance against schema with an independent validator.
func validate(t testing.TB, schema, instance []byte) error {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatalf("bad test schema: %v", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolve schema: %v", err)
	}
	var v any
	if err := json.Unmarshal(instance, &v); err != nil {
		return err
	}
	return rs.Validate(v)
}

func mustValidate(t testing.TB, schema, instance []byte) {
	t.Helper()
	if err := validate(t, schema, instance); err != nil {
		t.Errorf("instance %s does not validate: %v", instance, err)
	}
}

var testSchemas = []struct {
	name   string
	schema string
}{
	{"scalar types", `{"type":"object","properties":{
		"s":{"type":"string"},"i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},"z":{"type":"null"}},
		"required":["s","i","n","b","z"],"additionalProperties":false}`},
	{"enum and const", `{"type":"object","properties":{
		"sev":{"type":"string","enum":["high","medium","low"]},"kind":{"const":"finding"}},"required":["sev","kind"]}`},
	{"bounds", `{"type":"object","properties":{
		"a":{"type":"integer","minimum":5,"maximum":9},
		"b":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
		"c":{"type":"integer","minimum":-10,"maximum":-3},
		"d":{"type":"integer","multipleOf":7,"minimum":10},
		"e":{"type":"string","minLength":12,"maxLength":14},
		"f":{"type":"string","maxLength":3}},
		"required":["a","b","c","d","e","f"]}`},
	{"arrays", `{"type":"object","properties":{
		"one":{"type":"array","items":{"type":"string"}},
		"three":{"type":"array","items":{"type":"integer"},"minItems":3,"uniqueItems":true},
		"none":{"type":"array","items":{"type":"string"},"maxItems":0},
		"tuple":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"minItems":2},
		"uniqStr":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"minItems":3,"uniqueItems":true}},
		"required":["one","three","none","tuple","uniqStr"]}`},
	{"refs", `{"type":"object","$defs":{"finding":{"type":"object","properties":{
		"title":{"type":"string"},"severity":{"$ref":"#/$defs/severity"}},"required":["title","severity"],"additionalProperties":false},
		"severity":{"type":"string","enum":["critical","major"]}},
		"properties":{"findings":{"type":"array","items":{"$ref":"#/$defs/finding"},"minItems":2}},"required":["findings"]}`},
	{"definitions", `{"definitions":{"x":{"type":"integer","minimum":3}},"type":"object",
		"properties":{"x":{"$ref":"#/definitions/x"}},"required":["x"]}`},
	{"anyOf oneOf", `{"type":"object","properties":{
		"a":{"anyOf":[{"type":"string","minLength":2},{"type":"null"}]},
		"o":{"oneOf":[{"type":"integer","minimum":100},{"type":"string"}]},
		"n":{"type":["null","string"]}},"required":["a","o","n"]}`},
	{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},
		{"properties":{"b":{"type":"integer","minimum":2}},"required":["b"]}]}`},
	{"recursive", `{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},
		"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name","children"]}},"$ref":"#/$defs/node"}`},
	{"formats", `{"type":"object","properties":{"t":{"type":"string","format":"date-time"},"d":{"type":"string","format":"date"},
		"e":{"type":"string","format":"email"},"u":{"type":"string","format":"uri"},"id":{"type":"string","format":"uuid"}},
		"required":["t","d","e","u","id"]}`},
	{"top-level array", `{"type":"array","items":{"type":"object","properties":{"k":{"type":"boolean"}},"required":["k"]},"minItems":1,"maxItems":2}`},
	{"min properties", `{"type":"object","minProperties":2}`},
	{"sot-like finding list", `{"type":"object","additionalProperties":false,"required":["findings","summary"],"properties":{
		"summary":{"type":"string","minLength":1},
		"findings":{"type":"array","items":{"type":"object","additionalProperties":false,
			"required":["claim","grounds","severity","confidence","location"],
			"properties":{"claim":{"type":"string"},"grounds":{"type":"array","items":{"type":"string"},"minItems":1},
			"severity":{"enum":["blocker","major","minor","nit"]},"confidence":{"type":"number","minimum":0,"maximum":1},
			"location":{"anyOf":[{"type":"null"},{"type":"object","required":["file","line"],"additionalProperties":false,
				"properties":{"file":{"type":"string"},"line":{"type":"integer","minimum":1}}}]}}}}}}`},
}

func TestInstanceValidates(t *testing.T) {
	for _, tt := range testSchemas {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Instance(json.RawMessage(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			mustValidate(t, []byte(tt.schema), got)
			again, _ := Instance(json.RawMessage(tt.schema))
			if !bytes.Equal(got, again) {
				t.Errorf("not deterministic: %s vs %s", got, again)
			}
		})
	}
}

func TestInstanceDetails(t *testing.T) {
	tests := []struct {
		schema, want string
	}{
		{`{"type":"array","items":{"type":"integer"},"minItems":3}`, `[0,1,2]`},
		{`{"type":"array","items":{"type":"string"},"maxItems":0}`, `[]`},
		{`{"type":"array","items":{"type":"string"}}`, `["example"]`},
		{`{"enum":[3,"x"]}`, `3`},
		{`{"const":{"a":[1]}}`, `{"a":[1]}`},
		{`{"type":"integer","minimum":5}`, `5`},
		{`{"type":"string","minLength":9}`, `"examplexx"`},
		{`{"anyOf":[{"type":"boolean"},{"type":"string"}]}`, `true`},
		{`{"type":"null"}`, `null`},
		{``, `"ok"`},
	}
	for _, tt := range tests {
		got, err := Instance(json.RawMessage(tt.schema))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("Instance(%s) = %s, want %s", tt.schema, got, tt.want)
		}
	}
	if _, err := Instance(json.RawMessage(`{not json`)); err == nil {
		t.Error("Instance accepted a broken schema")
	}
}

func TestViolation(t *testing.T) {
	for _, tt := range testSchemas {
		t.Run(tt.name, func(t *testing.T) {
			bad := Violation(json.RawMessage(tt.schema))
			if !json.Valid(bad) {
				t.Fatalf("violation %s is not JSON", bad)
			}
			if validate(t, []byte(tt.schema), bad) == nil {
				t.Errorf("violation %s validates", bad)
			}
		})
	}
	for _, s := range []string{`{"type":"string"}`, `{"type":"integer"}`, `{"type":"array"}`, `{"type":"object","properties":{"a":{"type":"string"}}}`} {
		if validate(t, []byte(s), Violation(json.RawMessage(s))) == nil {
			t.Errorf("violation of %s validates", s)
		}
	}
}

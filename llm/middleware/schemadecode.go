package middleware

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// decodeSchema reads a JSON Schema document as jsonschema.Schema's
// UnmarshalJSON does. That method decodes the text of every nested schema
// again at each level, twice (into the struct, then into a map of its
// keys), and for the schemas of sot's calls it took most of the time a
// process's first structured call spent before its request could leave
// (0.5 ms of 0.8 for a finding report's). Here the document is decoded
// once into Go's generic values and the schema is built from them. A
// document that uses a keyword or a form this does not know is read by
// UnmarshalJSON, so that the result, and any error, is always what the
// library itself makes of it (TestDecodeSchemaAsTheLibrary).
func decodeSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	if s, ok := readSchema(raw); ok {
		return s, nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// readSchema reads raw in one pass; ok is false for a document it leaves
// to the library.
func readSchema(raw json.RawMessage) (*jsonschema.Schema, bool) {
	// Numbers are kept as their text, to be read as the library reads
	// them; whatever follows the document makes it the library's.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.Decode(new(any)) != io.EOF {
		return nil, false
	}
	return schemaFrom(v)
}

// schemaFrom builds the schema v holds; ok is false when v holds anything
// schemaFrom leaves to UnmarshalJSON.
func schemaFrom(v any) (s *jsonschema.Schema, ok bool) {
	switch v := v.(type) {
	case bool:
		if v {
			return &jsonschema.Schema{}, true // true validates everything
		}
		return &jsonschema.Schema{Not: &jsonschema.Schema{}}, true // false, nothing
	case map[string]any:
		s = &jsonschema.Schema{}
		for k, x := range v {
			if !setKeyword(s, k, x) {
				return nil, false
			}
		}
		return s, true
	}
	return nil, false
}

// setKeyword sets the keyword k of s to the value x; it reports false for
// a keyword, or a value, that schemaFrom leaves to UnmarshalJSON.
func setKeyword(s *jsonschema.Schema, k string, x any) bool {
	ok := true
	switch k {
	case "type":
		switch t := x.(type) {
		case string:
			s.Type = t
		case []any:
			s.Types, ok = stringsOf(t)
		default:
			return false
		}
	case "description":
		s.Description, ok = x.(string)
	case "title":
		s.Title, ok = x.(string)
	case "pattern":
		s.Pattern, ok = x.(string)
	case "format":
		s.Format, ok = x.(string)
	case "properties":
		s.Properties, ok = schemaMap(x)
	case "$defs":
		s.Defs, ok = schemaMap(x)
	case "$ref":
		s.Ref, ok = x.(string)
	case "required":
		a, isList := x.([]any)
		if !isList {
			return false
		}
		s.Required, ok = stringsOf(a)
	case "additionalProperties":
		s.AdditionalProperties, ok = schemaFrom(x)
	case "items":
		if list, isList := x.([]any); isList {
			s.ItemsArray, ok = schemaList(list)
		} else {
			s.Items, ok = schemaFrom(x)
		}
	case "anyOf", "oneOf", "allOf":
		list, isList := x.([]any)
		if !isList {
			return false
		}
		var l []*jsonschema.Schema
		if l, ok = schemaList(list); ok {
			switch k {
			case "anyOf":
				s.AnyOf = l
			case "oneOf":
				s.OneOf = l
			default:
				s.AllOf = l
			}
		}
	case "enum":
		// Values of a kind other than these would hold numbers, which
		// the library reads as float64s, not as their text.
		list, isList := x.([]any)
		if !isList {
			return false
		}
		for _, e := range list {
			switch e.(type) {
			case string, bool, nil:
			default:
				return false
			}
		}
		s.Enum = list
	case "minimum", "maximum":
		n, isNum := x.(json.Number)
		if !isNum {
			return false
		}
		f, err := n.Float64()
		if err != nil {
			return false
		}
		if k == "minimum" {
			s.Minimum = &f
		} else {
			s.Maximum = &f
		}
	case "minItems", "maxItems", "minLength", "maxLength":
		n, isInt := integer(x)
		if !isInt {
			return false
		}
		switch k {
		case "minItems":
			s.MinItems = &n
		case "maxItems":
			s.MaxItems = &n
		case "minLength":
			s.MinLength = &n
		default:
			s.MaxLength = &n
		}
	default:
		return false
	}
	return ok
}

// integer is x as the library reads a keyword whose value is an integer:
// a number with a decimal point and no fraction, or one without that
// reads as an integer, within 32 bits.
func integer(x any) (int, bool) {
	n, ok := x.(json.Number)
	if !ok {
		return 0, false
	}
	var i int64
	if strings.Contains(string(n), ".") {
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || f != math.Trunc(f) || math.IsInf(f, 0) {
			return 0, false
		}
		i = int64(f)
		if float64(i) != f {
			return 0, false
		}
	} else {
		var err error
		if i, err = strconv.ParseInt(string(n), 10, 64); err != nil {
			return 0, false
		}
	}
	if i < math.MinInt32 || i > math.MaxInt32 {
		return 0, false
	}
	return int(i), true
}

func stringsOf(a []any) ([]string, bool) {
	out := make([]string, len(a))
	for i, x := range a {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

func schemaList(a []any) ([]*jsonschema.Schema, bool) {
	out := make([]*jsonschema.Schema, len(a))
	for i, x := range a {
		s, ok := schemaFrom(x)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

func schemaMap(x any) (map[string]*jsonschema.Schema, bool) {
	m, ok := x.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]*jsonschema.Schema, len(m))
	for k, v := range m {
		s, ok := schemaFrom(v)
		if !ok {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

package middleware

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sotlabs/sot/internal/lazyre"
)

// Repair mends a structured answer that does not validate where the
// mending has one reading, and returns the mended JSON with a note for
// each change, or nil when there was nothing it could mend. Models that do
// not enforce the schema (local servers, the llm CLI, older endpoints)
// answer mostly in shape; Repair keeps such answers:
//
//   - a key the schema does not allow (additionalProperties: false) is
//     dropped, at any depth;
//   - a null for a property that is not required is dropped;
//   - a string that holds an integer, a number or true/false becomes one,
//     where the schema asks for that type;
//   - a lone value where an array is asked for becomes a one-item array,
//     when the value is of the items' type;
//   - a string that matches one of an enum's values but for case becomes
//     that value.
//
// Nothing is invented: a missing required property, a value of another
// type, or text that is no number stays as it is, and validation reports
// it.
func Repair(schema, doc json.RawMessage) (json.RawMessage, []string) {
	var s any
	if json.Unmarshal(schema, &s) != nil {
		return nil, nil
	}
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return nil, nil
	}
	r := &repairer{root: s}
	v = r.fix(s, v, "")
	if len(r.notes) == 0 {
		return nil, nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, nil
	}
	return out, r.notes
}

type repairer struct {
	root  any
	notes []string
}

func (r *repairer) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// deref follows a local $ref ("#/$defs/x", "#/definitions/x").
func (r *repairer) deref(s map[string]any) map[string]any {
	for range 8 {
		ref, ok := s["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return s
		}
		var cur any = r.root
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, ok := cur.(map[string]any)
			if !ok {
				return s
			}
			cur = m[part]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return s
		}
		s = next
	}
	return s
}

func types(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

func where(path string) string {
	if path == "" {
		return "the answer"
	}
	return path
}

func (r *repairer) fix(schema any, v any, path string) any {
	s, ok := schema.(map[string]any)
	if !ok {
		return v
	}
	s = r.deref(s)
	ts := types(s)
	if len(ts) == 0 {
		// No type: the value may be anything, so nothing is coerced, but
		// an object's properties and an array's items are still mended.
		switch x := v.(type) {
		case map[string]any:
			if _, ok := s["properties"]; ok {
				return r.object(s, x, path)
			}
		case []any:
			if _, ok := s["items"]; ok {
				r.items(s, x, path)
			}
		}
		return v
	}
	if slices.Contains(ts, "null") && v == nil {
		return v
	}
	want := func(t string) bool { return slices.Contains(ts, t) }
	switch x := v.(type) {
	case map[string]any:
		if want("object") {
			return r.object(s, x, path)
		}
		if want("array") {
			return r.wrap(s, x, path, "object")
		}
	case []any:
		if want("array") {
			r.items(s, x, path)
		}
	case string:
		text := strings.TrimSpace(x)
		switch {
		case want("string"):
			return r.enum(s, x, path)
		case want("integer") && jsonInteger.Re().MatchString(text):
			if n, err := strconv.ParseInt(text, 10, 64); err == nil {
				r.note("%s: the string %q read as the integer %d", where(path), x, n)
				return n
			}
		case want("number") && jsonNumber.Re().MatchString(text):
			if f, err := strconv.ParseFloat(text, 64); err == nil {
				r.note("%s: the string %q read as the number %v", where(path), x, f)
				return f
			}
		case want("boolean") && (text == "true" || text == "false"):
			r.note("%s: the string %q read as %s", where(path), x, text)
			return text == "true"
		case want("array"):
			return r.wrap(s, x, path, "value")
		}
	default:
		if v != nil && want("array") && !slices.ContainsFunc(ts, func(t string) bool { return isType(v, t) }) {
			return r.wrap(s, v, path, "value")
		}
	}
	return v
}

// wrap reads a lone value where the array schema s is asked for as a list
// of one, when the value (mended as an item) is of the items' type: a lone
// object for a list of objects, a string for a list of strings. A value of
// another type is left as it is, for validation to report.
func (r *repairer) wrap(s map[string]any, v any, path, what string) any {
	at := len(r.notes)
	item := r.fix(s["items"], v, path+"[0]")
	if !r.fits(s["items"], item) {
		r.notes = r.notes[:at]
		return v
	}
	r.notes = slices.Insert(r.notes, at, fmt.Sprintf("%s: a lone %s where a list is asked for, read as a list of one", where(path), what))
	return []any{item}
}

// fits reports whether v is of a type the schema allows (any type when it
// names none).
func (r *repairer) fits(schema any, v any) bool {
	s, ok := schema.(map[string]any)
	if !ok {
		return true
	}
	ts := types(r.deref(s))
	if len(ts) == 0 {
		return true
	}
	return slices.ContainsFunc(ts, func(t string) bool {
		switch v.(type) {
		case nil:
			return t == "null"
		case map[string]any:
			return t == "object"
		case []any:
			return t == "array"
		case string:
			return t == "string"
		case int64:
			return t == "integer" || t == "number"
		}
		return isType(v, t)
	})
}

// items mends the items of an array.
func (r *repairer) items(s map[string]any, x []any, path string) {
	for i := range x {
		x[i] = r.fix(s["items"], x[i], fmt.Sprintf("%s[%d]", path, i))
	}
}

// A string is read as a number only when it holds exactly a JSON number
// ("3", "-0.5", "1e3"), not "0x10", "1_000", "NaN" or "3 apples".
var (
	jsonInteger = lazyre.New(`^-?(?:0|[1-9][0-9]*)$`)
	jsonNumber  = lazyre.New(`^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$`)
)

// isType reports whether the JSON scalar v (a bool or a float64) is of
// the JSON Schema type t.
func isType(v any, t string) bool {
	switch x := v.(type) {
	case bool:
		return t == "boolean"
	case float64:
		return t == "number" || t == "integer" && x == float64(int64(x))
	}
	return false
}

// enum gives a string the case of the one enum value it matches but for
// case, when it matches none exactly.
func (r *repairer) enum(s map[string]any, x, path string) any {
	vals, ok := s["enum"].([]any)
	if !ok || slices.Contains(vals, any(x)) {
		return x
	}
	var match []string
	for _, e := range vals {
		if str, ok := e.(string); ok && strings.EqualFold(strings.TrimSpace(x), str) {
			match = append(match, str)
		}
	}
	if len(match) == 1 {
		r.note("%s: %q read as %q", where(path), x, match[0])
		return match[0]
	}
	return x
}

func (r *repairer) object(s map[string]any, x map[string]any, path string) any {
	props, _ := s["properties"].(map[string]any)
	closed := s["additionalProperties"] == false
	required := map[string]bool{}
	if req, ok := s["required"].([]any); ok {
		for _, k := range req {
			if str, ok := k.(string); ok {
				required[str] = true
			}
		}
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sub := path + "." + k
		if path == "" {
			sub = k
		}
		ps, known := props[k]
		switch {
		case !known && closed:
			delete(x, k)
			r.note("%s: the key %q, which the schema does not have, ignored", where(path), k)
		case known && x[k] == nil && !required[k] && !allowsNull(r.derefAny(ps)):
			delete(x, k)
			r.note("%s: null for the optional %q, left out", where(path), k)
		case known:
			x[k] = r.fix(ps, x[k], sub)
		}
	}
	return x
}

func (r *repairer) derefAny(s any) map[string]any {
	m, _ := s.(map[string]any)
	if m == nil {
		return nil
	}
	return r.deref(m)
}

func allowsNull(s map[string]any) bool { return s == nil || slices.Contains(types(s), "null") }

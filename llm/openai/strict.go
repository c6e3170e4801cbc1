package openai

import (
	"encoding/json"
	"sync"
)

// strictMemo remembers the answer per schema text: a review sends the same
// schema with every call.
var strictMemo sync.Map // string -> bool

// StrictCompatible reports whether OpenAI's strict structured-output mode
// accepts schema: the root is an object, and every object schema in it
// (through properties, items, combinators and definitions) sets
// additionalProperties to false and lists all of its properties in required.
// Sending strict:true with any other schema is an error at the API.
func StrictCompatible(schema json.RawMessage) bool {
	if v, ok := strictMemo.Load(string(schema)); ok {
		return v.(bool)
	}
	ok := strictCompatible(schema)
	strictMemo.Store(string(schema), ok)
	return ok
}

func strictCompatible(schema json.RawMessage) bool {
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return false
	}
	m, ok := root.(map[string]any)
	if !ok || !isObjectSchema(m) {
		return false
	}
	return strictOK(m, 0)
}

func isObjectSchema(m map[string]any) bool {
	switch t := m["type"].(type) {
	case string:
		return t == "object"
	case []any:
		for _, e := range t {
			if e == "object" {
				return true
			}
		}
		return false
	}
	_, hasProps := m["properties"]
	return hasProps
}

// strictOK checks one schema and everything under it.
func strictOK(v any, depth int) bool {
	if depth > 64 {
		return false
	}
	m, ok := v.(map[string]any)
	if !ok {
		// Boolean schemas and junk are not allowed in strict mode.
		_, isBool := v.(bool)
		return !isBool
	}
	if isObjectSchema(m) {
		if ap, ok := m["additionalProperties"].(bool); !ok || ap {
			return false
		}
		props, _ := m["properties"].(map[string]any)
		required := map[string]bool{}
		if r, ok := m["required"].([]any); ok {
			for _, e := range r {
				if s, ok := e.(string); ok {
					required[s] = true
				}
			}
		}
		for name, ps := range props {
			if !required[name] || !strictOK(ps, depth+1) {
				return false
			}
		}
	}
	if sub, ok := m["items"]; ok {
		if arr, isArr := sub.([]any); isArr { // draft 4 tuples
			for _, s := range arr {
				if !strictOK(s, depth+1) {
					return false
				}
			}
		} else if !strictOK(sub, depth+1) {
			return false
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		if arr, ok := m[k].([]any); ok {
			for _, s := range arr {
				if !strictOK(s, depth+1) {
					return false
				}
			}
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		if defs, ok := m[k].(map[string]any); ok {
			for _, s := range defs {
				if !strictOK(s, depth+1) {
					return false
				}
			}
		}
	}
	return true
}

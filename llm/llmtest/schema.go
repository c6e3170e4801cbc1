package llmtest

import (
	"bytes"
	"encoding/json"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// maxDepth bounds recursion through $ref and nesting.
const maxDepth = 24

// Instance returns a deterministic JSON value that validates against the JSON
// Schema document schema. It understands type (including type lists),
// properties and required, items and prefixItems, enum, const,
// anyOf/oneOf (first branch), allOf (merged), $ref into $defs or definitions,
// minItems/maxItems, uniqueItems, minimum/maximum (and their exclusive
// forms), multipleOf, minLength/maxLength and common string formats.
func Instance(schema json.RawMessage) (json.RawMessage, error) {
	if v, ok := instances.Load(string(schema)); ok {
		return slices.Clone(v.(json.RawMessage)), nil
	}
	inst, err := instance(schema)
	if err == nil {
		instances.Store(string(schema), slices.Clone(inst))
	}
	return inst, err
}

// instances remembers the instance of each schema: the instance depends on
// nothing else, and a run sends the same schema with every call.
var instances sync.Map // schema text -> json.RawMessage

func instance(schema json.RawMessage) (json.RawMessage, error) {
	root, err := decodeSchema(schema)
	if err != nil {
		return nil, err
	}
	g := generator{root: root}
	return json.Marshal(g.value(root, 0, 0))
}

func decodeSchema(schema json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, err
	}
	return root, nil
}

type generator struct {
	root any
}

// resolve follows a local $ref ("#/$defs/x", "#/definitions/x", any JSON
// pointer into the root). It returns nil when it cannot.
func (g *generator) resolve(ref string) any {
	if ref == "#" {
		return g.root
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	cur := g.root
	for _, part := range strings.Split(ref[2:], "/") {
		if p, err := url.PathUnescape(part); err == nil {
			part = p
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			cur = c[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// value generates an instance of s. variant makes sibling array items differ
// (for uniqueItems).
func (g *generator) value(s any, variant, depth int) any {
	if depth > maxDepth {
		return nil
	}
	m, ok := s.(map[string]any)
	if !ok {
		// true, or anything we cannot read: every value is valid.
		return "ok"
	}
	if ref, ok := m["$ref"].(string); ok {
		if t := g.resolve(ref); t != nil {
			return g.value(t, variant, depth+1)
		}
	}
	if c, ok := m["const"]; ok {
		return c
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[variant%len(e)]
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if bs, ok := m[k].([]any); ok && len(bs) > 0 {
			return g.value(g.mergeBase(m, k, bs[0]), variant, depth+1)
		}
	}
	if bs, ok := m["allOf"].([]any); ok && len(bs) > 0 {
		return g.value(g.mergeAll(m, bs, depth), variant, depth+1)
	}

	switch schemaType(m) {
	case "null":
		return nil
	case "boolean":
		return variant%2 == 0
	case "integer":
		return integerIn(m, variant)
	case "number":
		return numberIn(m, variant)
	case "string":
		return stringFor(m, variant)
	case "array":
		return g.array(m, variant, depth)
	case "object":
		return g.object(m, variant, depth)
	}
	return "ok"
}

// mergeBase combines the sibling keywords of a combinator with one branch,
// the branch winning.
func (g *generator) mergeBase(m map[string]any, drop string, branch any) any {
	b, ok := branch.(map[string]any)
	if !ok {
		return branch
	}
	if ref, ok := b["$ref"].(string); ok {
		if t, ok := g.resolve(ref).(map[string]any); ok {
			b = t
		}
	}
	out := make(map[string]any, len(m)+len(b))
	for k, v := range m {
		if k != drop {
			out[k] = v
		}
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// mergeAll merges the branches of allOf into one schema: properties and
// required are united, other keywords come from the first that has them.
func (g *generator) mergeAll(m map[string]any, branches []any, depth int) map[string]any {
	out := map[string]any{}
	props := map[string]any{}
	var required []any
	add := func(s map[string]any) {
		for k, v := range s {
			switch k {
			case "allOf":
			case "properties":
				if p, ok := v.(map[string]any); ok {
					for pk, pv := range p {
						props[pk] = pv
					}
				}
			case "required":
				if r, ok := v.([]any); ok {
					required = append(required, r...)
				}
			default:
				if _, seen := out[k]; !seen {
					out[k] = v
				}
			}
		}
	}
	add(m)
	for _, b := range branches {
		bm, ok := b.(map[string]any)
		if !ok {
			continue
		}
		for i := 0; i < maxDepth; i++ {
			ref, ok := bm["$ref"].(string)
			if !ok {
				break
			}
			t, ok := g.resolve(ref).(map[string]any)
			if !ok {
				break
			}
			nb := make(map[string]any, len(t))
			for k, v := range t {
				nb[k] = v
			}
			for k, v := range bm {
				if k != "$ref" {
					nb[k] = v
				}
			}
			bm = nb
		}
		if inner, ok := bm["allOf"].([]any); ok && depth < maxDepth {
			bm = g.mergeAll(bm, inner, depth+1)
		}
		add(bm)
	}
	delete(out, "$ref")
	if len(props) > 0 {
		out["properties"] = props
	}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// schemaType is the type to generate: the first non-null entry of "type", or
// one inferred from the keywords present.
func schemaType(m map[string]any) string {
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		first := ""
		for _, e := range t {
			if s, ok := e.(string); ok {
				if first == "" {
					first = s
				}
				if s != "null" {
					return s
				}
			}
		}
		if first != "" {
			return first
		}
	}
	switch {
	case has(m, "properties", "required", "additionalProperties", "minProperties"):
		return "object"
	case has(m, "items", "prefixItems", "minItems", "maxItems"):
		return "array"
	case has(m, "minLength", "maxLength", "pattern", "format"):
		return "string"
	case has(m, "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
		return "number"
	}
	return ""
}

func has(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

func (g *generator) object(m map[string]any, variant, depth int) any {
	out := map[string]any{}
	props, _ := m["properties"].(map[string]any)
	required := map[string]bool{}
	if r, ok := m["required"].([]any); ok {
		for _, e := range r {
			if s, ok := e.(string); ok {
				required[s] = true
			}
		}
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		// Deep in the tree, only what is required, so recursive schemas end.
		if depth > 4 && !required[k] {
			continue
		}
		out[k] = g.value(props[k], variant, depth+1)
	}
	// Required names without a property schema.
	extra := make([]string, 0)
	for k := range required {
		if _, ok := out[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		if ap, ok := m["additionalProperties"].(map[string]any); ok {
			out[k] = g.value(ap, variant, depth+1)
		} else {
			out[k] = "ok"
		}
	}
	// minProperties, when extra keys are allowed.
	if minP, ok := intKeyword(m, "minProperties"); ok && len(out) < minP {
		ap, apOK := m["additionalProperties"]
		if b, isBool := ap.(bool); !apOK || !isBool || b {
			for i := 0; len(out) < minP; i++ {
				k := "extra" + strconv.Itoa(i)
				if _, taken := out[k]; taken {
					continue
				}
				if as, ok := ap.(map[string]any); ok {
					out[k] = g.value(as, variant, depth+1)
				} else {
					out[k] = "ok"
				}
			}
		}
	}
	return out
}

func (g *generator) array(m map[string]any, variant, depth int) any {
	n := 1
	if minI, ok := intKeyword(m, "minItems"); ok && minI > n {
		n = minI
	}
	if maxI, ok := intKeyword(m, "maxItems"); ok && n > maxI {
		n = maxI
	}
	if depth > 4 {
		// Keep recursive arrays small.
		minI, _ := intKeyword(m, "minItems")
		n = minI
	}
	var prefix []any
	if p, ok := m["prefixItems"].([]any); ok {
		prefix = p
	} else if p, ok := m["items"].([]any); ok { // draft 4 tuples
		prefix = p
	}
	if len(prefix) > n {
		if maxI, ok := intKeyword(m, "maxItems"); !ok || len(prefix) <= maxI {
			n = len(prefix)
		}
	}
	items := m["items"]
	if _, tuple := items.([]any); tuple {
		items = m["additionalItems"]
	}
	out := make([]any, n)
	for i := range out {
		var s any = items
		if i < len(prefix) {
			s = prefix[i]
		}
		if s == nil {
			s = true
		}
		out[i] = g.value(s, variant+i, depth+1)
	}
	return out
}

func intKeyword(m map[string]any, k string) (int, bool) {
	f, ok := numKeyword(m, k)
	if !ok {
		return 0, false
	}
	return int(f), true
}

func numKeyword(m map[string]any, k string) (float64, bool) {
	switch v := m[k].(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case float64:
		return v, true
	case int:
		return float64(v), true
	}
	return 0, false
}

// numBounds returns the limits of a numeric schema and whether each is
// exclusive (draft 4 booleans and draft 6+ numbers are both understood).
func numBounds(m map[string]any) (lo float64, loEx bool, hi float64, hiEx bool) {
	lo, hi = math.Inf(-1), math.Inf(1)
	if v, ok := numKeyword(m, "minimum"); ok {
		lo = v
		loEx, _ = m["exclusiveMinimum"].(bool)
	}
	if v, ok := numKeyword(m, "maximum"); ok {
		hi = v
		hiEx, _ = m["exclusiveMaximum"].(bool)
	}
	if v, ok := numKeyword(m, "exclusiveMinimum"); ok && v >= lo {
		lo, loEx = v, true
	}
	if v, ok := numKeyword(m, "exclusiveMaximum"); ok && v <= hi {
		hi, hiEx = v, true
	}
	return lo, loEx, hi, hiEx
}

// numberFor picks the first candidate inside the schema's limits (and on its
// multipleOf grid), preferring small values near variant.
func numberFor(m map[string]any, variant int, integer bool) float64 {
	lo, loEx, hi, hiEx := numBounds(m)
	mult, hasMult := numKeyword(m, "multipleOf")
	hasMult = hasMult && mult > 0
	inside := func(v float64) bool {
		return (v > lo || (!loEx && v == lo)) && (v < hi || (!hiEx && v == hi))
	}
	v0 := float64(variant)
	cands := []float64{v0, lo + v0, lo + 1 + v0, hi - v0, hi - 1 - v0, lo, hi, lo + (hi-lo)/2}
	for _, c := range cands {
		if math.IsInf(c, 0) || math.IsNaN(c) {
			continue
		}
		if integer {
			c = math.Ceil(c)
		}
		if hasMult {
			c = math.Ceil(c/mult) * mult
			if !inside(c) {
				c = math.Floor(c/mult-1) * mult
			}
		}
		if inside(c) {
			return c
		}
	}
	return 0
}

func integerIn(m map[string]any, variant int) any {
	return int64(numberFor(m, variant, true))
}

func numberIn(m map[string]any, variant int) any {
	return numberFor(m, variant, false)
}

func stringFor(m map[string]any, variant int) any {
	var s string
	switch m["format"] {
	case "date-time":
		s = "2024-01-0" + strconv.Itoa(1+variant%9) + "T00:00:00Z"
	case "date":
		s = "2024-01-0" + strconv.Itoa(1+variant%9)
	case "time":
		s = "12:00:0" + strconv.Itoa(variant%10) + "Z"
	case "email":
		s = "user" + strconv.Itoa(variant) + "@example.com"
	case "uri", "url", "iri":
		s = "https://example.com/" + strconv.Itoa(variant)
	case "uuid":
		s = "00000000-0000-4000-8000-" + leftPad(strconv.Itoa(variant), 12, '0')
	case "hostname":
		s = "host" + strconv.Itoa(variant) + ".example.com"
	case "ipv4":
		s = "192.0.2." + strconv.Itoa(1+variant%250)
	case "ipv6":
		s = "2001:db8::" + strconv.Itoa(1+variant%9)
	default:
		s = "example"
		if variant > 0 {
			s += " " + strconv.Itoa(variant)
		}
	}
	if minL, ok := intKeyword(m, "minLength"); ok {
		for n := len([]rune(s)); n < minL; n++ {
			s += "x"
		}
	}
	if maxL, ok := intKeyword(m, "maxLength"); ok && len([]rune(s)) > maxL {
		r := []rune(s)
		if variant > 0 && maxL > 0 {
			// Keep the variant's distinguishing tail.
			tail := strconv.Itoa(variant)
			if len(tail) < maxL {
				s = string(r[:maxL-len(tail)]) + tail
				return s
			}
		}
		s = string(r[:maxL])
	}
	return s
}

func leftPad(s string, n int, c byte) string {
	for len(s) < n {
		s = string(c) + s
	}
	return s
}

// Violation returns JSON that does not validate against schema: an empty
// object when something is required, otherwise a value of the wrong type.
func Violation(schema json.RawMessage) json.RawMessage {
	root, err := decodeSchema(schema)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	g := generator{root: root}
	m, _ := root.(map[string]any)
	for i := 0; m != nil && i < maxDepth; i++ {
		ref, ok := m["$ref"].(string)
		if !ok {
			break
		}
		m, _ = g.resolve(ref).(map[string]any)
	}
	if m == nil {
		return json.RawMessage(`{}`)
	}
	switch schemaType(m) {
	case "object", "":
		if r, ok := m["required"].([]any); ok && len(r) > 0 {
			return json.RawMessage(`{}`)
		}
		if props, ok := m["properties"].(map[string]any); ok && len(props) > 0 {
			keys := make([]string, 0, len(props))
			for k := range props {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			// A value of the wrong type for the first property.
			ps, _ := props[keys[0]].(map[string]any)
			b, _ := json.Marshal(map[string]json.RawMessage{keys[0]: wrongType(ps)})
			return b
		}
		return json.RawMessage(`[]`)
	}
	return wrongType(m)
}

func wrongType(m map[string]any) json.RawMessage {
	switch schemaType(m) {
	case "string":
		return json.RawMessage(`12345`)
	case "integer", "number":
		return json.RawMessage(`"not a number"`)
	case "boolean":
		return json.RawMessage(`"not a boolean"`)
	case "array":
		return json.RawMessage(`{"not":"an array"}`)
	case "null":
		return json.RawMessage(`"not null"`)
	}
	return json.RawMessage(`[["not", "an object"]]`)
}

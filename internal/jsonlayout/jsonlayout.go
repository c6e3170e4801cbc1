// Package jsonlayout lays out large JSON documents for people and for
// disk at once: the outer objects one member a line, each element of a
// list of records on a line of its own, and everything deeper compact.
// A 1,000-source answer.json indented throughout spends a quarter of its
// bytes on indentation; laid out this way it stays readable, greppable a
// record a line, and close to its compact size.
package jsonlayout

import (
	"bytes"
	"encoding/json"
)

// Layout lays out the JSON document src. Objects nested fewer than
// objectDepth levels deep (the top one is level 0) get a member a line;
// an array nested fewer than objectDepth+1 levels deep whose elements are
// objects or arrays gets an element a line; all else is compact. The
// result ends with a line break.
func Layout(src []byte, objectDepth int) ([]byte, error) {
	var c bytes.Buffer
	if err := json.Compact(&c, src); err != nil {
		return nil, err
	}
	b := c.Bytes()
	out := make([]byte, 0, len(b)+len(b)/16)
	// expanded says, for each open container, whether its elements go a
	// line each.
	var expanded []bool
	newline := func(depth int) {
		out = append(out, '\n')
		for range depth {
			out = append(out, ' ', ' ')
		}
	}
	inString := false
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if inString {
			out = append(out, ch)
			switch ch {
			case '\\':
				i++
				out = append(out, b[i])
			case '"':
				inString = false
			}
			continue
		}
		switch ch {
		case '"':
			inString = true
			out = append(out, ch)
		case '{', '[':
			depth := len(expanded)
			empty := i+1 < len(b) && (b[i+1] == '}' || b[i+1] == ']')
			exp := !empty && (ch == '{' && depth < objectDepth ||
				ch == '[' && depth < objectDepth+1 && i+1 < len(b) && (b[i+1] == '{' || b[i+1] == '['))
			if len(expanded) > 0 && !expanded[len(expanded)-1] {
				exp = false // inside a compact value everything is compact
			}
			expanded = append(expanded, exp)
			out = append(out, ch)
			if exp {
				newline(depth + 1)
			}
		case '}', ']':
			exp := expanded[len(expanded)-1]
			expanded = expanded[:len(expanded)-1]
			if exp {
				newline(len(expanded))
			}
			out = append(out, ch)
		case ',':
			out = append(out, ch)
			if expanded[len(expanded)-1] {
				newline(len(expanded))
			}
		case ':':
			out = append(out, ch)
			if expanded[len(expanded)-1] {
				out = append(out, ' ')
			}
		default:
			out = append(out, ch)
		}
	}
	return append(out, '\n'), nil
}

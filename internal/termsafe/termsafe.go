// Package termsafe makes untrusted text (a corpus title, a theme name, an
// observer's name, a model's answer) safe to show on a terminal or to write
// into a document that is read on one: it cannot move the cursor, clear the
// screen, set the window title, reorder the text with bidirectional
// controls, or start a line of its own that passes for one of sot's.
//
// Every character that could do one of those things is replaced by a
// visible escape (ESC becomes `\x1b`, a line break in a one-line value
// becomes `\n`), so what was there stays readable; text that holds none is
// returned unchanged, without allocating.
package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line makes s safe as a one-line value: every control character (line
// breaks and tabs included), every bidirectional control and every byte
// that is not UTF-8 is replaced by a visible escape.
func Line(s string) string { return clean(s, false) }

// Text makes s safe as text of several lines: line breaks ("\n") and tabs
// are kept, a "\r\n" becomes "\n", and everything Line escapes apart from
// those is escaped.
func Text(s string) string { return clean(s, true) }

// Safe reports whether s would be returned unchanged by Line.
func Safe(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || unsafeRune(r) {
			return false
		}
		i += n
	}
	return true
}

func clean(s string, lines bool) string {
	if lines {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || unsafeRune(r) && !(lines && (r == '\n' || r == '\t')) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case lines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafeRune reports the characters a terminal acts on rather than shows:
// the C0 controls and DEL, the C1 controls (U+0080 to U+009F, which some
// terminals read as CSI and OSC), the line and paragraph separators, and
// the bidirectional embedding, override and isolate controls.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

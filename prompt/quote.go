package prompt

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text that comes from the material (file names, skipped-file lists, the
// description of what is reviewed) or from a model (findings, summaries,
// arguments, which may quote the material) is untrusted. A prompt carries
// it in one of four ways, so that none of it can start a line of its own
// and pass for the prompt's own headings or instructions:
//
//   - inside a fence (Fence), where every line starts with the Gutter;
//   - as a Go string literal (Quote), for names;
//   - flattened to one line (Inline), after a label of the prompt's own;
//   - as a block quote (Block), every line starting with "> ".
//
// Each of them also escapes the characters that some reader takes for a
// line break although Go's strings.Split(s, "\n") does not: carriage
// return, vertical tab, form feed, the information separators U+001C to
// U+001E, NEL (U+0085), and the Unicode line and paragraph separators
// U+2028 and U+2029, with every other control character.

// Gutter begins every line between a fence's markers. Material cannot
// produce a line without it, so neither a file name holding a line break
// nor a copy of the end marker can pass for text outside the fence.
const Gutter = "│"

// Quote returns s as a Go string literal: in double quotes, with line
// breaks, control characters and other unprintable characters escaped.
func Quote(s string) string { return strconv.Quote(s) }

// Inline returns s fit to stand in the middle of a prompt line, after a
// label: every run of white space (line breaks of all kinds among it)
// becomes one space, leading and trailing white space goes, and the other
// control characters are escaped.
func Inline(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		writeRune(&b, r)
	}
	return b.String()
}

// Block returns s as a block quote: every line starts with "> " (a blank
// line with ">"), and characters that could break a line are escaped, so
// the quote cannot end early.
func Block(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	eachLine(strings.TrimRight(s, "\n"), func(line string) {
		if line == "" {
			b.WriteString(">\n")
			return
		}
		b.WriteString("> ")
		writeLine(&b, line)
		b.WriteByte('\n')
	})
	return strings.TrimSuffix(b.String(), "\n")
}

// OneLine escapes the characters of s that could break a line, and leaves
// everything else (spaces included) as it is.
func OneLine(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	writeLine(&b, s)
	return b.String()
}

// eachLine calls f with every line of s, split at "\n". A carriage return
// that ends a line (a CRLF line ending) belongs to the line break and is
// dropped; any other carriage return stays in its line.
func eachLine(s string, f func(string)) {
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			f(strings.TrimSuffix(s, "\r"))
			return
		}
		f(strings.TrimSuffix(s[:i], "\r"))
		s = s[i+1:]
	}
}

// writeLine writes one line with the characters that could break it escaped.
func writeLine(b *strings.Builder, line string) {
	for len(line) > 0 {
		i := nextEscape(line)
		if i < 0 {
			b.WriteString(line)
			return
		}
		b.WriteString(line[:i])
		r, n := utf8.DecodeRuneInString(line[i:])
		writeEscape(b, r)
		line = line[i+n:]
	}
}

// escapedLen is the length of what writeLine writes of line.
func escapedLen(line string) int {
	n := 0
	for len(line) > 0 {
		i := nextEscape(line)
		if i < 0 {
			return n + len(line)
		}
		r, size := utf8.DecodeRuneInString(line[i:])
		n += i + escapeLen(r)
		line = line[i+size:]
	}
	return n
}

// writeRune writes r, escaped when it must be.
func writeRune(b *strings.Builder, r rune) {
	if mustEscape(r) {
		writeEscape(b, r)
		return
	}
	b.WriteRune(r)
}

// mustEscape reports whether r may break a line or is a control character
// other than tab: C0 controls, DEL, C1 controls (NEL among them) and the
// Unicode line and paragraph separators.
func mustEscape(r rune) bool {
	return (r < 0x20 && r != '\t') || (r >= 0x7f && r <= 0x9f) || r == 0x2028 || r == 0x2029
}

// needsEscape reports whether s holds a character to escape.
func needsEscape(s string) bool { return nextEscape(s) >= 0 }

// nextEscape returns the byte offset of the first character to escape in s,
// or -1. It looks at bytes: every such character is ASCII, a two-byte
// sequence starting 0xC2 (C1) or the three bytes E2 80 A8/A9.
func nextEscape(s string) int {
	for i := 0; i < len(s); i++ {
		if !mayEscape[s[i]] {
			continue
		}
		switch c := s[i]; {
		case c < 0x20 && c != '\t', c == 0x7f:
			return i
		case c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f:
			return i
		case c == 0xe2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9):
			return i
		}
	}
	return -1
}

// mayEscape marks the bytes nextEscape stops at: those that are, or may
// begin, a character to escape.
var mayEscape = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = c != '\t'
	}
	t[0x7f], t[0xc2], t[0xe2] = true, true, true
	return t
}()

// escapeLen is the length of what writeEscape writes of r.
func escapeLen(r rune) int {
	switch {
	case r == '\n' || r == '\r' || r == '\v' || r == '\f':
		return 2
	case r < 0x80:
		return 4
	}
	return 6
}

// writeEscape writes r as a Go escape sequence.
func writeEscape(b *strings.Builder, r rune) {
	switch r {
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\v':
		b.WriteString(`\v`)
	case '\f':
		b.WriteString(`\f`)
	default:
		if r < 0x80 {
			fmt.Fprintf(b, `\x%02x`, r)
		} else {
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
}

// Package markdown hardens untrusted text (what a model or a user wrote)
// for a Markdown document, so that the text cannot change the document's
// shape: a one-line value cannot start a line of its own, a code span
// cannot be closed early, and quoted or appended lines cannot open a
// section. Every function also escapes the characters a terminal acts on
// rather than shows (ESC and the other C0 and C1 controls, bidirectional
// controls, bytes that are not UTF-8) as visible text, the way
// internal/termsafe does, so a document read with cat or less cannot set
// the window title, clear the screen or reorder its lines.
package markdown

import (
	"strings"

	"github.com/sotlabs/sot/internal/termsafe"
)

// OneLine collapses all whitespace (line breaks included) to single spaces
// and trims it from both ends, so a value can never start a line of its
// own. Control characters that are not whitespace are escaped
// (termsafe.Line).
func OneLine(s string) string { return termsafe.Line(strings.Join(strings.Fields(s), " ")) }

// Code renders s on one line (OneLine) as an inline code span, widening
// the fence when s itself contains backticks. Text without anything but
// whitespace renders as "".
func Code(s string) string {
	s = OneLine(s)
	if s == "" {
		return ""
	}
	if !strings.Contains(s, "`") {
		return "`" + s + "`"
	}
	fence := "``"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + " " + s + " " + fence
}

// Quote renders multi-line text as a block quote, each line prefixed by
// indent and "> " (a blank line by indent and ">"), every line ending in a
// line break. Lines that Markdown would read as headings (ATX "#" or a
// setext underline) are escaped, so the text stays inside the quote. Line
// breaks may be "\n", "\r\n" or "\r"; blank lines at either end are
// dropped. Tabs are kept; other control characters are escaped
// (termsafe.Text).
func Quote(indent, s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = termsafe.Text(s)
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		l = neutralize(strings.TrimRight(l, " \t"))
		if l == "" {
			b.WriteString(indent + ">\n")
			continue
		}
		b.WriteString(indent + "> " + l + "\n")
	}
	return b.String()
}

// MultiLine reports whether s, trimmed of whitespace at both ends, still
// has a line break: whether it needs Quote rather than OneLine to keep its
// lines.
func MultiLine(s string) bool {
	return strings.ContainsAny(strings.TrimSpace(s), "\n\r")
}

// Demote keeps one line of untrusted text from opening a section of level
// one or two: "# x" and "## x" (after up to three spaces) become "### x"
// and "#### x", and a setext underline, which would turn the line above it
// into a heading, is escaped. Other lines, deeper headings and indented
// code among them, are kept. Tabs are kept; other control characters,
// line breaks included, are escaped (termsafe.Line).
func Demote(l string) string {
	l = lineKeepingTabs(l)
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 {
		return l // indented code
	}
	for _, p := range []string{"# ", "## "} {
		if strings.HasPrefix(t, p) || t == strings.TrimSpace(p) {
			return "##" + t
		}
	}
	if isSetextUnderline(t) {
		return `\` + t
	}
	return l
}

// lineKeepingTabs is termsafe.Line except that tabs are kept.
func lineKeepingTabs(l string) string {
	if !strings.Contains(l, "\t") {
		return termsafe.Line(l)
	}
	parts := strings.Split(l, "\t")
	for i, p := range parts {
		parts[i] = termsafe.Line(p)
	}
	return strings.Join(parts, "\t")
}

// neutralize escapes a line that would otherwise be a heading.
func neutralize(l string) string {
	t := strings.TrimLeft(l, " \t")
	if strings.HasPrefix(t, "#") || isSetextUnderline(t) {
		return `\` + t
	}
	return l
}

// isSetextUnderline reports whether t, once trimmed, is a run of "=" or of
// "-": a line that makes the line above it a heading.
func isSetextUnderline(t string) bool {
	t = strings.TrimSpace(t)
	if t == "" {
		return false
	}
	return strings.Trim(t, "=") == "" || strings.Trim(t, "-") == ""
}

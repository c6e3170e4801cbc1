package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sotlabs/sot/finding"
	"github.com/sotlabs/sot/synthesis"
)

// one collapses all whitespace (newlines included) to single spaces, so a
// value can never start a line of its own.
func one(s string) string { return strings.Join(strings.Fields(s), " ") }

// code renders s as an inline code span, widening the fence when s itself
// contains backticks.
func code(s string) string {
	s = one(s)
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

// quote renders multi-line text as a block quote, each line prefixed by
// indent and "> ". Lines that Markdown would read as headings (ATX "#" or a
// setext underline) are escaped, so the text stays inside the quote.
func quote(indent, s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
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

// neutralize escapes a line that would otherwise be a heading.
func neutralize(l string) string {
	t := strings.TrimLeft(l, " \t")
	if strings.HasPrefix(t, "#") || isSetextUnderline(t) {
		return `\` + t
	}
	return l
}

func isSetextUnderline(t string) bool {
	t = strings.TrimSpace(t)
	if t == "" {
		return false
	}
	return strings.Trim(t, "=") == "" || strings.Trim(t, "-") == ""
}

// multiline reports whether s has more than one non-blank line.
func multiline(s string) bool {
	return strings.ContainsAny(strings.TrimSpace(s), "\n\r")
}

// num formats an integer with thousands separators.
func num(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func usd(v float64) string { return fmt.Sprintf("$%.4f", v) }

func wall(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }

// plural picks the singular or plural noun for n.
func plural(n int, singular, pluralForm string) string {
	if n == 1 {
		return "1 " + singular
	}
	return num(n) + " " + pluralForm
}

// orNone returns s, or "none" when it is empty.
func orNone(s string) string {
	if s = one(s); s == "" {
		return "none"
	}
	return s
}

// joinOne collapses each element and joins them with ", ".
func joinOne(xs []string) string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if x = one(x); x != "" {
			out = append(out, x)
		}
	}
	return strings.Join(out, ", ")
}

// locString renders a location; a document section is added in
// parentheses when both a file and a section are known.
func locString(l finding.Location) string {
	s := l.String()
	if l.File != "" && l.Section != "" {
		s += " (" + l.Section + ")"
	}
	return one(s)
}

// MissingName names a part of the review that did not complete.
func MissingName(m synthesis.Missing) string {
	s := m.Specialist
	if m.Lens != "" {
		s += "/" + m.Lens
	}
	if m.Chunk > 0 {
		files := ""
		if len(m.Files) > 0 {
			const most = 5
			shown := m.Files[:min(len(m.Files), most)]
			files = ": " + strings.Join(shown, ", ")
			if len(m.Files) > most {
				files += fmt.Sprintf(" and %d more", len(m.Files)-most)
			}
		}
		s += fmt.Sprintf(" (chunk %d%s)", m.Chunk, files)
	}
	return one(s)
}

// lenses lists the distinct perspectives of the sources, in source order.
func lenses(sources []finding.Finding) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range sources {
		if l := one(s.Lens); l != "" && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

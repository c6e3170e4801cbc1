package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sotlabs/sot/internal/markdown"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

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
	if s = markdown.OneLine(s); s == "" {
		return "none"
	}
	return s
}

// joinOne collapses each element and joins them with ", ".
func joinOne(xs []string) string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if x = markdown.OneLine(x); x != "" {
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
	return markdown.OneLine(s)
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
	return markdown.OneLine(s)
}

// lenses lists the distinct perspectives of the sources, in source order.
func lenses(sources []finding.Finding) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range sources {
		if l := markdown.OneLine(s.Lens); l != "" && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

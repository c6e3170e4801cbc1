package review

import (
	"strings"

	"github.com/sotlabs/sot/material"
)

// anchor lets synthesis check grounding against the material: the files,
// their changed and shown lines, and the sections of documents.
type anchor struct {
	m     *material.Material
	heads map[string][]string // each document's headings, by path; nil for a diff
}

// newAnchor reads the documents' headings once: synthesis asks about
// sections once per finding.
func newAnchor(m *material.Material) anchor {
	a := anchor{m: m}
	if m.Type != material.TypeDiff {
		a.heads = make(map[string][]string, len(m.Files))
		for _, f := range m.Files {
			a.heads[f.Path] = headings(f.Text)
		}
	}
	return a
}

func (a anchor) IsChanged(p string, l int) bool { return a.m.IsChanged(p, l) }
func (a anchor) IsShown(p string, l int) bool   { return a.m.IsShown(p, l) }
func (a anchor) HasFile(p string) bool {
	_, ok := a.m.File(p)
	return ok
}

// HasSection reports whether a document of the material (path, or any
// document when path is "") has a Markdown heading matching section. A
// document without headings cannot be checked, so any section is taken to
// exist in it.
func (a anchor) HasSection(path, section string) bool {
	want := normalHeading(section)
	if want == "" {
		return true
	}
	files := a.m.Files
	if path != "" {
		f, ok := a.m.File(path)
		if !ok {
			return false
		}
		files = []material.File{*f}
	}
	for _, f := range files {
		heads := a.heads[f.Path]
		if len(heads) == 0 {
			return true
		}
		for _, h := range heads {
			if h == want || (len(want) >= 3 && strings.Contains(h, want)) || (len(h) >= 3 && strings.Contains(want, h)) {
				return true
			}
		}
	}
	return false
}

// headings lists the Markdown headings of a rendered document ("  12 | ##
// Storage" lines), normalized.
func headings(rendered string) []string {
	var out []string
	for line := range strings.Lines(rendered) {
		_, text, ok := strings.Cut(line, " | ")
		if !ok || !strings.HasPrefix(text, "#") {
			continue
		}
		if h := normalHeading(text); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// normalHeading lower-cases a heading and drops its "#" marks, a "§" and
// extra spaces, so that "## Security Model" and "security model" match.
func normalHeading(s string) string {
	s = strings.TrimLeft(strings.TrimSpace(s), "#§ ")
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

package persona

import (
	"regexp"
	"strings"
	"testing"
)

// roleHead is a role file's frontmatter and title (the title on line 10);
// the tests add a body.
const roleHead = `---
name: auditor
kind: role
description: Checks the books.
prompt_prefix: "As an auditor, check the figures:"
traits: [exact]
weight: 0.6
tier: primary
---
# Auditor

Reads the ledgers before the minutes.
`

// TestRoleWithoutMethodWarns: sot ask sends a role's method, so a role
// without one (or with an empty one) draws a warning, never an error, at
// the line where the section belongs, saying what to write there.
func TestRoleWithoutMethodWarns(t *testing.T) {
	tests := []struct {
		name, body string
		want       string // the one problem expected, "" for none
	}{
		{"no method", "",
			`auditor.md:10: warning: the role has no "## Method", so sot ask sends only its prompt_prefix and description; add the section below the title on this line, with 2 or 3 numbered steps (about 50 tokens in all) that say how the role reads the sources`},
		{"empty method", "\n## Method\n\n",
			`auditor.md:14: warning: section "## Method" is empty, so sot ask sends only the role's prompt_prefix and description; write below the heading 2 or 3 numbered steps`},
		{"a method", "\n## Method\n\n1. Add up the figures.\n2. Name the ones that do not reconcile.\n", ""},
		{"a method with a suffix", "\n## Method: reconciling\n\n1. Add up the figures.\n2. Name the ones that do not reconcile.\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, probs := Parse("auditor.md", []byte(roleHead+tt.body), Role, LevelProject)
			if HasErrors(probs) {
				t.Fatalf("errors %v; a role's method only draws a warning", probs)
			}
			switch {
			case tt.want == "" && len(probs) > 0:
				t.Errorf("problems %v; want none", probs)
			case tt.want != "" && (len(probs) != 1 || !strings.HasPrefix(probs[0].Error(), tt.want)):
				t.Errorf("problems %v; want one starting %q", probs, tt.want)
			}
		})
	}
}

// TestRoleTemplateAsksForAMethod: a new role's template holds a
// "## Method" of numbered steps to fill in, each a placeholder that says
// what the step is for; filled in, the section is the role's method.
func TestRoleTemplateAsksForAMethod(t *testing.T) {
	text, err := Template(Role, "auditor")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Parse("auditor.md", []byte(text), Role, LevelProject)
	m := p.Section("Method")
	step := regexp.MustCompile(`^[1-3]\. <<TODO: [^>]+>>$`)
	lines := strings.Split(m, "\n")
	if len(lines) < 2 || len(lines) > 3 {
		t.Fatalf("the template's method has %d lines, want 2 or 3 steps:\n%s", len(lines), m)
	}
	for _, l := range lines {
		if !step.MatchString(l) {
			t.Errorf("method line %q is not a numbered placeholder", l)
		}
	}
	if !strings.Contains(m, "about 50 tokens") || !strings.Contains(m, "sot ask sends the steps of this section") {
		t.Errorf("the placeholders do not say how long the method is or what it is for:\n%s", m)
	}
	filled := placeholderPattern.Re().ReplaceAllString(text, "Add up the figures")
	q, probs := Parse("auditor.md", []byte(filled), Role, LevelProject)
	if len(probs) > 0 {
		t.Errorf("filled in, the template has problems: %v", probs)
	}
	if got := q.Section("Method"); !strings.HasPrefix(got, "1. Add up the figures\n2. Add up the figures") {
		t.Errorf("filled in, the method is %q", got)
	}
}

package ask

import (
	"strings"
	"testing"
)

// A corpus title, a group's name, a perspective and every answer of the
// models reach ANSWER.md with their control characters escaped, so the
// file cannot set a terminal's title or clear its screen when shown with
// cat, and no value starts a line of its own.
func TestAnswerMarkdownEscapesControlCharacters(t *testing.T) {
	const e = "x\x1b]0;pwned\x07\x1b[2J\r\nsot: warning: fake\u009b1m\u202e"
	a := &Answer{
		RunID: "r" + e, Question: "q" + e, Intent: "temporal" + e, Complexity: e, Rule: e, SoT: true, Strategy: "rotating" + e, Labels: true, ByGroup: true,
		Sources: []SourceUse{{ID: "s1", Title: "title" + e, Chosen: e, Role: "critic" + e, RoleWhy: e, Parts: 2, Group: "group" + e, Answers: []string{"A1"}}},
		Evidence: []Evidence{
			{ID: "A1", Source: "s1", Title: "title" + e, Role: "critic" + e, Addresses: true, Summary: e, Points: []Point{{Point: e, Quote: e, QuoteFound: true}}},
			{ID: "A2", Source: "s1", Title: "title" + e, Summary: e},
		},
		ConflictSummary: &ConflictSummary{Themes: []string{"theme" + e}, Summary: e},
		Debate: &Debate{
			Tensions:    []Tension{{ID: "T1", Topic: e, Sides: []Side{{Position: e, Answers: []string{"A1"}}}, Treatment: "addressed", How: e}},
			UniqueRisks: []UniqueRisk{{Risk: e, Answer: "A1"}},
		},
		Sentences: []Sentence{{Text: "s" + e, Answers: []string{"A1"}, Quote: e}},
		Dropped:   []Dropped{{Sentence: Sentence{Text: e}, Reason: e}},
		Missing:   []Missing{{Step: "map", What: e, Error: e}},
		Skipped:   []Skipped{{Path: "p" + e + ".md", Reason: e}},
		Notes:     []string{e},
		SoTNote:   e,
	}
	md := a.Markdown()
	if i := strings.IndexAny(md, "\x1b\x07\r\u009b\u202e"); i >= 0 {
		t.Errorf("ANSWER.md holds a control character at byte %d: %q", i, md[max(0, i-40):min(len(md), i+40)])
	}
	if !strings.Contains(md, `titlex\x1b]0;pwned\x07\x1b[2J`) {
		t.Errorf("ANSWER.md does not show the title escaped:\n%s", md)
	}
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "sot: warning: fake") {
			t.Errorf("a value started a line of its own: %q", l)
		}
	}
}

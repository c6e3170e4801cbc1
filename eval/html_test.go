package eval

import (
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/browsertest"
)

// The HTML report is one page that loads nothing, logs no error, and shows
// the chart, its bars, the modes and the cases; names from the cases are
// escaped.
func TestReportHTML(t *testing.T) {
	outcomes := []Outcome{
		{Case: "go-<b>x</b>", Defects: 1, Found: 1, True: 1, CostUSD: 0.02, WallMS: 1200},
		{Case: "py-y", Defects: 1, False: 1, CostUSD: 0.02, WallMS: 900},
		{Case: "ts-clean", Clean: true, False: 1, CostUSD: 0.01, WallMS: 700, Error: "exit 1: rate limited"},
	}
	single := []Outcome{{Case: "go-<b>x</b>", Defects: 1}, {Case: "py-y", Defects: 1, Found: 1, True: 1}, {Case: "ts-clean", Clean: true}}
	r := &Report{Name: "t", Model: "openai:gpt-4.1", Cases: 3, Defects: 2, Clean: 1, Matching: MatchingRule, Budget: "equal",
		Modes: []Mode{
			{Name: "sot", Description: "the society", Figures: Summarize(outcomes, 1), Outcomes: outcomes,
				Specialists: map[string]Figures{"security": Summarize(outcomes[:1], 1)}},
			{Name: "single", Description: "one prompt", Figures: Summarize(single, 1), Outcomes: single},
		}}
	page, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(page), "<b>x</b>") {
		t.Error("a case's id reached the page unescaped")
	}
	p := browsertest.Check(t, "eval.html", page, "#chart svg", "rect.bar", "#modes tr", "#cases tr", "table.specialists")
	for _, s := range p.Selectors {
		if s.Selector == "rect.bar" && s.Count != 4 {
			t.Errorf("%d bars, want recall and precision of 2 modes", s.Count)
		}
	}
}

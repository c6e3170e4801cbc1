package ask

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./ask -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s\n(go test ./ask -run %s -update rewrites it)", name, diff, t.Name())
	}
}

// ANSWER.md shows the answer with its citations and perspective labels,
// the conflict summary, the tensions and how the answer treats them, one
// section per perspective, the sources and why they were chosen, and what
// was dropped or is missing; untrusted text cannot change its shape.
func TestAnswerMarkdown(t *testing.T) {
	a := &Answer{
		RunID: "rabc", Question: "When does the billing migration happen?", Intent: "temporal", Complexity: "simple", Rule: `"when" asks about time`,
		SoT: true, Strategy: "rotating", Labels: true,
		Sources: []SourceUse{
			{ID: "s1", Title: "Q3 planning | board", Type: "meeting", Relevance: 0.91, Bonus: 0.3, Chosen: "pick 1: relevance 0.91, the first of its source type", Role: "critic", RoleWhy: "rotation: the first role", Parts: 1, Answers: []string{"A1"}},
			{ID: "s2", Title: "Q3 retro", Type: "meeting", Relevance: 0.75, Role: "advocate", RoleWhy: "rotation: the second role", Parts: 2, Answers: []string{"A2"}},
		},
		Evidence: []Evidence{
			{ID: "A1", Source: "s1", Title: "Q3 planning | board", Role: "critic", Addresses: true, Summary: "Delayed to Q4.", Points: []Point{{Point: "It moved to Q4.", Quote: "delay to Q4", QuoteFound: true}}},
			{ID: "A2", Source: "s2", Title: "Q3 retro", Role: "advocate", Addresses: true, Summary: "The pilot shipped.\n# not a heading", Points: []Point{{Point: "Shipped in August.", Quote: "invented", QuoteFound: false}}},
		},
		ConflictSummary: &ConflictSummary{Tensions: 1, Agreements: 0, Themes: []string{"migration", "contract"}, Summary: "1 potential conflict detected."},
		Debate: &Debate{
			Tensions:    []Tension{{ID: "T1", Topic: "when it happens", Sides: []Side{{Position: "Q4", Answers: []string{"A1"}}, {Position: "under way", Answers: []string{"A2"}}}, Treatment: "open", How: "two dates"}},
			UniqueRisks: []UniqueRisk{{Risk: "the unsigned contract", Answer: "A1"}},
		},
		Sentences: []Sentence{{Text: "The migration was delayed to Q4.", Answers: []string{"A1"}, Quote: "delay to Q4"}},
		Dropped:   []Dropped{{Sentence: Sentence{Text: "Everyone agrees."}, Reason: "it cites no answer"}},
		Missing:   []Missing{{Step: "map", What: "A3 (Facilities)", Error: "the provider is unavailable"}},
		Usage:     Usage{Calls: 4, InputTokens: 1200, OutputTokens: 300, CostUSD: 0.0123},
	}
	golden(t, "answer.md", []byte(a.Markdown()))
}

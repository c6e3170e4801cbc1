package ask

import (
	"context"
	"slices"
	"testing"
)

// A question none of whose words a source holds reads the newest sources,
// says so, and still has every source of the corpus in the plan, the
// chosen ones read in full; a question that matches chooses among the hits
// and has every source too.
func TestGatherChoosesAndKeepsEverySource(t *testing.T) {
	top := testCorpus(t)
	every := -1
	for _, c := range []struct {
		question string
		noMatch  bool
	}{
		{"Qzxvw plorbt frimble?", true},
		{"Why did the billing migration slip, and what do the teams disagree about?", false},
	} {
		o := testOptions(t, top, "http://127.0.0.1:1")
		o.Question = c.question
		p, err := Prepare(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(p.Notes, noMatchNote); got != c.noMatch {
			t.Errorf("%q: the no-match note %v, want %v (notes %q)", c.question, got, c.noMatch, p.Notes)
		}
		if len(p.Chosen) == 0 || len(p.Sources) < len(p.Chosen) {
			t.Fatalf("%q: %d chosen of %d sources", c.question, len(p.Chosen), len(p.Sources))
		}
		if every >= 0 && len(p.Sources) != every {
			t.Errorf("%q: %d sources in the plan, %d for the other question", c.question, len(p.Sources), every)
		}
		every = len(p.Sources)
		for _, ch := range p.Chosen {
			if s, ok := p.Sources[ch.ID]; !ok || s.Text == "" {
				t.Errorf("%q: chosen source %s not read in full (in the plan: %v)", c.question, ch.ID, ok)
			}
		}
	}
}

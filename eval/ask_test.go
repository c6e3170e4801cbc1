package eval

import (
	"os"
	"testing"
)

// The shipped question set loads, each question's notes among its own;
// an answer is scored by the notes its sentences cite.
func TestAskSets(t *testing.T) {
	sets, err := BuiltinAskSets()
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) == 0 || len(sets[0].Questions) < 5 {
		t.Fatalf("sets %+v", sets)
	}
	// The golden answer of sot ask: A1 reads the ops retro, A2 the
	// architecture review, A3 all three notes.
	b, err := os.ReadFile("../ask/testdata/golden/out/answer.json")
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{"ops.md": "Ops retro", "arch.md": "Architecture review", "finance.md": "Finance review"}
	q := AskQuestion{ID: "q", Sources: []string{"ops.md"}}
	o, err := ScoreAnswer(q, titles, b)
	if err != nil {
		t.Fatal(err)
	}
	if o.Sentences == 0 || o.Dropped != 1 || o.Citations == 0 {
		t.Fatalf("outcome %+v", o)
	}
	// Only the ops retro holds the answer: every citation of A2 alone is
	// unsupported; A3 reads the ops retro among others.
	all := ScoreAnswerMust(t, AskQuestion{ID: "all", Sources: []string{"ops.md", "arch.md", "finance.md"}}, titles, b)
	if all.Unsupported != 0 || o.Unsupported == 0 || o.Unsupported >= o.Citations {
		t.Errorf("unsupported: %d of %d with the ops retro alone, %d with every note", o.Unsupported, o.Citations, all.Unsupported)
	}
	f := SummarizeAsk([]AskOutcome{o, all}, 1)
	if f.Questions != 2 || f.Dropped.Value <= 0 || f.Unsupported.Value <= 0 {
		t.Errorf("figures %+v", f)
	}
	if NoteTitle("x.md", []byte("---\ndate: 1\n---\n# Q3 planning\n\ntext")) != "Q3 planning" || NoteTitle("y.md", []byte("text")) != "y" {
		t.Error("note titles")
	}
}

func ScoreAnswerMust(t *testing.T, q AskQuestion, titles map[string]string, b []byte) AskOutcome {
	t.Helper()
	o, err := ScoreAnswer(q, titles, b)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

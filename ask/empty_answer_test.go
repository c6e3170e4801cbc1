package ask

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm/llmtest"
)

// A reduce answer with no sentence is asked for once more, saying so;
// when the second has none either, the question fails as unfounded (exit
// 1), never an empty answer that exits 0. An answer cut off at its
// output limit, twice, is a missing part (exit 3) that says so.
func TestAskEmptyOrCutAnswer(t *testing.T) {
	// sentence i cites id, the answer read from the Q3 planning note.
	sentence := func(i int, id string) any {
		return map[string]any{"text": fmt.Sprintf("Point %d: the billing migration was delayed to Q4 because the vendor contract is not signed.", i), "answers": []any{id}, "quote": ""}
	}
	tests := []struct {
		name      string
		sentences func(n int, id string) []any // the reduce's sentences at its nth request
		check     func(t *testing.T, out *Outcome, reduces []llmtest.Recorded)
	}{
		{name: "no sentence, twice", sentences: func(int, string) []any { return []any{} },
			check: func(t *testing.T, out *Outcome, reduces []llmtest.Recorded) {
				var ue *UnfoundedError
				if err := out.Verdict(); !errors.As(err, &ue) || !strings.Contains(err.Error(), "no sentence") {
					t.Errorf("Verdict = %v, want an UnfoundedError saying the answer has no sentence", err)
				}
				if len(reduces) != 2 || !strings.Contains(reduces[1].LastUser(), "the answer has no sentence") {
					t.Errorf("%d reduce requests; want a second that says the first had no sentence", len(reduces))
				}
			}},
		{name: "no sentence, then one", sentences: func(n int, id string) []any {
			if n == 1 {
				return []any{}
			}
			return []any{sentence(1, id)}
		}, check: func(t *testing.T, out *Outcome, reduces []llmtest.Recorded) {
			if err := out.Verdict(); err != nil || len(out.Answer.Sentences) != 1 {
				t.Errorf("Verdict = %v with %d sentence(s), want a whole answer of one", err, len(out.Answer.Sentences))
			}
		}},
		{name: "cut off twice", sentences: func(_ int, id string) []any {
			var ss []any
			for i := range 400 {
				ss = append(ss, sentence(i, id))
			}
			return ss
		}, check: func(t *testing.T, out *Outcome, reduces []llmtest.Recorded) {
			var pe *PartialError
			if err := out.Verdict(); !errors.As(err, &pe) {
				t.Fatalf("Verdict = %v, want a PartialError", err)
			}
			if m := out.Answer.Missing; len(m) != 1 || m[0].Step != "reduce" || !strings.Contains(m[0].Error, "cut off at the output limit") {
				t.Errorf("missing %+v; want the reduce step, cut off at the output limit", m)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := testCorpus(t)
			n := 0
			srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(rec *llmtest.Recorded) llmtest.Reply {
				if rec.SchemaName == reduceSchemaName {
					n++
					return llmtest.Reply{JSON: map[string]any{"sentences": tt.sentences(n, answerOf(rec, "Q3 planning")), "tensions": []any{}}}
				}
				return responder(rec)
			}}}})
			defer srv.Close()
			o := testOptions(t, top, srv.OpenAIBaseURL())
			ctx := context.Background()
			p, err := Prepare(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Execute(ctx, p, o)
			if err != nil {
				t.Fatal(err)
			}
			var reduces []llmtest.Recorded
			for _, r := range srv.Requests() {
				if r.SchemaName == reduceSchemaName {
					reduces = append(reduces, r)
				}
			}
			tt.check(t, out, reduces)
		})
	}
}

package ask

import (
	"context"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm/llmtest"
)

// A question with its debate, against a model that adds a key to every
// object or wraps its JSON in prose and a fenced block (or both), gives a
// whole answer: no part is missing and no answer was asked for twice.
func TestAskUnderSloppyModels(t *testing.T) {
	for _, tc := range []struct {
		name        string
		extra, wrap bool
	}{
		{"an extra key", true, false},
		{"prose and a fence", false, true},
		{"both", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := testCorpus(t)
			srv := llmtest.NewServer(llmtest.Config{ExtraKey: tc.extra, WrapJSON: tc.wrap, Rules: []llmtest.Rule{{Respond: responder}}})
			defer srv.Close()
			o := testOptions(t, top, srv.OpenAIBaseURL())
			o.Debate = true
			p, err := Prepare(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Execute(context.Background(), p, o)
			if err != nil {
				t.Fatal(err)
			}
			if err := out.Verdict(); err != nil || len(out.Answer.Missing) != 0 {
				t.Errorf("verdict %v, missing %+v", err, out.Answer.Missing)
			}
			schemas := map[string]int{}
			for _, rec := range srv.Requests() {
				schemas[rec.SchemaName]++
				if strings.Contains(rec.LastUser(), "does not validate") {
					t.Errorf("%s: asked again although the answer could be mended", rec.SchemaName)
				}
			}
			for _, name := range []string{mapSchemaName, debateSchemaName, reduceSchemaName} {
				if schemas[name] == 0 {
					t.Errorf("no %s call (calls %v): the test does not cover it", name, schemas)
				}
			}
		})
	}
}

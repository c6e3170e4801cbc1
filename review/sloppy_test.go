package review

import (
	"context"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/review/finding"
)

// sloppyConfigs are servers that answer as models without enforced output
// do: every structured answer with a key no schema has in each object,
// wrapped in prose and a fenced block, or both.
var sloppyConfigs = []struct {
	name string
	cfg  llmtest.Config
}{
	{"an extra key", llmtest.Config{ExtraKey: true}},
	{"prose and a fence", llmtest.Config{WrapJSON: true}},
	{"both", llmtest.Config{ExtraKey: true, WrapJSON: true}},
}

// A review, in parallel and as a debate, against a model that adds a key to
// every object or wraps its JSON in prose and a fenced block, is whole: no
// specialist, round or step is missing, and no answer was asked for twice.
func TestReviewUnderSloppyModels(t *testing.T) {
	for _, sc := range sloppyConfigs {
		for _, mode := range []string{Parallel, Debate} {
			t.Run(sc.name+"/"+mode, func(t *testing.T) {
				repo := benchRepo(t, 2, 40)
				srv := llmtest.NewServer(sc.cfg)
				t.Cleanup(srv.Close)
				o := benchOptions(t, repo, srv, "openai:gpt-4.1")
				o.Context.Perspectives = "none"
				o.Context.Specialists = "security,testing,architecture"
				o.Context.InteractionMode = mode
				p, err := Prepare(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				out, err := Execute(context.Background(), p, o)
				if err != nil {
					t.Fatal(err)
				}
				if err := out.Verdict("never"); err != nil || len(out.Result.Missing) != 0 {
					t.Errorf("verdict %v, missing %+v", err, out.Result.Missing)
				}
				schemas := map[string]int{}
				for _, rec := range srv.Requests() {
					schemas[rec.SchemaName]++
					if strings.Contains(rec.LastUser(), "does not validate") {
						t.Errorf("%s: asked again although the answer could be mended", rec.SchemaName)
					}
				}
				if schemas[finding.ReportSchemaName] != 3 || mode == Debate && schemas[finding.RoundSchemaName] == 0 {
					t.Errorf("structured calls %v: the review did not ask what the test covers", schemas)
				}
			})
		}
	}
}

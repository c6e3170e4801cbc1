package review

import (
	"context"
	"testing"

	"github.com/sotlabs/sot/llm/llmtest"
)

// A model that adds a key to every object and wraps its JSON in prose and
// a fenced block still gives a whole review: no specialist or step is
// missing.
func TestReviewUnderSloppyModels(t *testing.T) {
	for _, cfg := range []llmtest.Config{{ExtraKey: true}, {WrapJSON: true}, {ExtraKey: true, WrapJSON: true}} {
		repo := benchRepo(t, 2, 40)
		srv := llmtest.NewServer(cfg)
		t.Cleanup(srv.Close)
		o := benchOptions(t, repo, srv, "openai:gpt-4.1")
		o.Context.Perspectives = "none"
		o.Context.Specialists = "security,testing,architecture"
		p, err := Prepare(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Execute(context.Background(), p, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := out.Verdict("never"); err != nil {
			t.Errorf("extra key %v, wrapped %v: %v (missing %+v)", cfg.ExtraKey, cfg.WrapJSON, err, out.Result.Missing)
		}
	}
}

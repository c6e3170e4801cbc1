package ask

import (
	"context"
	"testing"

	"github.com/sotlabs/sot/llm/llmtest"
)

// A model that adds a key to every object and wraps its JSON in prose and
// a fenced block still gives a whole answer.
func TestAskUnderSloppyModels(t *testing.T) {
	top := testCorpus(t)
	srv := llmtest.NewServer(llmtest.Config{ExtraKey: true, WrapJSON: true, Rules: []llmtest.Rule{{Respond: responder}}})
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
	if err := out.Verdict(); err != nil {
		t.Error(err)
	}
}

package review

import (
	"context"
	"testing"

	"github.com/sotlabs/sot/llm/llmtest"
)

// The run id covers every option that changes the requests, so a re-run
// with another prompt budget or synthesis model is a new run rather than a
// resume that replays answers to different questions.
func TestRunIDCoversWhatChangesRequests(t *testing.T) {
	repo := benchRepo(t, 2, 40)
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	id := func(change func(*Options)) string {
		o := benchOptions(t, repo, srv, "openai:gpt-4.1")
		o.Context.Perspectives = "none"
		o.Context.Specialists = "security"
		change(o)
		p, err := Prepare(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		return p.RunID
	}
	base := id(func(*Options) {})
	if again := id(func(*Options) {}); again != base {
		t.Fatalf("the same review got two ids: %s and %s", base, again)
	}
	for name, change := range map[string]func(*Options){
		"--max-prompt-tokens": func(o *Options) { o.MaxPromptTokens = 20000 },
		"synthesis model":     func(o *Options) { o.Model = "openai:gpt-4.1-mini" },
	} {
		if got := id(change); got == base {
			t.Errorf("%s changes the requests but not the run id %s", name, base)
		}
	}
}

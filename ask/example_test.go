package ask_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sotlabs/sot/ask"
	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/persona"
)

// A library user asks a corpus a question: Prepare classifies it, picks
// the sources and their perspectives without calling a model; Execute
// reads them (map), compares the readings, writes the answer (reduce),
// checks it sentence by sentence and writes ANSWER.md and answer.json;
// Verdict says whether the answer stands on its sources. Here the model is
// llmtest's, whose answers are valid instances of each schema but cite
// nothing, so the check finds no sentence that stands.
func Example() {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	tmp, _ := os.MkdirTemp("", "sot-ask-example")
	defer os.RemoveAll(tmp)
	corpus := filepath.Join(tmp, "notes")
	os.MkdirAll(corpus, 0o755)
	os.WriteFile(filepath.Join(corpus, "2025-07-02-planning.md"), []byte("# Q3 planning\n\nWe decided to delay the billing migration to Q4.\n"), 0o644)
	os.WriteFile(filepath.Join(corpus, "2025-08-20-retro.md"), []byte("# Q3 retro\n\nThe team wants to finish the billing migration before Q4.\n"), 0o644)

	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = srv.OpenAIBaseURL()
	cfg.Providers["openai"] = p
	cfg.DefaultModel = "openai:gpt-4.1"
	cfg.Cache.Disabled = true
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-example-0123456789"
		}
		return ""
	}
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		fmt.Println(err)
		return
	}
	o := &ask.Options{Options: scenario.Options{Dir: tmp, OutputDir: filepath.Join(tmp, "answer"), Config: &cfg, Getenv: getenv, NewStack: func(journal string) (*stack.Stack, error) {
		return stack.New(&cfg, stack.Options{JournalPath: journal, Getenv: getenv})
	}}, Question: "When will the billing migration be done?", Paths: []string{corpus}, Library: lib}
	ctx := context.Background()
	plan, err := ask.Prepare(ctx, o)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("intent:", plan.Classification.Intent, "sources:", len(plan.Chosen), "at most", plan.Calls(), "calls")
	out, err := ask.Execute(ctx, plan, o)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range out.Files {
		fmt.Println("wrote", filepath.Base(f))
	}
	fmt.Println("verdict:", out.Verdict())
	// Output:
	// intent: factual sources: 2 at most 4 calls
	// wrote ANSWER.md
	// wrote answer.json
	// verdict: no sentence of the answer stood on its sources: the check dropped all 1 (ANSWER.md lists them with the reasons)
}

package review_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/persona"
	"github.com/sotlabs/sot/review"
)

// A library user reviews a design note: Prepare decides the plan (who
// reviews, on which model, with what prompts) without calling a model;
// Execute runs it, writes REVIEW-*.md and the formats asked for, and
// Verdict says what the review means for a gate. Here the models are
// llmtest's, which answer every structured request with a valid, empty
// instance of its schema.
func Example() {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	tmp, _ := os.MkdirTemp("", "sot-review-example")
	defer os.RemoveAll(tmp)

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
	o := &review.Options{Options: scenario.Options{Dir: tmp, Config: &cfg, Getenv: getenv, Formats: []string{"json"}, Version: "example", NewStack: func(journal string) (*stack.Stack, error) {
		return stack.New(&cfg, stack.Options{JournalPath: journal, Getenv: getenv})
	}}, Context: review.Context{Type: "freeform", Specialists: "security,architecture", Perspectives: "none",
		Interactive: "false", OutputDir: filepath.Join(tmp, "review")}, Content: "-", In: strings.NewReader("The service stores session tokens in a cookie without the Secure flag.\n"), Library: lib}
	ctx := context.Background()
	plan, err := review.Prepare(ctx, o)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("specialists:", len(plan.Specialists), "calls planned:", len(plan.Tasks))
	out, err := review.Execute(ctx, plan, o)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range out.Files {
		fmt.Println("wrote", filepath.Base(f))
	}
	fmt.Println("verdict:", out.Verdict("must-fix"))
	// Output:
	// specialists: 2 calls planned: 2
	// wrote REVIEW-ARCHITECTURE.md
	// wrote REVIEW-SECURITY.md
	// wrote REVIEW-SYNTHESIS.md
	// wrote review.json
	// verdict: <nil>
}

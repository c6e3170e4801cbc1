package debate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/debate"
	"github.com/sotlabs/sot/engine/scenario"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
	"github.com/sotlabs/sot/persona"
)

// A library user debates a passage: Prepare fixes the plan (debaters,
// observers, the bound on calls) without calling a model; Execute runs the
// main debate, the branch questions, the branch debates, their syntheses
// and merge-backs, and writes the outputs; Verdict says whether the debate
// is whole. Here the model is llmtest's, which answers every structured
// request with a valid instance of its schema.
func Example() {
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	tmp, _ := os.MkdirTemp("", "sot-debate-example")
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
	passage, err := debate.NewPassage("fox.txt", []byte("A hungry Fox saw some fine bunches of Grapes hanging from a vine. "+
		"When she could not reach them, she walked away and said: \"The Grapes are sour, and not ripe as I thought.\"\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	o := &debate.Options{Options: scenario.Options{Dir: tmp, OutputDir: filepath.Join(tmp, "debate"), Config: &cfg, Getenv: getenv, NewStack: func(journal string) (*stack.Stack, error) {
		return stack.New(&cfg, stack.Options{JournalPath: journal, Getenv: getenv})
	}}, Passage: passage, Rounds: 1, BranchRounds: 1, Observers: "none", Library: lib}
	ctx := context.Background()
	plan, err := debate.Prepare(ctx, o)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("debaters:", len(plan.Debaters), "at most", plan.Calls(), "calls")
	out, err := debate.Execute(ctx, plan, o)
	if err != nil {
		fmt.Println(err)
		return
	}
	r := out.Result
	fmt.Println("turns:", len(r.Main.Turns), "branches:", len(r.Branches), "verdict:", out.Verdict())
	var files []string
	for _, f := range out.Files {
		files = append(files, filepath.Base(f))
	}
	sort.Strings(files)
	fmt.Println(files)
	// Output:
	// debaters: 3 at most 19 calls
	// turns: 3 branches: 1 verdict: <nil>
	// [branch-1.md debate.json dialectic-log.md multi-observer-report.md]
}

package review

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/tokens"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/review/synthesis"
)

// A diff larger than the prompt budget is split into chunks of whole files;
// every specialist reviews every chunk, nothing is cut, and every changed
// file ends up reviewed.
func TestReviewSplitsMaterialOverTheBudget(t *testing.T) {
	repo := benchRepo(t, 6, 60)
	srv := llmtest.NewServer(llmtest.Config{RecordLimit: 64})
	defer srv.Close()
	o := benchOptions(t, repo, srv, "openai:gpt-4.1")
	o.Context.Specialists = "security,testing"
	o.Context.Perspectives = "none"
	ctx := context.Background()

	whole, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Chunks) != 1 || len(whole.Tasks) != 2 {
		t.Fatalf("with the model's own budget: %d chunks, %d tasks; want 1 and 2", len(whole.Chunks), len(whole.Tasks))
	}
	longest := 0
	for _, task := range whole.Tasks {
		longest = max(longest, tokens.Count(task.Prompt().System))
	}
	o.MaxPromptTokens = longest - whole.Material.Tokens()/2 // room for about half the material

	p, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Chunks) < 2 {
		t.Fatalf("%d chunk(s) under a budget of %d tokens; want the material split", len(p.Chunks), o.MaxPromptTokens)
	}
	if !slices.ContainsFunc(p.Warnings, func(w string) bool {
		return strings.Contains(w, "split into") && strings.HasSuffix(strings.SplitN(w, "chunks of ", 2)[1], "whole files, and every specialist reviews every chunk")
	}) {
		t.Errorf("no warning says the material was split into whole files: %q", p.Warnings)
	}
	if want := 2 * len(p.Chunks); len(p.Tasks) != want {
		t.Errorf("%d tasks, want %d (each specialist on each chunk)", len(p.Tasks), want)
	}
	var inChunks []string
	for _, ch := range p.Chunks {
		inChunks = append(inChunks, ch.Paths()...)
	}
	slices.Sort(inChunks)
	if want := p.Material.Paths(); !slices.Equal(inChunks, want) {
		t.Errorf("files in the chunks %v, want every file once: %v", inChunks, want)
	}
	// Each prompt copies its chunk: the plan holds none of them, and each
	// is built as its call goes out, its shared prefix named by its chunk.
	prompts := map[string]bool{}
	for _, task := range p.Tasks {
		if task.Request.System != "" || task.Compose == nil || task.Prefix != fmt.Sprintf("chunk %d", p.taskInfo[task.ID].chunk) {
			t.Errorf("%s: the plan holds a prompt of %d bytes (built later: %v), its prefix named %q", task.ID, len(task.Request.System), task.Compose != nil, task.Prefix)
		}
		prompt := task.Compose()
		prompts[prompt] = true
		if n := tokens.Count(prompt); n > o.MaxPromptTokens {
			t.Errorf("%s: a prompt of %d tokens over the budget of %d", task.ID, n, o.MaxPromptTokens)
		}
	}

	out, err := Execute(ctx, p, o)
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, r := range srv.Requests() {
		if prompts[r.System] {
			sent++
		}
	}
	if sent != len(p.Tasks) {
		t.Errorf("%d requests were sent with the specialists' prompts, want %d", sent, len(p.Tasks))
	}
	res := out.Result
	if res.Partial() || res.Chunks != len(p.Chunks) || res.Usage.Calls != len(p.Tasks)+1 {
		t.Errorf("partial %v, chunks %d, calls %d; want a whole review of %d chunks in %d calls", res.Partial(), res.Chunks, res.Usage.Calls, len(p.Chunks), len(p.Tasks)+1)
	}
	reviewed := slices.Sorted(slices.Values(res.Reviewed))
	if want := p.Material.Paths(); !slices.Equal(reviewed, want) {
		t.Errorf("reviewed %v, want %v", reviewed, want)
	}
}

// A budget that cannot hold the personas and rules is a usage error naming
// the option, not a review of nothing.
func TestReviewRejectsABudgetWithNoRoom(t *testing.T) {
	repo := benchRepo(t, 1, 20)
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	o := benchOptions(t, repo, srv, "openai:gpt-4.1")
	o.Context.Specialists = "security"
	o.Context.Perspectives = "none"
	o.MaxPromptTokens = 800
	_, err := Prepare(context.Background(), o)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "--max-prompt-tokens" {
		t.Fatalf("err = %v; want a --max-prompt-tokens field error", err)
	}
	if srv.Count() != 0 {
		t.Errorf("%d model calls for a plan that cannot run", srv.Count())
	}
}

// A single file too large for one prompt is cut into parts, and the warning
// says so rather than claiming whole files.
func TestReviewSaysWhenAFileIsCutIntoParts(t *testing.T) {
	repo := benchRepo(t, 1, 600)
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	o := benchOptions(t, repo, srv, "openai:gpt-4.1")
	o.Context.Specialists = "security"
	o.Context.Perspectives = "none"
	whole, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	o.MaxPromptTokens = tokens.Count(whole.Tasks[0].Prompt().System) - whole.Material.Tokens()/2
	p, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Chunks) < 2 {
		t.Fatalf("%d chunk(s); want the file cut into parts", len(p.Chunks))
	}
	if !slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "cut into parts") }) {
		t.Errorf("the warning does not say a file was cut into parts: %q", p.Warnings)
	}
}

// When every specialist call on one chunk fails, that chunk's files were
// not reviewed: they leave the reviewed list for the skipped one, with the
// reason, and the missing parts name them.
func TestReviewChunkThatFailedIsNotReviewed(t *testing.T) {
	repo := benchRepo(t, 6, 60)
	srv := llmtest.NewServer(llmtest.Config{RecordLimit: 64, Rules: []llmtest.Rule{{System: "This is part 2 of", Fault: llmtest.Fault500}}})
	defer srv.Close()
	o := benchOptions(t, repo, srv, "openai:gpt-4.1")
	o.Config.Retries = 1 // one attempt: the fault is for good
	o.Context.Specialists = "security,testing"
	o.Context.Perspectives = "none"
	ctx := context.Background()
	whole, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	o.MaxPromptTokens = tokens.Count(whole.Tasks[0].Prompt().System) - whole.Material.Tokens()/2
	p, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Chunks) < 2 {
		t.Fatalf("%d chunk(s); want the material split", len(p.Chunks))
	}
	lost := p.Chunks[1].Paths()
	out, err := Execute(ctx, p, o)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result
	for _, f := range lost {
		if slices.Contains(res.Reviewed, f) {
			t.Errorf("%s is listed as reviewed though every call on its chunk failed", f)
		}
		if !slices.ContainsFunc(res.Skipped, func(s synthesis.SkippedFile) bool {
			return s.Path == f && strings.Contains(s.Reason, "every specialist call on chunk 2 failed")
		}) {
			t.Errorf("%s is not listed as skipped with the reason: %+v", f, res.Skipped)
		}
	}
	if len(res.Reviewed)+len(lost) != len(p.Material.Files) {
		t.Errorf("%d reviewed + %d lost, want %d files", len(res.Reviewed), len(lost), len(p.Material.Files))
	}
	if len(res.Missing) != 2 || !slices.Equal(res.Missing[0].Files, lost) {
		t.Errorf("missing %+v, want both specialists on chunk 2 naming %v", res.Missing, lost)
	}
}

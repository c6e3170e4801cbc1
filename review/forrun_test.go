package review

import (
	"context"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm/llmtest"
)

// Executing a plan leaves it as it was: a specialist whose model is
// refused falls back to the default in the run (its outcome, its record)
// while the plan still names the model it was given, so the same plan can
// be executed again, or twice at once by a server.
func TestExecuteLeavesThePlanAsItWas(t *testing.T) {
	repo := benchRepo(t, 1, 20)
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Model: "gpt-retired", Fault: llmtest.Fault401}}})
	t.Cleanup(srv.Close)
	o := benchOptions(t, repo, srv, "openai:gpt-4.1")
	o.Context.Specialists, o.Context.Perspectives = "security,testing", "none"
	o.Context.SpecialistModels = "security:openai:gpt-retired"
	ctx := context.Background()
	plan, err := Prepare(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	var taskModels []string
	for _, task := range plan.Tasks {
		taskModels = append(taskModels, task.Request.Model)
	}
	out, err := Execute(ctx, plan, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Plan.Models["security"]; got != "openai:gpt-4.1" {
		t.Errorf("the run's security model is %q, want the default it fell back to", got)
	}
	if !strings.Contains(strings.Join(out.Result.Notes, "\n"), `model "openai:gpt-retired" for security is unavailable`) {
		t.Errorf("no note of the fallback: %q", out.Result.Notes)
	}
	if got := plan.Models["security"]; got != "openai:gpt-retired" {
		t.Errorf("the plan's security model became %q", got)
	}
	for i, task := range plan.Tasks {
		if task.Request.Model != taskModels[i] {
			t.Errorf("task %s now runs on %s, was %s", task.ID, task.Request.Model, taskModels[i])
		}
	}
	run, err := LoadRun(plan.OutputDir)
	if err != nil {
		t.Fatal(err)
	}
	if got := run.rec.Models["security"]; got != "openai:gpt-4.1" {
		t.Errorf("run.json records %q for security, want the model the run used", got)
	}
}

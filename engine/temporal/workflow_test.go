package temporal

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/sotlabs/sot/llm"
)

// The workflow, in the SDK's test environment: calls are answered by the
// activity, usage adds up, a call past the token budget is refused by the
// validator (and never scheduled), and a workflow nobody calls for the
// idle time ends by itself, with its status.
func TestRunWorkflowBudgetAndIdle(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	calls := 0
	env.RegisterActivityWithOptions(func(ctx context.Context, in CallInput) (CallOutput, error) {
		calls++
		return CallOutput{Response: "sha256:00", Usage: llm.Usage{InputTokens: 60, OutputTokens: 40}}, nil
	}, activityOptions())
	var outcomes []string
	send := func(id string) {
		env.UpdateWorkflow(UpdateCall, id, &testsuite.TestUpdateCallback{
			OnReject: func(err error) { outcomes = append(outcomes, id+" refused: "+err.Error()) },
			OnComplete: func(v any, err error) {
				if out, ok := v.(CallOutput); ok && err == nil && out.Client == "c1" {
					outcomes = append(outcomes, id+" answered")
				} else {
					outcomes = append(outcomes, id+" failed")
				}
			},
		}, CallInput{Request: "sha256:00", Key: id, Model: "openai:gpt-4.1", Client: "c1"})
	}
	env.RegisterDelayedCallback(func() { send("k1") }, time.Second)
	env.RegisterDelayedCallback(func() { send("k2") }, 2*time.Second)
	env.RegisterDelayedCallback(func() { send("k3") }, 3*time.Second)
	env.ExecuteWorkflow(RunWorkflow, RunInput{Run: "review r1", MaxTokens: 150, Idle: time.Minute})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("the idle workflow did not end cleanly: %v", env.GetWorkflowError())
	}
	var st Status
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(outcomes, "; ")
	if !strings.Contains(got, "k1 answered") || !strings.Contains(got, "k2 answered") || !strings.Contains(got, "k3 refused: budget exhausted") {
		t.Errorf("outcomes %q; want two answered, the third refused for the budget", got)
	}
	if calls != 2 || st.Calls != 2 || st.Usage.Total() != 200 || !st.Done {
		t.Errorf("%d activities, status %+v; want 2 calls, 200 tokens, done", calls, st)
	}
}

// A cost budget: calls are priced by the run's table as they end, and a
// call once the budget is spent is refused before it is scheduled.
func TestRunWorkflowCostBudget(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivityWithOptions(func(ctx context.Context, in CallInput) (CallOutput, error) {
		return CallOutput{Response: "sha256:00", Usage: llm.Usage{InputTokens: 1_000_000}}, nil
	}, activityOptions())
	var outcomes []string
	for i, id := range []string{"k1", "k2", "k3"} {
		env.RegisterDelayedCallback(func() {
			env.UpdateWorkflow(UpdateCall, id, &testsuite.TestUpdateCallback{
				OnReject:   func(err error) { outcomes = append(outcomes, id+" refused: "+err.Error()) },
				OnComplete: func(any, error) { outcomes = append(outcomes, id+" answered") },
			}, CallInput{Request: "sha256:00", Key: id, Model: "openai:gpt-4.1", Client: "c1"})
		}, time.Duration(i+1)*time.Second)
	}
	prices := llm.PriceTable{"openai:gpt-4.1": {Input: 2, Output: 8}}
	env.ExecuteWorkflow(RunWorkflow, RunInput{Run: "review cost", MaxCost: 3.5, Prices: prices, Idle: time.Minute})
	var st Status
	if err := env.GetWorkflowResult(&st); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(outcomes, "; ")
	if got != "k1 answered; k2 answered; k3 refused: budget exhausted: $4.0000 of $3.5000" || st.CostUSD != 4 {
		t.Errorf("outcomes %q, cost %v; want two calls at $2 each, the third refused", got, st.CostUSD)
	}
}

package temporal

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/sotlabs/sot/blob"
	"github.com/sotlabs/sot/llm"
	"github.com/stretchr/testify/mock"
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

// The drive workflow, in the SDK's test environment, with the worker's
// command an hour long: a question the command asks is listed to the
// client following the run and answered by its Signal; one nobody answers
// is answered by nobody after the default fifteen minutes, and the run
// goes on to its end.
func TestDriveWorkflowQuestions(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivityWithOptions(func(context.Context, DriveInput) (DriveOutput, error) { return DriveOutput{}, nil },
		activity.RegisterOptions{Name: ActivityDrive})
	env.OnActivity(ActivityDrive, mock.Anything, mock.Anything).After(time.Hour).Return(DriveOutput{Exit: 3, Worker: "w1"}, nil)
	answers := map[string]string{}
	ask := func(id, text string) {
		env.UpdateWorkflow(UpdateAsk, id, &testsuite.TestUpdateCallback{
			OnReject: func(err error) { answers[id] = "refused: " + err.Error() },
			OnComplete: func(v any, err error) {
				if err != nil {
					answers[id] = "error: " + err.Error()
					return
				}
				answers[id] = v.(string)
			},
		}, Question{Text: text, Choices: []string{"left", "right"}})
	}
	var listed []Question
	env.RegisterDelayedCallback(func() { ask("q1", "Which way?") }, time.Minute)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryQuestions)
		if err != nil {
			t.Error(err)
			return
		}
		_ = v.Get(&listed)
		env.SignalWorkflow(SignalAnswer, Answer{ID: 1, Choice: "right"})
	}, 2*time.Minute)
	env.RegisterDelayedCallback(func() { ask("q2", "And now?") }, 3*time.Minute)
	env.ExecuteWorkflow(DriveWorkflow, DriveInput{Command: "review", Dir: ".", Project: "sha256:00", Interactive: true})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("the drive workflow did not end cleanly: %v", env.GetWorkflowError())
	}
	var out DriveOutput
	if err := env.GetWorkflowResult(&out); err != nil || out.Exit != 3 || out.Worker != "w1" {
		t.Fatalf("result %+v, %v; want the command's exit 3 from w1", out, err)
	}
	if len(listed) != 1 || listed[0].Text != "Which way?" || listed[0].ID != 1 {
		t.Errorf("listed %+v; want the one question waiting", listed)
	}
	if answers["q1"] != "right" || !strings.Contains(answers["q2"], unanswered) {
		t.Errorf("answers %q; want q1 answered right and q2 by nobody", answers)
	}
}

// A batch of a driven run's calls, in the SDK's test environment: every
// call is an activity named by the ID it was given, the outcomes come back
// in order, and a call no worker could finish is an outcome that says so.
func TestCallsWorkflow(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	var mu sync.Mutex // the test environment runs activities at once
	var ids []string
	env.RegisterActivityWithOptions(func(ctx context.Context, in CallInput) (CallOutput, error) {
		mu.Lock()
		ids = append(ids, activity.GetInfo(ctx).ActivityID)
		mu.Unlock()
		if in.Key == "k2" {
			return CallOutput{}, sdktemporal.NewNonRetryableApplicationError("the worker is gone", "gone", nil)
		}
		return CallOutput{Response: blob.Ref("sha256:" + in.Key), Usage: llm.Usage{InputTokens: 10}}, nil
	}, activityOptions())
	env.ExecuteWorkflow(CallsWorkflow, CallsInput{
		Calls: []CallInput{{Key: "k1", Model: "openai:gpt-4.1"}, {Key: "k2", Model: "openai:gpt-4.1"}, {Key: "k3", Model: "openai:gpt-4.1"}},
		IDs:   []string{"1 map/a", "2 map/b", "3 map/c"},
	})
	var outs []CallOutput
	if err := env.GetWorkflowResult(&outs); err != nil {
		t.Fatal(err)
	}
	if len(outs) != 3 || outs[0].Response != "sha256:k1" || outs[2].Response != "sha256:k3" {
		t.Fatalf("outcomes %+v; want the answers in the order of the calls", outs)
	}
	if outs[1].Err == nil || outs[1].Err.Kind != "unavailable" || !strings.Contains(outs[1].Err.Message, "no worker could finish the call") {
		t.Errorf("the failed call's outcome: %+v", outs[1].Err)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"1 map/a", "2 map/b", "3 map/c"}) {
		t.Errorf("activities %q; want each named by the ID it was given", ids)
	}
}

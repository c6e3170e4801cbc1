package temporal

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"
)

// Defaults of RunInput.
const (
	DefaultHeartbeat = 30 * time.Second
	DefaultIdle      = time.Hour
)

// budgetRefusal is how the workflow refuses a call past the run's
// budget; the client reads it as llm.ErrBudget. continuingRefusal refuses
// a call while the workflow continues as new; the client sends it again.
const (
	budgetRefusal     = "budget exhausted"
	continuingRefusal = "the run's workflow is continuing as new"
)

// RunWorkflow is the workflow of one sot run. It answers Updates named
// UpdateCall, each one model call run as an activity, until it is
// signalled SignalDone, is cancelled, or has had no call for in.Idle; it
// then waits for the calls under way and returns its Status. Before each
// call is accepted the validator checks the run's budget, so a refused
// call leaves no trace in the history.
func RunWorkflow(ctx workflow.Context, in RunInput) (Status, error) {
	st := Status{Run: in.Run}
	if in.Carried != nil {
		// Continued as new: the run's counts go on.
		st = *in.Carried
		st.InFlight, st.Done = 0, false
	}
	draining := false
	// wake tells the main loop that a call ended, so that it can see
	// whether Temporal suggests continuing as new; it makes no command.
	wake := workflow.NewBufferedChannel(ctx, 1)
	heartbeat, idle := in.Heartbeat, in.Idle
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeat
	}
	if idle <= 0 {
		idle = DefaultIdle
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) { return st, nil }); err != nil {
		return st, err
	}
	actx := workflow.WithActivityOptions(ctx, callOptions(heartbeat, ""))
	call := func(ctx workflow.Context, c CallInput) (CallOutput, error) {
		st.Calls++
		st.InFlight++
		defer func() { st.InFlight-- }()
		var out CallOutput
		if err := workflow.ExecuteActivity(actx, ActivityCall, c).Get(ctx, &out); err != nil {
			st.Failed++
			return CallOutput{Client: c.Client, Err: unfinished(err, c.Model)}, nil
		}
		out.Client = c.Client
		if out.Err != nil {
			st.Failed++
		}
		st.Usage = st.Usage.Add(out.Usage)
		if price, ok := in.Prices.Lookup(c.Model); ok {
			st.CostUSD += price.Cost(out.Usage)
		}
		wake.SendAsync(true)
		return out, nil
	}
	validate := func(ctx workflow.Context, c CallInput) error {
		switch {
		case st.Done:
			return errors.New("the run's workflow has finished")
		case draining:
			return errors.New(continuingRefusal)
		case in.MaxCalls > 0 && st.Calls >= in.MaxCalls:
			return fmt.Errorf("%s: %d calls of %d", budgetRefusal, st.Calls, in.MaxCalls)
		case in.MaxTokens > 0 && st.Usage.Total() >= in.MaxTokens:
			return fmt.Errorf("%s: %d tokens of %d", budgetRefusal, st.Usage.Total(), in.MaxTokens)
		case in.MaxCost > 0 && st.CostUSD >= in.MaxCost:
			return fmt.Errorf("%s: $%.4f of $%.4f", budgetRefusal, st.CostUSD, in.MaxCost)
		}
		return nil
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateCall, call, workflow.UpdateHandlerOptions{Validator: validate,
		Description: "one model call of the run, identified by its journal key"}); err != nil {
		return st, err
	}
	done := workflow.GetSignalChannel(ctx, SignalDone)
	continueAsNew := false
	for !st.Done && !continueAsNew {
		seen := st.Calls
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(done, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			st.Done = true
		})
		timer := workflow.NewTimer(ctx, idle)
		fired := false
		sel.AddFuture(timer, func(workflow.Future) { fired = true })
		sel.AddReceive(wake, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
		// A call that ended wakes the loop only to look at the history's
		// size: it waits on with the same timer, so a run that never
		// grows large makes the commands it always made.
		for !st.Done && !fired && !continueAsNew {
			sel.Select(ctx)
			if err := ctx.Err(); err != nil {
				return st, err
			}
			continueAsNew = workflow.GetInfo(ctx).GetContinueAsNewSuggested()
		}
		if fired && !st.Done && st.Calls == seen && st.InFlight == 0 {
			st.Done = true // idle: the client went away
		}
	}
	if continueAsNew && !st.Done {
		// The history nears Temporal's limit: take no more calls, let
		// those under way end, and go on in a new run of the workflow
		// with the same id and the run's counts. Clients send a refused
		// call again, to the new run.
		draining = true
		if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
			return st, err
		}
		next := in
		carried := st
		next.Carried = &carried
		return st, workflow.NewContinueAsNewError(ctx, WorkflowName, next)
	}
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return st, err
	}
	return st, nil
}

package temporal

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm"
)

// This file runs a scenario's protocol as workflow code. The command a
// worker drives (DriveWorkflow) hosts the workflow of its own run: it
// serves a task queue of that run alone, and the workflow's code is the
// command's run itself, from planning to writing the outputs. Each model
// call is an activity of that workflow (sot.call, on the shared queue, so
// any worker makes it); the budget is the workflow's state, checked by
// the run's meter before each call is scheduled; a question to the user is
// an activity (sot.ask) that asks through the drive workflow.
//
// When the driving worker dies, the drive is given to another worker,
// whose command serves the same queue and replays the workflow from its
// history: every call answered before comes from the history and is not
// made again, and the run goes on from where it stood. This is why the
// protocols are pure (engine/purity_test.go): replayed, a protocol makes
// the same calls in the same order, because it takes no decision from a
// clock, a goroutine's timing or a file it wrote itself.

// Names of the hosted workflow and its question activity.
const (
	ProtocolWorkflowName = "sot.protocol"
	ActivityAsk          = "sot.ask"
)

// ProtocolInput starts the workflow of a hosted run.
type ProtocolInput struct {
	// Drive is the id of the drive workflow the run belongs to.
	Drive string `json:"drive"`
	// Calls is the task queue of the calls' activities.
	Calls string `json:"calls"`
	// Heartbeat is how long a worker may be silent before its call is
	// given to another (default 30s).
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
}

// ProtocolOutput is what a hosted run came to: its exit code and the
// message of its error ("" for none), and which host finished it.
type ProtocolOutput struct {
	Code    int    `json:"code"`
	Message string `json:"message,omitempty"`
	Host    string `json:"host,omitempty"`
}

// HostedError is a hosted run's error as its workflow reported it, when
// another process finished the run.
type HostedError struct{ ProtocolOutput }

func (e *HostedError) Error() string { return e.Message }

// Host runs one command's run as the workflow of that run (see the top
// of this file). It serves a task queue of the run alone; the calls go to
// Calls, which the workers serve.
type Host struct {
	Client client.Client
	Blobs  Store
	// Calls is the task queue the workers take calls from.
	Calls string
	// Drive is the drive workflow's id: the run's workflow is named after
	// it, and questions go to it.
	Drive     string
	Heartbeat time.Duration
	// Code is the exit code of a run's error (0 for nil).
	Code func(error) int
	// Identity names this process in the run's outcome.
	Identity string
	// Prices price the calls in the workflow's status (QueryStatus).
	Prices llm.PriceTable
	// OnStart, when set, is told the id of the run's workflow once it is
	// under way.
	OnStart func(workflowID string)
	// OnReplay, when set, is told when this process takes the run up
	// from its workflow's history, as when another worker's command
	// drove it before.
	OnReplay func(workflowID string)

	mu   sync.Mutex
	base context.Context  // Run's context, its values without its end
	root workflow.Context // the workflow's own coroutine, for Ask
	// done and err: the run finished in this process, with err.
	done bool
	err  error
	// began is when the run's workflow began (see Began).
	began time.Time
	// replayed: this process took the run up from its history.
	replayed bool
	// replaying: the run's code is going over what its history holds, as
	// last seen by the workflow's code (see Replaying).
	replaying atomic.Bool
}

// ProtocolQueue is the task queue the command hosting the run of drive
// serves, which no other process serves unless it drives the same run.
func ProtocolQueue(calls, drive string) string {
	sum := sha256.Sum256([]byte(drive))
	return fmt.Sprintf("%s-run-%x", calls, sum[:8])
}

// ProtocolID is the id of the workflow of the run drive drives.
func ProtocolID(drive string) string { return drive + "-protocol" }

// Run runs body as the workflow of the run, from its start or, when an
// earlier host of the same run died, from where its history stands, and
// returns body's error. Cancelling ctx cancels the workflow: body then
// sees its context done, as under Ctrl-C, and Run returns what it came to.
func (h *Host) Run(ctx context.Context, body func(context.Context) error) error {
	w, err := h.serve(ctx, body)
	if err != nil {
		return err
	}
	defer w.Stop()
	return h.follow(ctx)
}

// serve serves the run's task queue with body as its workflow's code.
func (h *Host) serve(ctx context.Context, body func(context.Context) error) (worker.Worker, error) {
	queue := ProtocolQueue(h.Calls, h.Drive)
	h.mu.Lock()
	h.base = context.WithoutCancel(ctx)
	h.mu.Unlock()
	w := worker.New(h.Client, queue, worker.Options{
		Identity: h.Identity,
		// Planning, reading a corpus and rendering run in workflow code
		// between two calls; none of it is a deadlock.
		DeadlockDetectionTimeout: time.Hour,
		// A panic, or a replay that does not match its history, ends the
		// run with an error instead of retrying it for ever.
		WorkflowPanicPolicy:                worker.FailWorkflow,
		MaxConcurrentActivityExecutionSize: 2,
		DisableRegistrationAliasing:        true,
	})
	w.RegisterWorkflowWithOptions(func(wctx workflow.Context, in ProtocolInput) (ProtocolOutput, error) {
		return h.workflow(wctx, in, body)
	}, workflow.RegisterOptions{Name: ProtocolWorkflowName})
	w.RegisterActivityWithOptions(h.ask, activity.RegisterOptions{Name: ActivityAsk})
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("serve the run's task queue %s: %w", queue, err)
	}
	return w, nil
}

// follow starts the run's workflow, or joins it, and waits for its end.
func (h *Host) follow(ctx context.Context) error {
	run, err := h.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: ProtocolID(h.Drive), TaskQueue: ProtocolQueue(h.Calls, h.Drive),
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		// The longest stretch of the run's own work between two calls.
		WorkflowTaskTimeout: 2 * time.Minute,
	}, ProtocolWorkflowName, ProtocolInput{Drive: h.Drive, Calls: h.Calls, Heartbeat: h.Heartbeat})
	if err != nil {
		return fmt.Errorf("start the run's workflow: %w", err)
	}
	if h.OnStart != nil {
		h.OnStart(run.GetID())
	}
	var out ProtocolOutput
	err = run.Get(ctx, &out)
	if ctx.Err() != nil {
		// Ctrl-C, or the drive cancelled: the run stops as it would here,
		// and its partial result is written before the workflow ends.
		bg := context.WithoutCancel(ctx)
		if cerr := h.Client.CancelWorkflow(bg, run.GetID(), run.GetRunID()); cerr != nil {
			return fmt.Errorf("cancel the run's workflow: %w", cerr)
		}
		err = run.Get(bg, &out)
	}
	h.mu.Lock()
	done, berr := h.done, h.err
	h.mu.Unlock()
	switch {
	case done:
		return berr
	case err != nil:
		return fmt.Errorf("the run's workflow %s: %w", run.GetID(), err)
	case out.Code != 0 || out.Message != "":
		return &HostedError{out}
	}
	return nil
}

// workflow is the run's workflow: body, under a context that schedules
// its calls on the workflow's coroutines and is done once the workflow
// is cancelled.
func (h *Host) workflow(wctx workflow.Context, in ProtocolInput, body func(context.Context) error) (ProtocolOutput, error) {
	h.mu.Lock()
	base := h.base
	h.root = wctx
	h.mu.Unlock()
	native, cancel := context.WithCancel(base)
	defer cancel()
	workflow.Go(wctx, func(c workflow.Context) {
		c.Done().Receive(c, nil)
		if base.Err() == nil {
			// Cancelled from outside (sot runs --cancel): the command
			// stops as under Ctrl-C, saying why.
			engine.Stop(base, fmt.Errorf("the run's workflow %s was cancelled", workflow.GetInfo(c).WorkflowExecution.ID))
		}
		cancel()
	})
	h.mu.Lock()
	h.began = workflow.GetInfo(wctx).WorkflowStartTime
	h.mu.Unlock()
	h.replaying.Store(workflow.IsReplaying(wctx))
	if workflow.IsReplaying(wctx) {
		h.mu.Lock()
		h.replayed = true
		h.mu.Unlock()
		if h.OnReplay != nil {
			h.OnReplay(workflow.GetInfo(wctx).WorkflowExecution.ID)
		}
	}
	sched := &scheduler{}
	calls := &calls{replaying: &h.replaying, blobs: h.Blobs, sent: map[string]int{}, prices: h.Prices, sched: sched,
		id: workflow.GetInfo(wctx).WorkflowExecution.ID, st: Status{Run: workflow.GetInfo(wctx).WorkflowExecution.ID},
		opts: callOptions(in.Heartbeat, in.Calls)}
	if err := workflow.SetQueryHandler(wctx, QueryStatus, func() (Status, error) { return calls.st, nil }); err != nil {
		return ProtocolOutput{}, err
	}
	ctx := llm.WithScheduler(withCalls(withWorkflow(native, wctx), calls), sched)
	err := body(ctx)
	calls.st.Done = true
	out := ProtocolOutput{Host: h.Identity}
	if err != nil {
		out.Message = err.Error()
		out.Code = 1
		if h.Code != nil {
			out.Code = h.Code(err)
		}
	}
	if !workflow.IsReplaying(wctx) {
		h.mu.Lock()
		h.done, h.err = true, err
		h.mu.Unlock()
	}
	return out, nil
}

// Began is when the run's workflow began: what the run's journal
// recorded from then on, its own calls recorded, comes again from the
// workflow's history when the run's code runs again in this process, so
// its stack opens the journal without it (llm/stack.Options.JournalBefore).
func (h *Host) Began() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.began
}

// Replaying reports whether the run's code is going over what its
// workflow's history already holds, as when this process took the run up
// from another's: what it prints then was printed before. It may be
// called from any goroutine; it is exact at the points where the run's
// code takes an answer, which are where its steps begin and end.
func (h *Host) Replaying() bool { return h.replaying.Load() }

// Ask puts a question of the hosted run to its user, through the drive
// workflow, as an activity of the run's workflow: a replayed run does not
// ask again. It must be called from the run's own flow, not from a call
// under way. ErrUnanswered when nobody answered in time.
func (h *Host) Ask(question string, choices []string) (string, error) {
	h.mu.Lock()
	wctx := h.root
	h.mu.Unlock()
	if wctx == nil {
		return "", errors.New("no run's workflow is under way to ask through")
	}
	actx := workflow.WithActivityOptions(wctx, workflow.ActivityOptions{
		TaskQueue:           workflow.GetInfo(wctx).TaskQueueName,
		StartToCloseTimeout: 24 * time.Hour,
		RetryPolicy:         &sdktemporal.RetryPolicy{MaximumAttempts: 3},
	})
	var choice string
	err := workflow.ExecuteActivity(actx, ActivityAsk, Question{Text: question, Choices: choices}).Get(wctx, &choice)
	if err != nil && strings.Contains(err.Error(), unanswered) {
		return "", ErrUnanswered
	}
	return choice, err
}

// ask is the question activity: it asks through the drive workflow.
func (h *Host) ask(ctx context.Context, q Question) (string, error) {
	choice, err := Ask(ctx, h.Client, h.Drive, q.Text, q.Choices)
	if errors.Is(err, ErrUnanswered) {
		return "", sdktemporal.NewNonRetryableApplicationError(unanswered, "unanswered", err)
	}
	return choice, err
}

type workflowKey struct{}

// withWorkflow carries the workflow context of the coroutine that ctx
// belongs to.
func withWorkflow(ctx context.Context, wctx workflow.Context) context.Context {
	return context.WithValue(ctx, workflowKey{}, wctx)
}

func workflowOf(ctx context.Context) (workflow.Context, bool) {
	w, ok := ctx.Value(workflowKey{}).(workflow.Context)
	return w, ok
}

// scheduler is llm.Scheduler on the coroutines of the workflow whose
// context a context carries. It counts the coroutines it started that
// are still running (live) and how many of them wait in Await (waiting),
// which is how the calls of a large step know when all of them are in
// (see calls.flush).
type scheduler struct {
	live, waiting int
}

// stepKey marks the context of a coroutine the scheduler started.
type stepKey struct{}

func (s *scheduler) Go(ctx context.Context, f func(context.Context)) {
	wctx, ok := workflowOf(ctx)
	if !ok {
		panic("temporal: a scheduled call outside its workflow")
	}
	s.live++
	workflow.Go(wctx, func(c workflow.Context) {
		defer func() { s.live-- }()
		f(context.WithValue(withWorkflow(ctx, c), stepKey{}, true))
	})
}

func (s *scheduler) Await(ctx context.Context, cond func() bool) error {
	wctx, ok := workflowOf(ctx)
	if !ok {
		panic("temporal: a scheduled wait outside its workflow")
	}
	if step, _ := ctx.Value(stepKey{}).(bool); step {
		s.waiting++
		defer func() { s.waiting-- }()
	}
	if ctx.Done() == nil {
		// Not even the workflow's cancellation ends this wait.
		dctx, _ := workflow.NewDisconnectedContext(wctx)
		return workflow.Await(dctx, cond)
	}
	// The workflow's cancellation cancels ctx (see Host.workflow); a
	// context done otherwise is looked at whenever a coroutine has run.
	err := workflow.Await(wctx, func() bool { return cond() || ctx.Err() != nil })
	if err == nil && !cond() {
		err = ctx.Err()
	}
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

type callsKey struct{}

func withCalls(ctx context.Context, c *calls) context.Context {
	return context.WithValue(ctx, callsKey{}, c)
}

// Backend is the llm.Provider at the bottom of a hosted run's stack: each
// call it is given is an activity of the run's workflow, made by a worker
// with its own keys, retries and limits. It answers only calls made under
// Host.Run's context.
var Backend llm.Provider = backend{}

type backend struct{}

func (backend) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	c, ok := ctx.Value(callsKey{}).(*calls)
	wctx, inWorkflow := workflowOf(ctx)
	if !ok || !inWorkflow {
		return nil, &llm.Error{Provider: "temporal", Model: req.Model, Kind: llm.ErrConfig,
			Message: "a call of a hosted run was made outside the run's workflow"}
	}
	return c.call(ctx, wctx, req)
}

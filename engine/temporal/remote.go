package temporal

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm"
)

// Remote is the llm.Provider that sends each call to the run's workflow,
// where a worker makes it. A sot process puts it in place of its
// providers, under its own journal, cache, meter and schema check (see
// stack.Options.Backend), so a run on Temporal journals, budgets and
// reports exactly as a local one does.
type Remote struct {
	client client.Client
	blobs  Store
	queue  string
	input  RunInput
	// id tells this process's calls from an earlier process's.
	id string
	// slots bounds the Updates this process keeps open on the workflow.
	slots chan struct{}

	mu         sync.Mutex
	workflowID string
	started    bool
	// recorded and sent number a run's identical calls (see Complete).
	recorded func(key string) int
	sent     map[string]int
	// OnStart, when set, is told the workflow id when the run's workflow
	// is first started or joined.
	OnStart func(workflowID string)
	// Pin, when set, names the runs of this process after it rather than
	// after where and when they began: a command a worker drives (Pin is
	// the driving workflow's id) and another worker runs again in another
	// copy of the project joins the same call workflow.
	Pin string
}

// DefaultMaxInFlight is the Temporal server's default limit of Updates in
// flight on one workflow (history.maxInFlightUpdates).
const DefaultMaxInFlight = 10

// NewRemote sends calls to workflows on queue through c; in carries the
// run's budget. At most maxInFlight calls (0: DefaultMaxInFlight) are open
// on the workflow at once: a server refuses Updates past its limit
// (history.maxInFlightUpdates), and a call it keeps refusing would time
// out, so this must not exceed the server's setting.
func NewRemote(c client.Client, blobs Store, queue string, in RunInput, maxInFlight int) *Remote {
	var b [8]byte
	_, _ = rand.Read(b[:])
	if maxInFlight <= 0 {
		maxInFlight = DefaultMaxInFlight
	}
	return &Remote{client: c, blobs: blobs, queue: queue, input: in, id: hex.EncodeToString(b[:]), slots: make(chan struct{}, maxInFlight)}
}

// WorkflowPrefix starts the id of every workflow sot starts.
const WorkflowPrefix = "sot-"

// Attach names the run the calls belong to: its workflow id is made of
// it, so the same run started again joins the same workflow and is
// answered the calls it had sent. recorded (nil: none) says how many
// answers of a request the run's journal held when this process began.
func (r *Remote) Attach(run string, recorded func(key string) int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Pin != "" {
		// "a review r1a2b 0a1b2c3d": the last word, the hash of the run's
		// directory and start, becomes the hash of the driving workflow.
		if i := strings.LastIndexByte(run, ' '); i > 0 {
			run = run[:i]
		}
		sum := sha256.Sum256([]byte(r.Pin))
		run = fmt.Sprintf("%s %x", run, sum[:4])
	}
	r.input.Run = run
	r.recorded, r.sent = recorded, map[string]int{}
	r.workflowID = WorkflowPrefix + strings.Map(func(c rune) rune {
		if c == ' ' || c == '/' {
			return '-'
		}
		return c
	}, run)
	r.started = false
}

// WorkflowID is the id of the run's workflow ("" before Attach).
func (r *Remote) WorkflowID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.workflowID
}

// start starts the run's workflow, or joins it when it runs already.
func (r *Remote) start(ctx context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.workflowID == "" {
		r.input.Run = "calls " + r.id
		r.workflowID = WorkflowPrefix + "calls-" + r.id
	}
	if r.started {
		return r.workflowID, nil
	}
	_, err := r.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: r.workflowID, TaskQueue: r.queue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, WorkflowName, r.input)
	if err != nil {
		return "", &llm.Error{Provider: "temporal", Kind: llm.ErrUnavailable, Message: "cannot start the run's workflow: " + err.Error(), Err: err}
	}
	r.started = true
	if r.OnStart != nil {
		r.OnStart(r.workflowID)
	}
	return r.workflowID, nil
}

// maxWaits bounds how many times a call refused while the workflow
// continues as new is sent again (every 100 ms).
const maxWaits = 600

// maxAttempts bounds how many times one call is sent under fresh update
// ids after earlier processes' attempts failed.
const maxAttempts = 8

// Complete sends req to the run's workflow and waits for its answer.
// The Update's id is the call's journal key, its occurrence in the run
// (a run may ask the same thing twice, and each gets its own answer, as
// from the journal), and an attempt number: a call an earlier process sent
// (and was stopped before it was answered) is answered once, from that
// first Update, and a call that failed for an earlier process is sent
// afresh.
func (r *Remote) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	// What is left is waiting: for the blob store (S3 is a round trip
	// away), for a slot, then for the answer.
	llm.Yield(ctx)
	ref, err := r.blobs.Put(ctx, data)
	if err != nil {
		return nil, &llm.Error{Provider: "temporal", Model: req.Model, Kind: llm.ErrUnavailable, Message: err.Error(), Err: err}
	}
	if err := llm.Sending(ctx); err != nil {
		return nil, err
	}
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-r.slots }()
	if req.OnStart != nil {
		req.OnStart()
	}
	key := req.Key()
	r.mu.Lock()
	if r.sent == nil {
		r.sent = map[string]int{}
	}
	r.sent[key]++
	occurrence := r.sent[key]
	if r.recorded != nil {
		occurrence += r.recorded(key)
	}
	r.mu.Unlock()
	in := CallInput{Request: ref, Key: key, Occurrence: occurrence, Model: req.Model, Label: req.Label, Client: r.id}
	restarted, waits := false, 0
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		wid, err := r.start(ctx)
		if err != nil {
			return nil, err
		}
		h, err := r.client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: wid, UpdateID: fmt.Sprintf("%s-%d-%d", key, occurrence, attempt),
			UpdateName: UpdateCall, Args: []any{in}, WaitForStage: client.WorkflowUpdateStageCompleted})
		var out CallOutput
		if err == nil {
			err = h.Get(ctx, &out)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) && !restarted {
				status, derr := r.status(ctx, wid)
				if derr == nil && status == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
					// The workflow ended (idle, or finished by an
					// earlier process): start a new one for the rest.
					r.mu.Lock()
					r.started, restarted = false, true
					r.mu.Unlock()
					attempt--
					continue
				}
				if derr == nil {
					return nil, r.ended(ctx, req, fmt.Errorf("the run's workflow %s was %s, so no more calls are made; run the same command again to continue in a new workflow", wid, statusWord(status)))
				}
			}
			if strings.Contains(err.Error(), continuingRefusal) && waits < maxWaits {
				// The workflow is moving to a new run: send it there.
				waits++
				attempt--
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
				continue
			}
			return nil, refused(req, err)
		}
		if out.Err != nil {
			if out.Client != r.id {
				continue // an earlier process's failure: send it afresh
			}
			if out.Err.Kind == kindCancelled {
				return nil, r.ended(ctx, req, fmt.Errorf("the run's workflow %s was cancelled, so no more calls are made; run the same command again to continue in a new workflow", wid))
			}
			return nil, out.Err.err()
		}
		return answer(ctx, r.blobs, req, out.Response)
	}
	return nil, &llm.Error{Provider: "temporal", Model: req.Model, Kind: llm.ErrUnavailable, Message: fmt.Sprintf("the call failed for %d earlier attempts", maxAttempts)}
}

// refused is the llm error of an Update the workflow refused or could not
// take.
func refused(req *llm.Request, err error) error {
	msg := err.Error()
	kind := llm.ErrUnavailable
	if strings.Contains(msg, budgetRefusal) {
		kind = llm.ErrBudget
	}
	return &llm.Error{Provider: "temporal", Model: req.Model, Kind: kind, Message: msg, Err: err}
}

// Finish tells the run's workflow that the run is over, so it ends once
// the calls under way are answered. A run that never called is left alone.
func (r *Remote) Finish(ctx context.Context) error {
	r.mu.Lock()
	wid, started := r.workflowID, r.started
	r.mu.Unlock()
	if !started {
		return nil
	}
	return r.client.SignalWorkflow(ctx, wid, "", SignalDone, nil)
}

// status is the state of workflow wid's latest run.
func (r *Remote) status(ctx context.Context, wid string) (enumspb.WorkflowExecutionStatus, error) {
	d, err := r.client.DescribeWorkflowExecution(ctx, wid, "")
	if err != nil {
		return 0, err
	}
	return d.GetWorkflowExecutionInfo().GetStatus(), nil
}

// statusWord says how a workflow ended, in a sentence.
func statusWord(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "cancelled"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed out"
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return "failed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return "running"
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return "completed"
	}
	return strings.ToLower(strings.TrimPrefix(s.String(), "WorkflowExecutionStatus"))
}

// ended stops the run, as Ctrl-C does, when its workflow was ended from
// outside (sot runs --cancel, temporal workflow cancel): the front end then
// says why and how to resume. The call fails with why.
func (r *Remote) ended(ctx context.Context, req *llm.Request, why error) error {
	engine.Stop(ctx, why)
	return &llm.Error{Provider: "temporal", Model: req.Model, Kind: llm.ErrUnavailable, Message: why.Error(), Err: why}
}

package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/sotlabs/sot/blob"
	"github.com/sotlabs/sot/llm"
)

// This file makes the model calls of a hosted run (see protocol.go). A
// call of a small step is an activity of the run's workflow. The calls of
// a large step (an ask over thousands of sources makes one call for each
// batch of them, all at once) go as child workflows of up to
// ChildBatch calls each: a child holds its calls' events in a history of
// its own, so the run's workflow records a few events for each batch
// instead of several for each call, and a question over 100,000 sources
// stays within the 51,200 events and 2,000 pending activities a workflow
// may have.

// Names of the child workflow that makes a batch of a hosted run's calls.
const CallsWorkflowName = "sot.calls"

// Sizes of the steps whose calls go as child workflows.
const (
	// ChildStep is the fewest calls under way at once in one step that
	// go as child workflows; a smaller step's calls are activities of the
	// run's own workflow, each answered as soon as it ends.
	ChildStep = 64
	// ChildBatch is the most calls one child workflow makes.
	ChildBatch = 256
)

// CallsInput is a batch of calls for a child workflow to make.
type CallsInput struct {
	Calls []CallInput `json:"calls"`
	// IDs name each call's activity: its place in the run and its label.
	IDs       []string      `json:"ids"`
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
}

// CallsWorkflow makes a batch of a hosted run's calls, all at once, each
// an activity (Activities.Call, on the queue the workflow runs on), and
// returns their outcomes in order. A call no worker could finish is an
// outcome too, as in RunWorkflow.
func CallsWorkflow(ctx workflow.Context, in CallsInput) ([]CallOutput, error) {
	opts := callOptions(in.Heartbeat, "")
	futures := make([]workflow.Future, len(in.Calls))
	for i, c := range in.Calls {
		o := opts
		if i < len(in.IDs) {
			o.ActivityID = in.IDs[i]
		}
		futures[i] = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, o), ActivityCall, c)
	}
	outs := make([]CallOutput, len(in.Calls))
	for i, f := range futures {
		if err := f.Get(ctx, &outs[i]); err != nil {
			outs[i] = CallOutput{Err: unfinished(err, in.Calls[i].Model)}
		}
	}
	return outs, nil
}

// unfinished is the outcome of a call whose activity, or whose batch's
// workflow, failed (no worker could finish it, after the retries) or was
// cancelled with the run's workflow.
func unfinished(err error, model string) *CallError {
	var canceled *sdktemporal.CanceledError
	if errors.As(err, &canceled) {
		return &CallError{Kind: kindCancelled, Provider: "temporal", Model: model, Message: "the run's workflow was cancelled"}
	}
	return &CallError{Kind: "unavailable", Provider: "temporal", Model: model, Message: "no worker could finish the call: " + err.Error()}
}

// callOptions are the options of a call's activity: a model call may
// stream for a long time, and the heartbeat, not a deadline, is what
// notices a dead worker.
func callOptions(heartbeat time.Duration, queue string) workflow.ActivityOptions {
	if heartbeat <= 0 {
		heartbeat = DefaultHeartbeat
	}
	return workflow.ActivityOptions{
		TaskQueue:           queue,
		StartToCloseTimeout: 2 * time.Hour,
		HeartbeatTimeout:    heartbeat,
		RetryPolicy: &sdktemporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
			MaximumInterval: 30 * time.Second, MaximumAttempts: 10},
	}
}

// calls makes the calls of one run's workflow.
type calls struct {
	blobs Store
	opts  workflow.ActivityOptions
	// id is the run's workflow's id; children are named after it.
	id    string
	seq   int
	sent  map[string]int
	sched *scheduler
	// queue holds the calls of a large step waiting to go; inFlight
	// counts those gone and not yet answered; batches numbers the
	// children; flushing is set once the coroutine that sends them runs.
	queue    []*queued
	inFlight int
	batches  int
	flushing bool
	// st is the run's status, as a query of the workflow reads it.
	st     Status
	prices llm.PriceTable
	// replaying is set, as each call returns, to whether the run's code
	// is going over its history.
	replaying *atomic.Bool
}

// queued is a call of a large step, waiting to go or to be answered.
type queued struct {
	in   CallInput
	id   string
	out  CallOutput
	err  error
	done bool
}

func (c *calls) call(ctx context.Context, wctx workflow.Context, req *llm.Request) (*llm.Response, error) {
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	ref := blob.RefOf(data)
	if !workflow.IsReplaying(wctx) {
		// A replayed call's activity does not run again: its request is
		// in the store already, or no longer needed.
		if ref, err = c.blobs.Put(ctx, data); err != nil {
			return nil, &llm.Error{Provider: "temporal", Model: req.Model, Kind: llm.ErrUnavailable, Message: err.Error(), Err: err}
		}
	}
	key := req.Key()
	c.sent[key]++
	c.seq++
	if req.OnStart != nil {
		req.OnStart()
	}
	// The call's place in the run and its label name its activity: a
	// replay that schedules another call at the same place is caught, not
	// answered with the first call's answer.
	q := &queued{in: CallInput{Request: ref, Key: key, Occurrence: c.sent[key], Model: req.Model, Label: req.Label},
		id: fmt.Sprintf("%d %s", c.seq, req.Label)}
	c.st.Calls++
	c.st.InFlight++
	if c.sched.live >= ChildStep {
		err = c.batched(wctx, q)
	} else {
		err = c.activity(wctx, q).Get(wctx, &q.out)
	}
	c.replaying.Store(workflow.IsReplaying(wctx))
	c.st.InFlight--
	out := q.out
	if err != nil {
		out = CallOutput{Err: unfinished(err, req.Model)}
	}
	if out.Err != nil {
		c.st.Failed++
		if out.Err.Kind == kindCancelled || ctx.Err() != nil {
			return nil, fmt.Errorf("the run's workflow was cancelled: %w", context.Canceled)
		}
		return nil, out.Err.err()
	}
	c.st.Usage = c.st.Usage.Add(out.Usage)
	if price, ok := c.prices.Lookup(req.Model); ok {
		c.st.CostUSD += price.Cost(out.Usage)
	}
	return answer(ctx, c.blobs, req, out.Response)
}

// activity schedules q's call as an activity of the run's workflow, named
// by its place and label.
func (c *calls) activity(ctx workflow.Context, q *queued) workflow.Future {
	opts := c.opts
	opts.ActivityID = q.id
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), ActivityCall, q.in)
}

// batched queues q with the other calls of its step and waits for its
// answer. The queue goes once every call of the step still under way is
// in it, or answered, or waiting on the scheduler (for room in the
// budget): a decision the run's code makes the same way when replayed.
func (c *calls) batched(wctx workflow.Context, q *queued) error {
	c.queue = append(c.queue, q)
	if !c.flushing {
		c.flushing = true
		workflow.Go(wctx, c.flush)
	}
	if err := workflow.Await(wctx, func() bool { return q.done }); err != nil {
		return err
	}
	return q.err
}

// flush sends the queued calls whenever the step has nothing else to do:
// as child workflows of up to ChildBatch calls when there are ChildStep
// or more, as activities of the run's workflow otherwise (the calls a
// large step asks again, say).
func (c *calls) flush(ctx workflow.Context) {
	for {
		ready := func() bool {
			return len(c.queue) > 0 && len(c.queue)+c.inFlight+c.sched.waiting >= c.sched.live
		}
		if err := workflow.Await(ctx, ready); err != nil {
			for _, q := range c.queue {
				q.err, q.done = err, true
			}
			c.queue = nil
			return
		}
		batch := c.queue
		c.queue = nil
		c.inFlight += len(batch)
		if len(batch) < ChildStep {
			for _, q := range batch {
				f := c.activity(ctx, q)
				workflow.Go(ctx, func(gc workflow.Context) {
					q.err = f.Get(gc, &q.out)
					q.done = true
					c.inFlight--
				})
			}
			continue
		}
		for len(batch) > 0 {
			n := min(len(batch), ChildBatch)
			part := batch[:n:n]
			batch = batch[n:]
			in := CallsInput{Heartbeat: c.opts.HeartbeatTimeout}
			for _, q := range part {
				in.Calls = append(in.Calls, q.in)
				in.IDs = append(in.IDs, q.id)
			}
			c.batches++
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
				WorkflowID: fmt.Sprintf("%s-calls-%d", c.id, c.batches),
				TaskQueue:  c.opts.TaskQueue,
			})
			f := workflow.ExecuteChildWorkflow(cctx, CallsWorkflowName, in)
			workflow.Go(ctx, func(gc workflow.Context) {
				var outs []CallOutput
				err := f.Get(gc, &outs)
				for i, q := range part {
					switch {
					case err != nil:
						q.err = err
					case i < len(outs):
						q.out = outs[i]
					default:
						q.err = errors.New("the batch's workflow answered fewer calls than it was given")
					}
					q.done = true
				}
				c.inFlight -= len(part)
			})
		}
	}
}

// answer reads the answer to req that a worker kept in the blob store at
// ref, and hands its text to req's OnDelta as one piece.
func answer(ctx context.Context, blobs Store, req *llm.Request, ref blob.Ref) (*llm.Response, error) {
	body, err := blobs.Get(ctx, ref)
	if err != nil {
		return nil, &llm.Error{Provider: "temporal", Model: req.Model, Kind: llm.ErrUnavailable, Message: "the answer is not in the blob store the client shares with the workers: " + err.Error(), Err: err}
	}
	var resp llm.Response
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, &llm.Error{Provider: "temporal", Model: req.Model, Kind: llm.ErrBadResponse, Message: err.Error(), Err: err}
	}
	if req.OnDelta != nil {
		req.OnDelta(resp.Text)
	}
	return &resp, nil
}

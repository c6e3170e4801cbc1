package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/sotlabs/sot/blob"
	"github.com/sotlabs/sot/llm"
)

// Activities are what a worker runs: model calls through its own
// provider stack, where its keys are.
type Activities struct {
	// Provider answers the calls: the worker's stack (its providers, keys,
	// retries and limits).
	Provider llm.Provider
	// Blobs holds the requests and answers, shared with the clients.
	Blobs Store
	// Identity names the worker in the outcomes of its calls.
	Identity string
}

// Store is the blob store as the activities and the client use it: bytes by
// reference, and the answers kept by call key.
type Store interface {
	blob.Store
	Keep(ctx context.Context, name string, data []byte) error
	Kept(ctx context.Context, name string) ([]byte, error)
}

// keptName is the name the answer to a request is kept under: the run's
// workflow (answers are kept for the retries of one run, not as a cache
// across runs, which the starting command's own cache is, or is not with
// --no-cache), the hash of the request as sent (an answer is only ever
// given to the request it answers), and which of the run's identical
// calls it answers.
func keptName(workflowID string, request blob.Ref, occurrence int) string {
	run := sha256.Sum256([]byte(workflowID))
	return fmt.Sprintf("answer-%x-%s-%d", run[:8], strings.TrimPrefix(string(request), "sha256:"), occurrence)
}

// Call runs one model call. An answer kept by an earlier attempt (its
// worker died before it could report it) is returned as it is, and costs
// nothing again. The activity heartbeats while the model answers, so a
// worker that dies is noticed within the heartbeat timeout and the call
// given to another. A call the model's provider refused or failed (after
// the worker's own retries) is an outcome, not an error: Temporal does not
// run it again.
func (a *Activities) Call(ctx context.Context, in CallInput) (CallOutput, error) {
	worker := a.Identity
	kept, err := a.Blobs.Kept(ctx, keptName(activity.GetInfo(ctx).WorkflowExecution.ID, in.Request, in.Occurrence))
	if err == nil {
		ref, err := a.Blobs.Put(ctx, kept)
		if err != nil {
			return CallOutput{}, err
		}
		var resp llm.Response
		if err := json.Unmarshal(kept, &resp); err != nil {
			return CallOutput{}, fmt.Errorf("a kept answer does not read: %w", err)
		}
		return CallOutput{Response: ref, Usage: resp.Usage, Worker: worker, Reused: true}, nil
	}
	if !errors.Is(err, blob.ErrNotFound) {
		return CallOutput{}, err
	}
	data, err := a.Blobs.Get(ctx, in.Request)
	if errors.Is(err, blob.ErrNotFound) {
		return CallOutput{}, sdktemporal.NewNonRetryableApplicationError(
			"the request is not in this worker's blob store: every worker and client of a task queue must share executor.blobs ("+err.Error()+")", "no_blob", err)
	}
	if err != nil {
		return CallOutput{}, err
	}
	var req llm.Request
	if err := json.Unmarshal(data, &req); err != nil {
		return CallOutput{}, sdktemporal.NewNonRetryableApplicationError("the request does not read: "+err.Error(), "bad_request", err)
	}
	var streamed atomic.Int64
	req.OnDelta = func(s string) {
		activity.RecordHeartbeat(ctx, streamed.Add(int64(len(s))))
	}
	// A model that has not begun to answer still has a live worker.
	beat, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		every := activity.GetInfo(ctx).HeartbeatTimeout / 3
		if every <= 0 {
			every = 10 * time.Second
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-beat.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, streamed.Load())
			}
		}
	}()
	resp, err := a.Provider.Complete(ctx, &req)
	stop()
	if err != nil {
		if ctx.Err() != nil {
			return CallOutput{}, ctx.Err()
		}
		return CallOutput{Err: callError(err), Worker: worker}, nil
	}
	out, err := json.Marshal(resp)
	if err != nil {
		return CallOutput{}, err
	}
	ref, err := a.Blobs.Put(ctx, out)
	if err != nil {
		return CallOutput{}, err
	}
	if err := a.Blobs.Keep(ctx, keptName(activity.GetInfo(ctx).WorkflowExecution.ID, in.Request, in.Occurrence), out); err != nil {
		return CallOutput{}, err
	}
	return CallOutput{Response: ref, Usage: resp.Usage, Worker: worker}, nil
}

// Package temporal runs sot on Temporal, the durable workflow engine:
// every run of a scenario has a workflow that holds its budget, and each
// model call is an activity of it, run by whichever `sot worker` takes it
// from the task queue, on any machine.
//
// A driven run (the default) is a workflow of its own:
//   - DriveWorkflow gives the run to one worker, whose Driver copies the
//     project and runs the same sot command there.
//   - That command's run is the code of the run's workflow (Host,
//     sot.protocol): its calls are activities, a large step's calls child
//     workflows (CallsWorkflow), its questions activities, and a command
//     that takes over a dead worker's run replays it from the history.
//
// A run whose protocol stays in the starting command (executor.drive:
// client) sends only its calls:
//   - RunWorkflow, the workflow of one sot run. A call is an Update of it,
//     identified by the call's journal key, so a call sent twice (a client
//     that was stopped and started again) is answered once. The workflow
//     checks the run's budget before it schedules a call.
//   - Activities.Call runs one call through the worker's provider stack,
//     heartbeating while the model answers; its answer is kept in the blob
//     store under the request's hash, so an activity retried after its worker
//     died, with the call already answered, pays nothing again.
//   - Remote is the llm.Provider a sot process puts at the bottom of its
//     stack: its journal, cache, meter and schema check stay where they
//     are, and only the provider call itself crosses to a worker.
//
// Requests and answers travel through a blob.Store by reference, because a
// Temporal payload is at most 2 MB and a review's material may be more.
package temporal

import (
	"errors"
	"time"

	"github.com/sotlabs/sot/blob"
	"github.com/sotlabs/sot/llm"
)

// Names Temporal knows sot's workflow, update, signal, query and activity by.
const (
	WorkflowName = "sot.run"
	UpdateCall   = "call"
	SignalDone   = "done"
	QueryStatus  = "status"
	ActivityCall = "sot.call"
)

// RunInput starts the workflow of one run.
type RunInput struct {
	// Run names the run: its scenario and id ("review 1a2b3c...").
	Run string `json:"run"`
	// MaxCalls and MaxTokens are the run's budget, checked before each
	// call is scheduled; 0 is no limit.
	MaxCalls  int `json:"max_calls,omitempty"`
	MaxTokens int `json:"max_tokens,omitempty"`
	// MaxCost is the run's budget in US dollars, its calls priced by
	// Prices (the starting command's table); 0 is no limit.
	MaxCost float64        `json:"max_cost,omitempty"`
	Prices  llm.PriceTable `json:"prices,omitempty"`
	// Heartbeat is how long a worker may be silent before its call is
	// given to another (default 30s).
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
	// Idle ends the workflow after this long without a call (default 1h):
	// a client that went away and never came back does not leave it open.
	Idle time.Duration `json:"idle,omitempty"`
	// Carried is the status a workflow continued as new goes on from.
	Carried *Status `json:"carried,omitempty"`
}

// CallInput is one model call, as the Update carries it.
type CallInput struct {
	// Request is the llm.Request, as JSON in the blob store.
	Request blob.Ref `json:"request"`
	// Key is the request's journal key (llm.Request.Key), and Occurrence
	// which of the run's calls of that key this is (from 1).
	Key        string `json:"key"`
	Occurrence int    `json:"occurrence,omitempty"`
	Model      string `json:"model"`
	Label      string `json:"label,omitempty"`
	// Client identifies the sot process that sent the call, so that it
	// can tell a failure of its own from one an earlier process met.
	Client string `json:"client"`
}

// CallOutput is the outcome of one call.
type CallOutput struct {
	// Response is the llm.Response, as JSON in the blob store; empty when
	// the call failed.
	Response blob.Ref   `json:"response,omitempty"`
	Usage    llm.Usage  `json:"usage"`
	Err      *CallError `json:"error,omitempty"`
	// Client is the sot process whose Update made the call.
	Client string `json:"client"`
	// Worker is the identity of the worker that answered; Reused is set
	// when the answer was one a worker had kept from an earlier attempt.
	Worker string `json:"worker,omitempty"`
	Reused bool   `json:"reused,omitempty"`
}

// CallError is an llm error, carried across the queue.
type CallError struct {
	Kind     string `json:"kind"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	Message  string `json:"message"`
}

// Status is what the workflow tells a query.
type Status struct {
	Run      string    `json:"run"`
	Calls    int       `json:"calls"` // scheduled so far
	InFlight int       `json:"in_flight"`
	Failed   int       `json:"failed"`
	Usage    llm.Usage `json:"usage"`
	// CostUSD prices Usage by RunInput.Prices.
	CostUSD float64 `json:"cost_usd"`
	Done    bool    `json:"done"`
}

// kinds are the llm error kinds and the names they cross the queue by,
// in the order an error is matched against them.
var kinds = []struct {
	name string
	err  error
}{
	{"missing_key", llm.ErrMissingKey}, {"auth", llm.ErrAuth}, {"rate_limited", llm.ErrRateLimited},
	{"unavailable", llm.ErrUnavailable}, {"timeout", llm.ErrTimeout}, {"bad_request", llm.ErrBadRequest},
	{"unknown_model", llm.ErrUnknownModel}, {"budget", llm.ErrBudget}, {"config", llm.ErrConfig},
	{"bad_response", llm.ErrBadResponse}, {"schema", llm.ErrSchema}, {"unknown_provider", llm.ErrUnknownProvider},
}

// kindCancelled is the kind of a call the workflow's cancellation stopped.
const kindCancelled = "cancelled"

// callError carries err across the queue.
func callError(err error) *CallError {
	ce := &CallError{Kind: "unavailable", Message: llm.Redact(err.Error())}
	var le *llm.Error
	if errors.As(err, &le) {
		ce.Provider, ce.Model, ce.Message = le.Provider, le.Model, llm.Redact(le.Message)
	}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			ce.Kind = k.name
			break
		}
	}
	return ce
}

// err is the llm error ce carries, of the same kind.
func (ce *CallError) err() error {
	kind := llm.ErrUnavailable
	for _, k := range kinds {
		if k.name == ce.Kind {
			kind = k.err
		}
	}
	return &llm.Error{Provider: ce.Provider, Model: ce.Model, Kind: kind, Message: ce.Message}
}

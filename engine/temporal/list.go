package temporal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// Workflow is one run's workflow, as `sot runs --temporal` lists it.
type Workflow struct {
	ID      string    `json:"workflow_id"`
	Status  string    `json:"status"` // running, completed, cancelled, ...
	Started time.Time `json:"started"`
	// Calls, InFlight, Failed and Usage come from the workflow's status
	// query, when a worker answers it (Queried).
	Queried bool   `json:"queried"`
	Run     Status `json:"run"`
	// Drives is set for the workflow that drives a whole run on a worker
	// (DriveWorkflow); the others hold a run's calls (RunWorkflow).
	Drives bool `json:"drives,omitempty"`
}

// List returns sot's workflows in the namespace c is connected to, newest
// first: those still running, and with all also those that ended.
func List(ctx context.Context, c client.Client, all bool) ([]Workflow, error) {
	q := fmt.Sprintf("(WorkflowType = '%s' OR WorkflowType = '%s')", WorkflowName, DriveWorkflowName)
	if !all {
		q += " AND ExecutionStatus = 'Running'"
	}
	var out []Workflow
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list sot's workflows: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			w := Workflow{ID: e.GetExecution().GetWorkflowId(), Status: statusWord(e.GetStatus()), Started: e.GetStartTime().AsTime(),
				Drives: e.GetType().GetName() == DriveWorkflowName}
			if w.Status == "running" {
				qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
				id := w.ID
				if w.Drives {
					id = ProtocolID(w.ID) // the run's own workflow knows its calls
				}
				if v, err := c.QueryWorkflow(qctx, id, "", QueryStatus); err == nil && v.Get(&w.Run) == nil {
					w.Queried = true
				}
				cancel()
			}
			out = append(out, w)
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}

// Cancel cancels the workflow id, which must be one of sot's: its calls
// under way are cancelled, and the command that started it stops as
// Ctrl-C stops it (engine.Stop).
func Cancel(ctx context.Context, c client.Client, id string) error {
	if !strings.HasPrefix(id, WorkflowPrefix) {
		return fmt.Errorf("%q is not the id of a sot workflow (they begin with %q; sot runs --temporal lists them)", id, WorkflowPrefix)
	}
	if err := c.CancelWorkflow(ctx, id, ""); err != nil {
		return fmt.Errorf("cancel %s: %w", id, err)
	}
	return nil
}

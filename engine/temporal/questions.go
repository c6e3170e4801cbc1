package temporal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// Names of the questions a driven run asks its user.
const (
	// UpdateAsk is the Update by which the command a worker drives asks
	// its user a question (a trade-off to decide); it returns the answer.
	UpdateAsk = "ask"
	// SignalAnswer answers a question; QueryQuestions lists those waiting.
	SignalAnswer   = "answer"
	QueryQuestions = "questions"
	// EnvDriveAsk, in a driven command's environment, says that its user
	// follows the run on a terminal and may be asked.
	EnvDriveAsk = "SOT_DRIVE_ASK"
	// DefaultAskTimeout is how long a question waits for its answer.
	DefaultAskTimeout = 15 * time.Minute
)

// Question is one question a driven run asks its user.
type Question struct {
	ID      int      `json:"id"`
	Text    string   `json:"text"`
	Choices []string `json:"choices,omitempty"`
}

// Answer answers the question ID.
type Answer struct {
	ID     int    `json:"id"`
	Choice string `json:"choice"`
}

// unanswered is how the workflow says that nobody answered in time.
const unanswered = "nobody answered in time"

// ErrUnanswered is what Ask returns for a question nobody answered in time.
var ErrUnanswered = errors.New(unanswered)

// questions holds a driven run's questions: asked by Update, answered by
// Signal, listed by Query. A question that waits longer than timeout is
// answered by nobody, and the run goes on as if nobody could be asked.
func questions(ctx workflow.Context, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultAskTimeout
	}
	var waiting []Question
	answers := map[int]string{}
	next := 1
	if err := workflow.SetQueryHandler(ctx, QueryQuestions, func() ([]Question, error) { return waiting, nil }); err != nil {
		return err
	}
	ch := workflow.GetSignalChannel(ctx, SignalAnswer)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var a Answer
			if !ch.Receive(ctx, &a) {
				return
			}
			for _, q := range waiting {
				if q.ID == a.ID {
					answers[a.ID] = a.Choice
				}
			}
		}
	})
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateAsk, func(ctx workflow.Context, q Question) (string, error) {
		q.ID = next
		next++
		waiting = append(waiting, q)
		defer func() {
			for i, w := range waiting {
				if w.ID == q.ID {
					waiting = append(waiting[:i], waiting[i+1:]...)
					break
				}
			}
		}()
		ok, err := workflow.AwaitWithTimeout(ctx, timeout, func() bool { _, done := answers[q.ID]; return done })
		if err != nil {
			return "", err
		}
		if !ok {
			return "", errors.New(unanswered)
		}
		return answers[q.ID], nil
	}, workflow.UpdateHandlerOptions{Description: "a question of the driven command to its user; returns the answer"})
}

// Ask asks the user following the run that workflowID drives, and waits
// for the answer; ErrUnanswered when nobody answered in time.
func Ask(ctx context.Context, c client.Client, workflowID, text string, choices []string) (string, error) {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: workflowID, UpdateName: UpdateAsk,
		Args: []any{Question{Text: text, Choices: choices}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		return "", fmt.Errorf("ask the user through workflow %s: %w", workflowID, err)
	}
	var choice string
	if err := h.Get(ctx, &choice); err != nil {
		// An error that crossed Temporal keeps its message, not its identity.
		if strings.Contains(err.Error(), unanswered) {
			return "", ErrUnanswered
		}
		return "", fmt.Errorf("ask the user through workflow %s: %w", workflowID, err)
	}
	return choice, nil
}

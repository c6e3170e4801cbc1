package cmdutil

import (
	"context"
	"errors"
	"time"

	"github.com/sotlabs/sot/engine/temporal"
	"github.com/sotlabs/sot/persona"
	"go.temporal.io/sdk/client"
)

// Driven says whether this process is the command a worker drives.
func (f *Factory) Driven() bool { return f.Getenv(temporal.EnvDriveWorkflow) != "" }

// DriveAsker is how the command a worker drives asks its user, who
// follows the run on a terminal elsewhere: through the driving workflow
// (temporal.Ask). It is nil when there is nobody to ask.
func (f *Factory) DriveAsker() persona.Asker {
	wid := f.Getenv(temporal.EnvDriveWorkflow)
	if wid == "" || f.Getenv(temporal.EnvDriveAsk) == "" {
		return nil
	}
	return func(question string, choices []string) (string, error) {
		if f.host != nil {
			// Asked from the run's workflow: an activity of it.
			choice, err := f.host.Ask(question, choices)
			if errors.Is(err, temporal.ErrUnanswered) {
				return "", persona.ErrUnanswered
			}
			return choice, err
		}
		cfg, _, err := f.Config()
		if err != nil {
			return "", err
		}
		c, _, err := f.connect(cfg)
		if err != nil {
			return "", err
		}
		choice, err := temporal.Ask(context.Background(), c, wid, question, choices)
		if errors.Is(err, temporal.ErrUnanswered) {
			return "", persona.ErrUnanswered
		}
		return choice, err
	}
}

// questioner asks the user on this terminal the questions the
// driven run waits on, one at a time, and sends each answer back.
type questioner struct {
	asked  map[int]bool
	busy   chan struct{}
	asker  persona.Asker
	client client.Client
	id     string
}

func (q *questioner) poll(ctx context.Context, f *Factory) {
	select {
	case q.busy <- struct{}{}:
	default:
		return // a question is on the screen
	}
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	v, err := q.client.QueryWorkflow(qctx, q.id, "", temporal.QueryQuestions)
	cancel()
	var waiting []temporal.Question
	if err != nil || v.Get(&waiting) != nil {
		<-q.busy
		return
	}
	for _, w := range waiting {
		if q.asked[w.ID] {
			continue
		}
		q.asked[w.ID] = true
		go func() {
			defer func() { <-q.busy }()
			choice, err := q.asker(w.Text, w.Choices)
			if err != nil {
				return // unanswered: the run decides without the user when the question times out
			}
			if err := q.client.SignalWorkflow(ctx, q.id, "", temporal.SignalAnswer, temporal.Answer{ID: w.ID, Choice: choice}); err != nil {
				f.Note("the answer could not be sent: " + err.Error())
			}
		}()
		return
	}
	<-q.busy
}

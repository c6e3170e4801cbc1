package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sotlabs/sot/llm"
)

// Looks lets a task's model look before it answers: the request offers
// Tools, and every round in which the model asks for some is answered by
// Run and sent back, until the model answers. Each round is a call of its
// own through the provider stack, so each is limited, metered, budgeted
// and journaled like any call: a resumed run replays the rounds it had
// finished (their tool results are computed again, and a project that did
// not change gives the same ones, so the same keys) and pays for none of
// them twice.
type Looks struct {
	// Tools are offered to the model in every round.
	Tools []llm.Tool
	// Run answers one tool call with the text sent back to the model. A
	// call that cannot be served (bad arguments, a path outside the
	// project, a secret file) is answered with text saying why, not an
	// error; an error stops the task.
	Run func(ctx context.Context, call llm.ToolCall) (string, error)
	// MaxRounds is how many rounds of tool calls are answered; 0 means 4.
	// A call asked for after that is answered with a note that the looks
	// are spent, and the model gets one more round to answer.
	MaxRounds int
	// MaxResultTokens bounds the tool results of the task, estimated at
	// four bytes a token; 0 means 16,000. A call past it is answered with
	// the same note.
	MaxResultTokens int
	// Without, when set, is asked for the request to send instead when
	// the endpoint refuses the tools (it answers the first round with
	// llm.ErrBadRequest, as a model without tool calling does): the same
	// task composed for a model that cannot look. It is given the
	// refusal, so the caller can say the task went without. Nil: the
	// refusal is the task's error.
	Without func(refusal error) (*llm.Request, error)
}

// Default limits of Looks.
const (
	DefaultLookRounds = 4
	DefaultLookTokens = 16000
)

// ErrLookedTooLong means a model went on asking for tools after its looks
// were spent and it had been told to answer.
var ErrLookedTooLong = errors.New("the model kept asking for tools after its looks were spent")

// spentNote answers a tool call past the task's limits.
const spentNote = "Not run: your looks for this review are spent. Answer now with what you have seen; for anything you could not check, say what you would need and lower your confidence."

// Converse sends req through p, answering the tool calls of each round
// with l, and returns the model's final answer. Its Usage, Calls and
// Latency add up every round's, and Rounds says where each earlier round's
// answer came from; an error is the first round's that failed, or
// ErrLookedTooLong. A nil l sends req once, as it is.
func Converse(ctx context.Context, p llm.Provider, req *llm.Request, l *Looks) (*llm.Response, error) {
	if l == nil || len(l.Tools) == 0 {
		return p.Complete(ctx, req)
	}
	rounds, budget := l.MaxRounds, l.MaxResultTokens
	if rounds <= 0 {
		rounds = DefaultLookRounds
	}
	if budget <= 0 {
		budget = DefaultLookTokens
	}
	msgs := append([]llm.Message(nil), req.Messages...)
	var (
		usage       llm.Usage
		calls       int
		latency     time.Duration
		sources     []llm.Source
		resultBytes int
		answered    int // rounds whose tool calls were run
		refused     bool
	)
	for {
		r := req.Clone()
		r.Messages = msgs
		r.Tools = l.Tools
		resp, err := p.Complete(ctx, r)
		if err != nil && len(sources) == 0 && l.Without != nil && errors.Is(err, llm.ErrBadRequest) {
			alt, aerr := l.Without(err)
			if aerr != nil {
				return nil, errors.Join(err, aerr)
			}
			return p.Complete(ctx, alt)
		}
		if err != nil {
			return nil, err
		}
		usage = usage.Add(resp.Usage)
		calls += max(resp.Calls, 1)
		latency += resp.Latency
		if len(resp.ToolCalls) == 0 {
			out := *resp
			out.Usage, out.Calls, out.Rounds, out.Latency = usage, calls, sources, latency
			return &out, nil
		}
		sources = append(sources, resp.Source)
		if refused {
			return nil, fmt.Errorf("%w (%d rounds)", ErrLookedTooLong, answered)
		}
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
		spent := answered >= rounds
		for _, c := range resp.ToolCalls {
			text := spentNote
			if !spent && resultBytes/4 < budget {
				if text, err = l.Run(ctx, c); err != nil {
					return nil, fmt.Errorf("tool %s: %w", c.Name, err)
				}
				resultBytes += len(text)
			} else {
				refused = true
			}
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: text})
		}
		if !spent {
			answered++
		}
	}
}

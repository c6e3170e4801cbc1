package review

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/prompt"
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/tools"
)

// This file gives specialists their looks: read-only tools over the
// project (package tools) offered through their models' tool calling, and
// the record of which files each specialist's tools showed it, by which a
// finding that cites a file outside the material is grounded.

// toolSpecs are the tools offered to a specialist, as models are told of
// them.
var toolSpecs = func() []llm.Tool {
	var out []llm.Tool
	for _, s := range tools.Specs() {
		params, err := json.Marshal(s.Parameters)
		if err != nil {
			panic("review: a tool's parameters do not encode: " + err.Error())
		}
		out = append(out, llm.Tool{Name: s.Name, Description: s.Description, Parameters: params})
	}
	return out
}()

// canCallTools reports whether a model can be offered tools: its
// provider is resolved to the backend type the configuration gives it (a
// provider named "openai" may be configured to run a program).
func canCallTools(cfg *config.Config, model string) bool {
	ref, err := llm.ParseModel(model)
	if err != nil {
		return false
	}
	return llm.SupportsTools(cfg.ProviderType(ref.Provider) + ":" + ref.Name)
}

// looker answers one run's tool calls and remembers, for each task, the
// files its tools showed.
type looker struct {
	tools  *tools.Tools
	nonce  string
	rounds int
	tokens int

	mu      sync.Mutex
	shown   map[string]map[string]bool // task id -> project files shown
	refused map[string]refusal         // task id -> the endpoint refused its tools
}

// refusal records a task whose endpoint refused the tools it was offered,
// and the request it was sent instead.
type refusal struct {
	err    error
	single *llm.Request
}

// looks returns the Looks of one task; nil for a nil looker. single
// composes the task's request for a model that cannot look, sent instead
// when the endpoint refuses the tools (a model without tool calling); nil
// leaves the refusal the task's error.
func (l *looker) looks(taskID string, single func() (*llm.Request, error)) *engine.Looks {
	if l == nil {
		return nil
	}
	var without func(error) (*llm.Request, error)
	if single != nil {
		without = func(refused error) (*llm.Request, error) {
			req, err := single()
			if err != nil {
				return nil, err
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			l.refused[taskID] = refusal{err: refused, single: req}
			return req, nil
		}
	}
	return &engine.Looks{Tools: toolSpecs, MaxRounds: l.rounds, MaxResultTokens: l.tokens, Without: without,
		Run: func(ctx context.Context, c llm.ToolCall) (string, error) {
			res, err := l.tools.Call(ctx, c.Name, c.Arguments)
			if err != nil {
				if ctx.Err() != nil {
					return "", err
				}
				// The model reads why, and may call again.
				return prompt.Fence("The look failed: "+err.Error(), l.nonce), nil
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.shown[taskID] == nil {
				l.shown[taskID] = map[string]bool{}
			}
			for _, f := range res.Files {
				l.shown[taskID][f] = true
			}
			return prompt.Fence(res.Text, l.nonce), nil
		}}
}

// showed reports whether a task's tools showed a file.
func (l *looker) showed(taskID, file string) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.shown[taskID][file]
}

// refusedTools returns, for a task whose endpoint refused the tools it
// was offered, the refusal and the single-shot request sent instead; a
// zero refusal otherwise.
func (l *looker) refusedTools(taskID string) refusal {
	if l == nil {
		return refusal{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused[taskID]
}

// refusedNote says that a specialist reviewed without the tools its
// endpoint refused.
func refusedNote(specialist, model string, err error) string {
	return fmt.Sprintf("%s: %s refused the tools it was offered (%s), so the specialist reviewed the material alone, told it could not look; set review.tools: false or pass --no-tools to skip the refused first call",
		specialist, model, llm.Redact(err.Error()))
}

// openLooker opens the project for the run's looks, when the plan gives
// any task looks, and attaches them to those tasks. The caller closes it.
func (p *Plan) openLooker() (*looker, error) {
	if !slices.ContainsFunc(p.Tasks, func(t *engine.Task) bool { return p.taskInfo[t.ID].looks }) {
		return nil, nil
	}
	l, err := newLooker(p.top, p.Nonce, p.lookRounds, p.lookTokens)
	if err != nil {
		return nil, err
	}
	for _, task := range p.Tasks {
		info := p.taskInfo[task.ID]
		if !info.looks {
			continue
		}
		base := task.Request
		task.Looks = l.looks(task.ID, func() (*llm.Request, error) {
			c, err := info.single()
			if err != nil {
				return nil, err
			}
			req := base.Clone()
			req.System, req.SharedPrefix = c.Text, c.SharedPrefix
			return req, nil
		})
	}
	return l, nil
}

// newLooker opens the project at top for looks within the limits given;
// what they return is fenced with nonce.
func newLooker(top, nonce string, rounds, tokens int) (*looker, error) {
	t, err := tools.Open(top, tools.Limits{})
	if err != nil {
		return nil, fmt.Errorf("specialists' tools: %w", err)
	}
	return &looker{tools: t, nonce: nonce, rounds: rounds, tokens: tokens,
		shown: map[string]map[string]bool{}, refused: map[string]refusal{}}, nil
}

// close releases the project.
func (l *looker) close() {
	if l != nil {
		_ = l.tools.Close()
	}
}

// groundLooks holds a report's findings to what its specialist saw: a
// finding citing a file the specialist's tools showed is marked Looked
// (its lines may lie beyond what the material shows), and one citing a
// file outside the material that no tool showed has its confidence
// lowered to LOW, with a note, because nothing it was shown supports it.
func (p *Plan) groundLooks(taskID string, rep *finding.Report, l *looker) []string {
	var notes []string
	for i := range rep.Findings {
		f := &rep.Findings[i]
		file := f.Location.File
		if file == "" {
			continue
		}
		if l.showed(taskID, file) {
			f.Looked = true
			continue
		}
		if _, ok := p.Material.File(file); ok {
			continue
		}
		if f.Confidence != finding.Low {
			notes = append(notes, fmt.Sprintf("%s: finding %s cites %s, which neither the material nor its tools showed; its confidence is lowered to LOW",
				rep.Specialist, f.ID, prompt.Quote(file)))
			f.Confidence = finding.Low
		}
	}
	return notes
}

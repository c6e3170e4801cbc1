package grow

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/termsafe"
	"github.com/sotlabs/sot/llm"
)

// Defaults of Options.
const (
	// DefaultMaxCandidates is how many earlier nodes each new node is
	// judged against at most.
	DefaultMaxCandidates = 3
	// DefaultMinOverlap is the word overlap (Jaccard) that makes two nodes
	// without a shared tag a candidate pair.
	DefaultMinOverlap = 0.1
	// DefaultThreshold is the confidence a judged edge needs to be added.
	DefaultThreshold = 0.6
)

// Group is the engine.Task group of every call this package makes.
const Group = "graph"

// Options are what the graph's calls and choices need.
type Options struct {
	// Model is the model of every call, as provider:model.
	Model string
	// Nonce fences the debate's text in prompts. It must stay the same
	// when an interrupted run is resumed, so that the same requests are
	// sent and answered from the journal: a run's nonce
	// (prompt.NonceFor(run.Key(), runID)) is right. Required.
	Nonce string
	// MaxCandidates bounds the judgement calls: at most this many for each
	// new node (0: DefaultMaxCandidates).
	MaxCandidates int
	// MinOverlap is the word overlap that makes a pair without a shared
	// tag a candidate (0: DefaultMinOverlap).
	MinOverlap float64
	// Threshold is the confidence below which a judged edge is not added
	// (0: DefaultThreshold; a negative value adds every judged edge).
	Threshold float64
	// Now stamps new nodes (nil: the clock). It never reaches a prompt.
	Now func() time.Time
}

func (o *Options) maxCandidates() int {
	if o.MaxCandidates > 0 {
		return o.MaxCandidates
	}
	return DefaultMaxCandidates
}

func (o *Options) minOverlap() float64 {
	if o.MinOverlap > 0 {
		return o.MinOverlap
	}
	return DefaultMinOverlap
}

func (o *Options) threshold() float64 {
	switch {
	case o.Threshold < 0:
		return 0
	case o.Threshold == 0:
		return DefaultThreshold
	}
	return o.Threshold
}

// ask is one structured question to a model, asked once more with the
// problem when its answer does not fit.
type ask struct {
	req  *llm.Request
	task *engine.Task
	// attempts counts the answers read; raw is the last one that did not
	// fit, and reason why.
	attempts    int
	raw, reason string
	done        bool
	err         error
}

// next returns the task that asks (again), or nil when the question is
// answered, failed, or was asked twice.
func (a *ask) next() *engine.Task {
	if a.done || a.err != nil || a.attempts >= 2 {
		return nil
	}
	req := a.req
	if a.attempts == 1 {
		req = a.req.Clone()
		req.Label += "/again"
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: a.raw},
			llm.Message{Role: llm.RoleUser, Content: "That answer does not fit: " + a.reason + ".\nGive the whole answer again, corrected."})
	}
	a.task = &engine.Task{ID: req.Label, Group: Group, Request: req, Support: true}
	return a.task
}

// read takes res, the answer to a's task. parse checks the answer's JSON
// and keeps what it found; it returns why the answer does not fit, or "".
func (a *ask) read(res engine.Result, parse func(raw []byte) string) {
	a.attempts++
	if res.Err != nil {
		a.err = res.Err
		return
	}
	raw := strings.TrimSpace(string(res.Resp.JSON))
	if raw == "" {
		raw = strings.TrimSpace(res.Resp.Text)
	}
	reason := ""
	if !json.Valid([]byte(raw)) {
		reason = "it is not the JSON object the schema asks for"
	} else {
		reason = parse([]byte(raw))
	}
	if reason == "" {
		a.done = true
		a.raw, a.reason = "", ""
		return
	}
	if raw == "" {
		raw = "(empty answer)"
	}
	a.raw, a.reason = raw, reason
	if a.attempts >= 2 {
		a.err = &AnswerError{Reason: reason}
	}
}

// AnswerError is an answer that did not fit, twice.
type AnswerError struct{ Reason string }

func (e *AnswerError) Error() string { return "the answer did not fit, twice: " + e.Reason }

// tasksOf returns the next task of each ask.
func tasksOf(asks []*ask) []*engine.Task {
	var tasks []*engine.Task
	for _, a := range asks {
		if t := a.next(); t != nil {
			tasks = append(tasks, t)
		}
	}
	return tasks
}

// readAll hands each result to the ask whose task it answers.
func readAll(asks []*ask, results []engine.Result, parse func(i int, raw []byte) string) {
	for _, res := range results {
		for i, a := range asks {
			if a.task != nil && a.task == res.Task && !a.done && a.err == nil {
				a.read(res, func(raw []byte) string { return parse(i, raw) })
				a.task = nil
				break
			}
		}
	}
}

// run asks every question through x: one Execute for the first answers,
// and one more for those that did not fit. It returns the calls made and
// the Executes.
func run(ctx context.Context, x engine.Executor, asks []*ask, parse func(i int, raw []byte) string) (calls, steps int, err error) {
	for range 2 {
		tasks := tasksOf(asks)
		if len(tasks) == 0 {
			break
		}
		results := x.Execute(ctx, tasks)
		calls += len(tasks)
		steps++
		if err := ctx.Err(); err != nil {
			return calls, steps, err
		}
		readAll(asks, results, parse)
	}
	return calls, steps, nil
}

// oneLine collapses white space and escapes what a terminal would act on
// (termsafe.Line).
func oneLine(s string) string { return termsafe.Line(strings.Join(strings.Fields(s), " ")) }

// stamp is the time nodes are created at, by the caller's clock (o.Now,
// read through engine.Hooks, whose default is the system's), in UTC and
// to the second, so that the file reads well.
func stamp(now func() time.Time) time.Time {
	return engine.Hooks{Now: now}.Time().UTC().Truncate(time.Second)
}

// typeList is the names of ts, joined by commas.
func typeList[T ~string](ts []T) string { return strings.Join(names(ts), ", ") }

func names[T ~string](ts []T) []string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return s
}

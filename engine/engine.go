// Package engine runs the model calls of a scenario: every call of a step
// concurrently (the providers' limits bound what is really in flight), with
// an event for each change of state, so a terminal can show live status and
// a failed call never stops the others.
package engine

import (
	"context"
	"sync"
	"time"

	"github.com/sotlabs/sot/llm"
)

// State is where a task is.
type State int

// Task states.
const (
	Queued State = iota
	Running
	Done
	Failed
)

func (s State) String() string { return [...]string{"queued", "running", "done", "failed"}[s] }

// Task is one model call.
type Task struct {
	// ID is unique within a Run; Group gathers tasks for display (a specialist).
	ID      string
	Group   string
	Request *llm.Request
}

// Event reports a task's new state.
type Event struct {
	Task  *Task
	State State
	// Resp is set when Done; Err when Failed.
	Resp *llm.Response
	Err  error
	At   time.Time
}

// Result is a finished task.
type Result struct {
	Task *Task
	Resp *llm.Response
	Err  error
}

// Run sends every task through p concurrently and returns the results in
// the order of tasks. onEvent, if set, is called for every change of state,
// one call at a time.
func Run(ctx context.Context, p llm.Provider, tasks []*Task, onEvent func(Event)) []Result {
	var mu sync.Mutex
	emit := func(e Event) {
		if onEvent == nil {
			return
		}
		e.At = time.Now()
		mu.Lock()
		defer mu.Unlock()
		onEvent(e)
	}
	for _, t := range tasks {
		emit(Event{Task: t, State: Queued})
	}
	results := make([]Result, len(tasks))
	var wg sync.WaitGroup
	for i, t := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Running is reported when the provider's limits let the call
			// through, not when it starts waiting for a slot; a call answered
			// from the journal or cache is reported running as it finishes.
			var started sync.Once
			running := func() { started.Do(func() { emit(Event{Task: t, State: Running}) }) }
			req := t.Request.Clone()
			req.OnStart = running
			resp, err := p.Complete(ctx, req)
			running()
			results[i] = Result{Task: t, Resp: resp, Err: err}
			if err != nil {
				emit(Event{Task: t, State: Failed, Err: err})
				return
			}
			emit(Event{Task: t, State: Done, Resp: resp})
		}()
	}
	wg.Wait()
	return results
}

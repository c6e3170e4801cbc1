package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sotlabs/sot/llm"
)

// Executor runs the model calls of one step of a protocol and returns
// their results in the order of the tasks. A protocol makes every model
// call through an Executor, so that each call is evented, journaled and
// budgeted the same way, and so that an executor that keeps its own record
// (a durable workflow engine) can replay a protocol deterministically.
type Executor interface {
	Execute(ctx context.Context, tasks []*Task) []Result
}

// Local is the Executor that runs calls in this process: every task of a
// step at once through Provider, whose middleware (limits, retries,
// journal, cache, budget) decides what is really in flight (see Run).
type Local struct {
	Provider llm.Provider
	Hooks    Hooks
	// Fallback is the model a task runs on when its own model cannot be
	// used at all (no key, a rejected key, a model the provider does not
	// serve): the task runs once more on Fallback, with a warning, and its
	// Result says so. Empty means no fallback.
	Fallback string

	// warm are the prefixes this Executor's calls had written lately: a
	// later step's calls do not wait for them again (see Run).
	warm written
}

// Execute runs tasks, then the tasks whose model proved unusable once more
// on the fallback model.
func (l *Local) Execute(ctx context.Context, tasks []*Task) []Result {
	results := run(ctx, l.Provider, tasks, l.Hooks.Events, &l.warm)
	if l.Fallback == "" {
		return results
	}
	var again []*Task
	var at []int
	warned := map[string]bool{}
	for i, r := range results {
		from := r.Task.Request.Model
		if r.Err == nil || from == l.Fallback || !Unusable(r.Err) {
			continue
		}
		if !warned[r.Task.Group] {
			warned[r.Task.Group] = true
			l.Hooks.Warnf("%s", FallbackNote(from, r.Task.Group, r.Err, l.Fallback))
		}
		t := *r.Task
		t.Request = r.Task.Request.Clone()
		t.Request.Model = l.Fallback
		again, at = append(again, &t), append(at, i)
	}
	for k, r := range run(ctx, l.Provider, again, l.Hooks.Events, &l.warm) {
		r.FellBack = &FellBack{From: results[at[k]].Task.Request.Model, Err: results[at[k]].Err}
		results[at[k]] = r
	}
	return results
}

// Detach runs tasks on a goroutine of their own (Go) and returns at once:
// the calls go through the same provider stack as every Execute, beside
// the steps that follow.
//
// Under a scheduler (llm.SchedulerOf: the coroutines of a workflow, which
// a goroutine may not call into) they run inline, as under an Executor
// that cannot detach.
func (l *Local) Detach(ctx context.Context, tasks []*Task) *Detached {
	if llm.SchedulerOf(ctx) != nil {
		return inline(ctx, l, tasks)
	}
	return Go(ctx, l, tasks)
}

// FellBack records that a task ran on the fallback model.
type FellBack struct {
	From string // the model it was given
	Err  error  // why that model could not be used
}

// FallbackNote is the warning for a group whose model could not be used.
func FallbackNote(model, group string, err error, fallback string) string {
	msg := llm.Redact(err.Error())
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return fmt.Sprintf("model %q for %s is unavailable (%s); using the session default %s", model, group, msg, fallback)
}

// Unusable reports errors that say a model cannot be used at all, as
// opposed to a call that failed.
func Unusable(err error) bool {
	return errors.Is(err, llm.ErrMissingKey) || errors.Is(err, llm.ErrConfig) || errors.Is(err, llm.ErrAuth) || errors.Is(err, llm.ErrUnknownModel)
}

// SetupFailure reports a setup error that failed every call (a missing or
// rejected key, a bad endpoint): that is not a partial run but a run that
// could not start. It returns nil when any call got further.
func SetupFailure(results []Result) error {
	if len(results) == 0 {
		return nil
	}
	for _, r := range results {
		if r.Err == nil || !Unusable(r.Err) {
			return nil
		}
	}
	return fmt.Errorf("no specialist could run: %w", results[0].Err)
}

// NewExecutor makes the Executor of a run's step over its provider stack,
// with the run's hooks and fallback model (see Local). A front end or a
// library user sets one to run calls elsewhere (a durable executor, a
// recorder); the zero value makes a Local.
type NewExecutor func(provider llm.Provider, hooks Hooks, fallback string) Executor

// Make returns f's Executor, or a Local when f is nil.
func (f NewExecutor) Make(provider llm.Provider, hooks Hooks, fallback string) Executor {
	if f == nil {
		return &Local{Provider: provider, Hooks: hooks, Fallback: fallback}
	}
	return f(provider, hooks, fallback)
}

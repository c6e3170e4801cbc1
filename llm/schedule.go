package llm

import "context"

// Scheduler runs the concurrent parts of a run where goroutines may not
// be used: the workflow code of a durable executor (engine/temporal's
// hosted protocol), whose coroutines are scheduled one at a time in an
// order its history can replay. A context that carries one
// (WithScheduler) tells the engine to start a step's calls with Go and
// wait for them with Await, and the meter to wait for room in a budget
// with Await, instead of on goroutines and channels, which would block
// every coroutine of the workflow at once.
type Scheduler interface {
	// Go runs f beside its caller, under a context of f's own (derived
	// from ctx) that f must use for everything that waits.
	Go(ctx context.Context, f func(ctx context.Context))
	// Await returns once cond reports true, or with ctx's error once ctx
	// is done. cond is checked again whenever another of the scheduler's
	// coroutines has run; it must not block. A ctx that cannot be done
	// (context.WithoutCancel) waits for cond alone.
	Await(ctx context.Context, cond func() bool) error
}

type schedulerKey struct{}

// WithScheduler returns a context whose calls are scheduled by s.
func WithScheduler(ctx context.Context, s Scheduler) context.Context {
	return context.WithValue(ctx, schedulerKey{}, s)
}

// SchedulerOf returns the Scheduler ctx carries, or nil: then calls run
// on goroutines.
func SchedulerOf(ctx context.Context) Scheduler {
	s, _ := ctx.Value(schedulerKey{}).(Scheduler)
	return s
}

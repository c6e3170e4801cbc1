package engine

import "context"

// Detached is a batch of calls that nothing waits for (a summary no later
// call reads), running through an Executor while its caller goes on with
// the calls that are on its critical path.
type Detached struct {
	done    chan struct{}
	results []Result
}

// Detacher is an Executor that can run a batch of calls detached from its
// caller: Detach starts them and returns at once, and the caller goes on
// with its next steps while they run. An Executor that runs calls in this
// process detaches them on a goroutine of its own (Go); Local does.
type Detacher interface {
	Executor
	Detach(ctx context.Context, tasks []*Task) *Detached
}

// Detach asks x to run tasks detached from the caller, and is how a
// protocol does so: the protocol starts no goroutine itself. When x is a
// Detacher, its Detach runs them. An Executor that cannot detach (a
// durable executor that replays a workflow step by step, or a wrapper that
// does not pass Detach on) runs them here, inline, through Execute: the
// results are the same, and only the steps after wait for them. Wait
// collects the results either way.
func Detach(ctx context.Context, x Executor, tasks []*Task) *Detached {
	if dx, ok := x.(Detacher); ok {
		return dx.Detach(ctx, tasks)
	}
	return inline(ctx, x, tasks)
}

// inline runs tasks through x before it returns, as a Detached whose
// calls have all finished.
func inline(ctx context.Context, x Executor, tasks []*Task) *Detached {
	d := &Detached{done: make(chan struct{}), results: x.Execute(ctx, tasks)}
	close(d.done)
	return d
}

// Go starts x.Execute(ctx, tasks) on a goroutine of its own and returns at
// once: the Detach of an Executor that runs calls in this process. x must
// be safe for concurrent use (Local is: its provider stack's limits,
// retries, journal and budget hold across every Execute in flight).
// Cancelling ctx ends the calls as it ends any other.
func Go(ctx context.Context, x Executor, tasks []*Task) *Detached {
	d := &Detached{done: make(chan struct{})}
	go func() {
		defer close(d.done)
		d.results = x.Execute(ctx, tasks)
	}()
	return d
}

// Done is closed when every call has finished.
func (d *Detached) Done() <-chan struct{} { return d.done }

// Wait returns the results, in the order of the tasks, once every call
// has finished.
func (d *Detached) Wait() []Result {
	<-d.done
	return d.results
}

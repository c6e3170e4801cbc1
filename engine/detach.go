package engine

import "context"

// Detached is a batch of calls that nothing waits for (a summary no later
// call reads), running through an Executor while its caller goes on with
// the calls that are on its critical path.
type Detached struct {
	done    chan struct{}
	results []Result
}

// Detach starts x.Execute(ctx, tasks) and returns at once; Wait collects
// the results. The Executor must be safe for concurrent use (Local is: its
// provider stack's limits, retries, journal and budget hold across every
// Execute in flight). Cancelling ctx ends the calls as it ends any other.
func Detach(ctx context.Context, x Executor, tasks []*Task) *Detached {
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

package llm

import "context"

type yieldKey struct{}

// WithYield returns ctx carrying f, which a call made with it runs through
// Yield once the call no longer needs the CPU until its answer. A caller
// that starts many calls at once (engine.Run) lets only a few of them
// build and encode their requests at a time, in order, and starts the
// next when one yields: the first request goes out after its own work
// rather than after every call's, and the network's answers are not kept
// waiting behind requests still being built. f may be run more than once.
func WithYield(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, yieldKey{}, f)
}

// Yield runs the function WithYield put in ctx, if any. A provider calls it
// when its request is handed to the network (or to the program or service
// that answers it), and a middleware when it makes the call wait: for a
// slot of the provider's limits or for room in the budget. A provider that
// does not call it holds the caller's slot until it returns.
func Yield(ctx context.Context) {
	if f, ok := ctx.Value(yieldKey{}).(func()); ok {
		f()
	}
}

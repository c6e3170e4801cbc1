package engine

import "context"

type stopKey struct{}

// WithStop returns ctx carrying stop, which a part deep inside a run (a
// durable executor whose workflow was cancelled from outside) calls to
// stop the whole run as an interruption does: the front end that gave it
// ends the run with the same partial result, exit code and resume path as
// Ctrl-C, saying why.
func WithStop(ctx context.Context, stop context.CancelCauseFunc) context.Context {
	return context.WithValue(ctx, stopKey{}, stop)
}

// Stop stops the run ctx belongs to with cause, and reports whether the
// run could be stopped so (a front end gave WithStop).
func Stop(ctx context.Context, cause error) bool {
	stop, ok := ctx.Value(stopKey{}).(context.CancelCauseFunc)
	if ok {
		stop(cause)
	}
	return ok
}

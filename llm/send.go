package llm

import "context"

type sendKey struct{}

// WithSendGate returns ctx carrying wait, which a call made with it runs
// through Sending as its request is about to leave. The journal uses it
// so that a call builds its request while the records of the calls
// finished before it reach the disk, and only its sending waits for
// them. wait may be run more than once; a gate already in ctx runs first.
func WithSendGate(ctx context.Context, wait func() error) context.Context {
	if outer, ok := ctx.Value(sendKey{}).(func() error); ok {
		inner := wait
		wait = func() error {
			if err := outer(); err != nil {
				return err
			}
			return inner()
		}
	}
	return context.WithValue(ctx, sendKey{}, wait)
}

// Sending runs the gate WithSendGate put in ctx, if any, and returns its
// error. A provider calls it just before its request leaves the process
// (is handed to the HTTP client, or to the program or service that
// answers it) and sends nothing when it fails. A provider that does not
// call it sends without waiting; the journal then waits once the call
// returns.
func Sending(ctx context.Context) error {
	if f, ok := ctx.Value(sendKey{}).(func() error); ok {
		return f()
	}
	return nil
}

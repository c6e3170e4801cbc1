package llm

import (
	"context"
	"net/http"
)

// holdKey carries the channel WithSendHold registers.
type holdKey struct{}

// WithSendHold returns a context under which a backend prepares a call
// (composes and encodes its request) but sends nothing until hold is
// closed or ctx ends. A call held this way goes out the moment it may,
// instead of being encoded only then.
//
// engine.Run uses it for the calls that wait for another call's prompt
// prefix to reach the provider's cache.
func WithSendHold(ctx context.Context, hold <-chan struct{}) context.Context {
	return context.WithValue(ctx, holdKey{}, hold)
}

// WaitSendHold waits until ctx's send hold, if it has one, is released, and
// returns ctx's error if ctx ends first.
func WaitSendHold(ctx context.Context) error {
	hold, _ := ctx.Value(holdKey{}).(<-chan struct{})
	if hold == nil {
		return nil
	}
	select {
	case <-hold:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// HoldSend is an HTTP middleware for the providers' SDKs (their
// option.WithMiddleware): it passes the encoded request on once the
// request context's send hold is released.
func HoldSend(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	if err := WaitSendHold(req.Context()); err != nil {
		return nil, err
	}
	return next(req)
}

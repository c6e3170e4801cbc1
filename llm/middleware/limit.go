package middleware

import (
	"context"

	"golang.org/x/time/rate"

	"github.com/sotlabs/sot/llm"
)

// Limit lets at most concurrency calls through at once (0 means no limit) and,
// when rpm > 0, starts at most rpm calls a minute, evenly spaced. It belongs
// inside Retry, so that a call waiting out its back-off frees its slot.
func Limit(next llm.Provider, concurrency, rpm int) llm.Provider {
	var slots chan struct{}
	if concurrency > 0 {
		slots = make(chan struct{}, concurrency)
	}
	var limiter *rate.Limiter
	if rpm > 0 {
		limiter = rate.NewLimiter(rate.Limit(float64(rpm)/60), 1)
	}
	return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if slots != nil {
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if limiter != nil {
			if err := limiter.Wait(ctx); err != nil {
				return nil, err
			}
		}
		if req.OnStart != nil {
			req.OnStart()
		}
		return next.Complete(ctx, req)
	})
}

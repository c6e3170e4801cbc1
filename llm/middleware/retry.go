package middleware

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/sotlabs/sot/llm"
)

// RetryOptions bound the retries of one call.
type RetryOptions struct {
	// MaxAttempts is the total number of tries, first one included (default 5).
	MaxAttempts int
	// BaseDelay is the back-off before the second try (default 500ms); it
	// doubles with every try, with jitter, up to MaxDelay (default 20s).
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxRetryAfter is the longest Retry-After sot is willing to wait (default
	// 2m). A provider that asks for longer fails the call at once.
	MaxRetryAfter time.Duration
	// AttemptTimeout bounds each try; 0 means no bound beyond the context's.
	AttemptTimeout time.Duration
	// Logger receives one line per retry; nil uses slog.Default().
	Logger *slog.Logger
}

func (o RetryOptions) withDefaults() RetryOptions {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = 500 * time.Millisecond
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 20 * time.Second
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = 2 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Retry retries calls that failed with a retryable error (rate limits, 408,
// 409, 5xx, connection failures, timeouts, unreadable answers) with jittered
// exponential back-off, waiting at least as long as a Retry-After asks.
// The backends turn their SDKs' own retries off, so nothing retries twice over.
func Retry(next llm.Provider, opts RetryOptions) llm.Provider {
	o := opts.withDefaults()
	return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		var err error
		for attempt := 1; ; attempt++ {
			var resp *llm.Response
			resp, err = o.try(ctx, next, req)
			if err == nil {
				return resp, nil
			}
			if ctx.Err() != nil || !llm.Retryable(err) {
				return nil, err
			}
			if attempt >= o.MaxAttempts {
				return nil, fmt.Errorf("gave up after %d attempts: %w", attempt, err)
			}
			wait := o.backoff(attempt)
			if ra := llm.RetryAfter(err); ra > 0 {
				if ra > o.MaxRetryAfter {
					return nil, fmt.Errorf("provider asked to wait %s, longer than the %s sot will wait: %w", ra, o.MaxRetryAfter, err)
				}
				wait = max(wait, ra)
			}
			o.Logger.Warn("model call failed; retrying", "label", req.Label, "model", req.Model,
				"attempt", attempt, "of", o.MaxAttempts, "wait", wait.Round(time.Millisecond), "err", err)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, fmt.Errorf("%w (while waiting to retry after: %w)", ctx.Err(), err)
			case <-t.C:
			}
		}
	})
}

// try makes one attempt under the per-attempt time limit.
func (o RetryOptions) try(ctx context.Context, next llm.Provider, req *llm.Request) (*llm.Response, error) {
	if o.AttemptTimeout <= 0 {
		return next.Complete(ctx, req)
	}
	actx, cancel := context.WithTimeout(ctx, o.AttemptTimeout)
	defer cancel()
	resp, err := next.Complete(actx, req)
	if err != nil && ctx.Err() == nil && actx.Err() != nil && !errors.Is(err, llm.ErrTimeout) {
		m, _ := llm.ParseModel(req.Model)
		err = &llm.Error{Provider: m.Provider, Model: req.Model, Kind: llm.ErrTimeout,
			Message: fmt.Sprintf("no answer within %s", o.AttemptTimeout), Err: err}
	}
	return resp, err
}

// backoff is the jittered delay after the given failed attempt: a random
// value between half and all of BaseDelay*2^(attempt-1), capped at MaxDelay.
func (o RetryOptions) backoff(attempt int) time.Duration {
	d := o.BaseDelay << (attempt - 1)
	if d <= 0 || d > o.MaxDelay {
		d = o.MaxDelay
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)+1))
}

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
	// MaxAttempts is the number of tries a call gets for failures other
	// than rate limits, the first one included (default 5). With 1 nothing
	// is tried again, not even after a rate limit.
	MaxAttempts int
	// BaseDelay is the back-off before the second try (default 500ms); it
	// doubles with every try, with jitter, up to MaxDelay (default 20s).
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxRetryAfter is the longest Retry-After sot is willing to wait (default
	// 2m). A provider that asks for longer fails the call at once.
	MaxRetryAfter time.Duration
	// RateLimitWait bounds how long a call keeps waiting out rate limits
	// (429), counted from its first one: a 429 does not use up one of
	// MaxAttempts, since the provider only asks the call to come back
	// later. The default is the longer of AttemptTimeout and MaxRetryAfter.
	// The caller's context bounds it too.
	RateLimitWait time.Duration
	// AttemptTimeout bounds each try; 0 means no bound beyond the context's.
	AttemptTimeout time.Duration
	// Logger receives one debug line per retry; nil uses slog.Default().
	Logger *slog.Logger
	// OnRetry, when set, is called before every retry with the error of the
	// attempt that failed (see llm.ErrRateLimited and the other kinds). It
	// may be called concurrently.
	OnRetry func(err error)
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
	if o.RateLimitWait <= 0 {
		o.RateLimitWait = max(o.AttemptTimeout, o.MaxRetryAfter)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Retry retries calls that failed with a retryable error (rate limits, 408,
// 409, 5xx, connection failures, timeouts, unreadable answers) with jittered
// exponential back-off. After a rate limit it waits as long as Retry-After
// asks plus a random part of that again, so that calls turned away together
// do not all come back at the same moment; rate limits are waited out for
// up to RateLimitWait and do not count against MaxAttempts. Each retry is
// logged at debug level and reported to OnRetry.
// The backends turn their SDKs' own retries off, so nothing retries twice over.
func Retry(next llm.Provider, opts RetryOptions) llm.Provider {
	o := opts.withDefaults()
	return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		var (
			err        error
			failures   int       // failed attempts that count against MaxAttempts
			limited    int       // rate-limited attempts
			firstLimit time.Time // when the first rate limit came back
		)
		for attempt := 1; ; attempt++ {
			var resp *llm.Response
			resp, err = o.try(ctx, next, req)
			if err == nil {
				return resp, nil
			}
			if ctx.Err() != nil || !llm.Retryable(err) {
				return nil, err
			}
			if o.MaxAttempts == 1 {
				return nil, err
			}
			ra := llm.RetryAfter(err)
			if ra > o.MaxRetryAfter {
				return nil, fmt.Errorf("provider asked to wait %s, longer than the %s sot will wait: %w", ra, o.MaxRetryAfter, err)
			}
			var wait time.Duration
			if errors.Is(err, llm.ErrRateLimited) {
				limited++
				if firstLimit.IsZero() {
					firstLimit = time.Now()
				}
				wait = o.rateLimitDelay(limited, ra)
				if waited := time.Since(firstLimit); waited+wait > o.RateLimitWait {
					return nil, fmt.Errorf("still rate limited after %d attempts in %s; sot waits out rate limits for up to %s: %w",
						attempt, waited.Round(time.Millisecond), o.RateLimitWait, err)
				}
			} else {
				failures++
				if failures >= o.MaxAttempts {
					return nil, fmt.Errorf("gave up after %d attempts: %w", attempt, err)
				}
				wait = max(o.backoff(failures), ra)
			}
			o.Logger.Debug("model call failed; retrying", "label", req.Label, "model", req.Model,
				"attempt", attempt, "wait", wait.Round(time.Millisecond), "err", err)
			if o.OnRetry != nil {
				o.OnRetry(err)
			}
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

// rateLimitDelay is the wait after the n-th rate limit of a call. With a
// Retry-After it is that, plus a random part of up to half of it again, so
// that calls the provider turned away together spread out instead of all
// coming back at the moment it named. Without one, it is the exponential
// back-off.
func (o RetryOptions) rateLimitDelay(n int, retryAfter time.Duration) time.Duration {
	if retryAfter <= 0 {
		return o.backoff(n)
	}
	return retryAfter + time.Duration(rand.Int64N(int64(retryAfter/2)+1))
}

package middleware

import (
	"context"
	"errors"
	"sync"

	"golang.org/x/time/rate"

	"github.com/sotlabs/sot/llm"
)

// Limit lets at most concurrency calls through at once (0 means no limit) and,
// when rpm > 0, starts at most rpm calls a minute, evenly spaced. It belongs
// inside Retry, so that a call waiting out its back-off frees its slot.
//
// The concurrency adapts to rate limits, additive increase and
// multiplicative decrease: a call the provider answers with 429 halves the
// number of calls let through at once (once for all the calls that were
// sent before the cut), and every call that succeeds raises it again by a
// fraction, about one more call at once for every round of successful
// calls, back up to concurrency.
func Limit(next llm.Provider, concurrency, rpm int) llm.Provider {
	g := newGate(concurrency)
	var limiter *rate.Limiter
	if rpm > 0 {
		limiter = rate.NewLimiter(rate.Limit(float64(rpm)/60), 1)
	}
	return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		epoch, err := g.acquire(ctx)
		if err != nil {
			return nil, err
		}
		if limiter != nil {
			if limiter.Tokens() < 1 {
				llm.Yield(ctx)
			}
			if err := limiter.Wait(ctx); err != nil {
				g.release(epoch, false, false)
				return nil, err
			}
		}
		if req.OnStart != nil {
			req.OnStart()
		}
		req = withAnswerHook(ctx, req)
		resp, err := next.Complete(ctx, req)
		g.release(epoch, err == nil, errors.Is(err, llm.ErrRateLimited))
		if f := answerHook(ctx); f != nil {
			f() // the attempt ended: with an answer, or without one
		}
		return resp, err
	})
}

// gate admits calls up to a limit that moves between 1 and its ceiling.
type gate struct {
	mu       sync.Mutex
	ceiling  int     // the configured concurrency; 0 is no limit
	limit    float64 // calls let through at once now
	inflight int
	epoch    int // counts the cuts, so that one burst of 429s cuts once
	waiting  []chan struct{}
}

func newGate(concurrency int) *gate {
	return &gate{ceiling: concurrency, limit: float64(concurrency)}
}

// open reports whether one more call may start now. g.mu must be held.
func (g *gate) open() bool {
	if g.ceiling <= 0 && g.epoch == 0 {
		return true // no limit, and no rate limit seen yet
	}
	return g.inflight < max(1, int(g.limit))
}

// acquire waits for a slot and returns the epoch it was granted in.
func (g *gate) acquire(ctx context.Context) (int, error) {
	g.mu.Lock()
	if len(g.waiting) == 0 && g.open() {
		g.inflight++
		e := g.epoch
		g.mu.Unlock()
		return e, nil
	}
	ch := make(chan struct{})
	g.waiting = append(g.waiting, ch)
	g.mu.Unlock()
	llm.Yield(ctx)
	select {
	case <-ch:
		g.mu.Lock()
		e := g.epoch
		g.mu.Unlock()
		return e, nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		for i, w := range g.waiting {
			if w == ch {
				g.waiting = append(g.waiting[:i], g.waiting[i+1:]...)
				return 0, ctx.Err()
			}
		}
		// The slot was granted as the context ended: hand it on.
		g.inflight--
		g.wakeLocked()
		return 0, ctx.Err()
	}
}

// release frees a slot. A success raises the limit by 1/limit (one more
// call at once per limit successes); a rate limit on a call granted in
// the current epoch halves it and starts a new epoch, so calls that were
// already in flight when the provider pushed back do not cut it again.
func (g *gate) release(epoch int, ok, rateLimited bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
	switch {
	case rateLimited && epoch == g.epoch:
		if g.ceiling <= 0 && g.epoch == 0 {
			g.limit = float64(g.inflight + 1) // no ceiling: start from what was in flight
		}
		g.limit = max(1, g.limit/2)
		g.epoch++
	case ok && g.limit < float64(g.ceiling):
		g.limit = min(float64(g.ceiling), g.limit+1/max(1, g.limit))
	case ok && g.ceiling <= 0 && g.epoch > 0:
		g.limit += 1 / max(1, g.limit)
	}
	g.wakeLocked()
}

// wakeLocked admits waiting calls while there is room. g.mu must be held.
func (g *gate) wakeLocked() {
	for len(g.waiting) > 0 && g.open() {
		g.inflight++
		close(g.waiting[0])
		g.waiting = g.waiting[1:]
	}
}

// answerKey carries the function WithAnswerStart registers.
type answerKey struct{}

// WithAnswerStart returns a context under which Limit calls f as soon as
// an attempt of a call starts receiving its answer (the first piece of a
// streamed answer; for a backend that does not stream, the whole answer),
// and when an attempt ends without one. f may be called more than once and
// concurrently; the first call is the one that matters. A call answered
// above Limit (from the journal or the cache) never calls f.
//
// engine.Run uses it to hold the calls that share a prompt prefix back
// until the first of them has had that prefix written to the provider's
// prompt cache, which providers do once the answer starts.
func WithAnswerStart(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, answerKey{}, f)
}

func answerHook(ctx context.Context) func() {
	f, _ := ctx.Value(answerKey{}).(func())
	return f
}

// withAnswerHook returns req with OnDelta calling the context's answer
// hook before passing text on. Setting OnDelta makes every backend stream.
func withAnswerHook(ctx context.Context, req *llm.Request) *llm.Request {
	f := answerHook(ctx)
	if f == nil {
		return req
	}
	out := req.OnDelta
	var once sync.Once
	r := *req
	r.OnDelta = func(text string) {
		once.Do(f)
		if out != nil {
			out(text)
		}
	}
	return &r
}

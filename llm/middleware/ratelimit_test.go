package middleware

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

// Nineteen calls against a provider that takes three requests per window:
// with the default number of attempts, every one of them is answered,
// because rate limits are waited out for as long as the time bound allows
// rather than using up the attempts, and the retries come back spread out
// rather than all at the moment the window opens. The back-off is made
// short so that the waits are what Retry-After asks, as with a provider
// whose Retry-After is longer than the back-off.
func TestRetryWaitsOutATightQuota(t *testing.T) {
	p, srv := backend(t, llmtest.Config{Quota: llmtest.Quota{Requests: 3, Window: 100 * time.Millisecond}})
	r := Retry(Limit(p, 20, 0), RetryOptions{BaseDelay: time.Millisecond})
	const calls = 19
	for _, err := range completeAll(r, calls) {
		t.Errorf("call failed under the quota: %v", err)
	}
	limited := 0
	for _, rec := range srv.Requests() {
		if rec.Status == 429 {
			limited++
		}
	}
	if limited == 0 {
		t.Errorf("no request was rate limited; the quota did not bite")
	}
	t.Logf("%d requests for %d calls, %d of them rate limited", srv.Count(), calls, limited)
}

// A provider that keeps answering 429 is waited out for RateLimitWait, not
// for MaxAttempts tries; the error says so and wraps the rate limit.
func TestRetryBoundsRateLimitsByTime(t *testing.T) {
	p, srv := backend(t, llmtest.Config{Faults: llmtest.Faults{Rate: 1, Kinds: []llmtest.FaultKind{llmtest.Fault429}, RetryAfterMs: 10}})
	_, err := Retry(p, RetryOptions{MaxAttempts: 2, RateLimitWait: 150 * time.Millisecond}).Complete(context.Background(), ask(1))
	if !errors.Is(err, llm.ErrRateLimited) || !strings.Contains(err.Error(), "still rate limited") {
		t.Fatalf("err = %v, want it to give up on the rate limit", err)
	}
	if srv.Count() <= 2 {
		t.Errorf("%d requests: rate limits used up the 2 attempts meant for errors", srv.Count())
	}
}

// With one attempt (retries 0), nothing is tried again, not even a rate limit.
func TestRetryOneAttemptMeansNoRetry(t *testing.T) {
	p, srv := backend(t, llmtest.Config{Faults: llmtest.Faults{Sequence: []llmtest.FaultKind{llmtest.Fault429}, RetryAfterMs: 10}})
	if _, err := Retry(p, RetryOptions{MaxAttempts: 1}).Complete(context.Background(), ask(1)); !errors.Is(err, llm.ErrRateLimited) {
		t.Errorf("err = %v, want the rate limit", err)
	}
	if srv.Count() != 1 {
		t.Errorf("%d requests, want 1", srv.Count())
	}
}

// Retry-After is waited in full, and on top of it a random part of up to
// half of it, so that calls turned away together do not come back
// together.
func TestRetryJittersRetryAfter(t *testing.T) {
	o := RetryOptions{}.withDefaults()
	const ra = time.Second
	var waits []time.Duration
	for range 200 {
		w := o.rateLimitDelay(1, ra)
		if w < ra || w > ra+ra/2 {
			t.Fatalf("waited %s after a Retry-After of %s, want between %s and %s", w, ra, ra, ra+ra/2)
		}
		waits = append(waits, w)
	}
	if spread := slices.Max(waits) - slices.Min(waits); spread < ra/4 {
		t.Errorf("200 waits spread over only %s", spread)
	}
	if w := o.rateLimitDelay(1, 0); w < o.BaseDelay/2 || w > o.BaseDelay {
		t.Errorf("without Retry-After the first wait is %s, want the back-off", w)
	}
}

// levels records the level of every log line.
type levels struct {
	mu  sync.Mutex
	got []slog.Level
}

func (l *levels) Enabled(context.Context, slog.Level) bool { return true }
func (l *levels) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, r.Level)
	return nil
}
func (l *levels) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *levels) WithGroup(string) slog.Handler      { return l }

// Retries are logged at debug level only (a run shows them with
// --verbose), and each one is reported to OnRetry with its cause.
func TestRetryLogsAtDebugAndReportsEachRetry(t *testing.T) {
	p, _ := backend(t, llmtest.Config{Faults: llmtest.Faults{RetryAfterMs: 5,
		Sequence: []llmtest.FaultKind{llmtest.Fault429, llmtest.Fault500, llmtest.Fault429, llmtest.Fault503}}})
	h := &levels{}
	var mu sync.Mutex
	causes := map[string]int{}
	r := Retry(p, RetryOptions{MaxAttempts: 3, BaseDelay: time.Millisecond, Logger: slog.New(h), OnRetry: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case errors.Is(err, llm.ErrRateLimited):
			causes["429"]++
		case errors.Is(err, llm.ErrUnavailable):
			causes["5xx"]++
		}
	}})
	complete(t, r, ask(1))
	if fmt.Sprint(causes) != "map[429:2 5xx:2]" {
		t.Errorf("retries reported: %v, want two after 429 and two after 5xx", causes)
	}
	if len(h.got) != 4 {
		t.Errorf("%d log lines for 4 retries", len(h.got))
	}
	for _, l := range h.got {
		if l != slog.LevelDebug {
			t.Errorf("a retry was logged at %s, want debug", l)
		}
	}
}

// The gate's arithmetic: a rate limit halves the calls let through at once,
// once for all calls admitted before the cut; each success raises it by
// 1/limit; it climbs back to the configured concurrency and never above.
func TestLimitAdditiveIncreaseMultiplicativeDecrease(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	admitted := func(g *gate) bool { // without waiting
		e, err := g.acquire(done)
		if err == nil {
			g.release(e, false, false)
		}
		return err == nil
	}
	g := newGate(8)
	for range 8 {
		if _, err := g.acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	g.release(0, false, true)
	g.release(0, false, true) // admitted before the cut: no second cut
	if g.limit != 4 || g.inflight != 6 {
		t.Fatalf("limit %v with %d in flight after a burst of 429s, want 4 and 6", g.limit, g.inflight)
	}
	for _, want := range []bool{false, false, false, true} { // 5, 4, 3 then 2 in flight
		if got := admitted(g); got != want {
			t.Fatalf("with %d in flight and a limit of %.2f, admitted = %v", g.inflight, g.limit, got)
		}
		g.release(1, true, false)
	}
	if g.limit <= 4 || g.limit >= 5 {
		t.Errorf("limit %.2f after four successes from 4, want a little under 5", g.limit)
	}
	// A rate limit of a call admitted after the cut cuts again.
	e, _ := g.acquire(context.Background())
	g.release(e, false, true)
	if g.limit >= 2.5 {
		t.Errorf("limit %.2f after a second cut, want about half of 4.9", g.limit)
	}
	g.release(0, true, false) // the last two calls of the first burst
	g.release(0, true, false)
	for range 200 {
		e, _ := g.acquire(context.Background())
		g.release(e, true, false)
	}
	if g.limit != 8 {
		t.Errorf("limit %.2f after 200 successes, want back at 8", g.limit)
	}
	// Without a configured limit, the first 429 starts from what was in flight.
	u := newGate(0)
	for range 10 {
		u.acquire(context.Background())
	}
	u.release(0, false, true)
	if u.limit != 5 || admitted(u) {
		t.Errorf("unlimited gate: limit %.2f after a 429 with 10 in flight, want 5 and no room", u.limit)
	}
}

// Over real HTTP: after a 429, calls wait until the calls in flight fall
// below half the concurrency, and it climbs back as calls succeed. The
// provider holds each call until the test lets it answer, so what is in
// flight is known exactly.
func TestLimitLowersConcurrencyAfterA429(t *testing.T) {
	var released atomic.Int32
	var mu sync.Mutex
	arrivedAfter := map[string]int32{} // releases seen when the call arrived
	arrived := make(chan string, 16)
	holds := map[string]chan struct{}{}
	for _, n := range []string{"a1", "a2", "a3", "b1", "b2"} {
		holds[n] = make(chan struct{})
	}
	p, _ := backend(t, llmtest.Config{Rules: []llmtest.Rule{{Respond: func(r *llmtest.Recorded) llmtest.Reply {
		u := r.LastUser()
		if u == "limited" {
			return llmtest.Reply{Fault: llmtest.Fault429}
		}
		mu.Lock()
		arrivedAfter[u] = released.Load()
		mu.Unlock()
		arrived <- u
		<-holds[u]
		return llmtest.Reply{Text: "ok"}
	}}}})
	l := Limit(p, 4, 0)
	call := func(u string) error {
		req := ask(0)
		req.Messages[0].Content = u
		_, err := l.Complete(context.Background(), req)
		return err
	}
	results := map[string]chan error{}
	start := func(u string) {
		ch := make(chan error, 1)
		results[u] = ch
		go func() { ch <- call(u) }()
	}
	for _, u := range []string{"a1", "a2", "a3"} {
		start(u)
	}
	for range 3 {
		<-arrived
	}
	if err := call("limited"); !errors.Is(err, llm.ErrRateLimited) {
		t.Fatalf("err = %v, want a 429", err)
	}
	// Three in flight, and now room for two: b1 and b2 wait.
	start("b1")
	start("b2")
	for _, u := range []string{"a1", "a2", "a3", "b1", "b2"} {
		if strings.HasPrefix(u, "a") {
			released.Add(1)
		}
		close(holds[u])
		if err := <-results[u]; err != nil {
			t.Fatal(err)
		}
	}
	// After a1 (limit 2.5, two in flight) neither could start; after a2 one
	// could, after a3 the other.
	got := []int32{arrivedAfter["b1"], arrivedAfter["b2"]}
	slices.Sort(got)
	if got[0] < 2 || got[1] < 3 {
		t.Errorf("the waiting calls arrived after %v of the earlier calls had answered, want after 2 and 3", got)
	}
}

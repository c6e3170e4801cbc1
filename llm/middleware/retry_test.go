package middleware

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

func TestRetryRidesOutThirtyPercentFaults(t *testing.T) {
	p, srv := backend(t, llmtest.Config{Seed: 3, Faults: llmtest.Faults{Rate: 0.3, RetryAfter: 1,
		Kinds: []llmtest.FaultKind{llmtest.Fault500, llmtest.Fault503, llmtest.Fault429, llmtest.FaultHang, llmtest.FaultTruncate, llmtest.FaultInvalidJSON}}})
	r := Retry(Limit(p, 16, 0), RetryOptions{MaxAttempts: 8, BaseDelay: 10 * time.Millisecond, MaxDelay: 100 * time.Millisecond, AttemptTimeout: 500 * time.Millisecond})
	const calls = 60
	for _, err := range completeAll(r, calls) {
		t.Errorf("call failed despite retries: %v", err)
	}
	faults := 0
	for _, rec := range srv.Requests() {
		if rec.Fault != "" {
			faults++
		}
	}
	if faults == 0 || srv.Count() != calls+faults {
		t.Errorf("%d requests for %d calls with %d faults: each fault should cost exactly one retry", srv.Count(), calls, faults)
	}
}

func TestRetryGivesUpOnPermanentErrors(t *testing.T) {
	tests := []struct {
		name     string
		cfg      llmtest.Config
		kind     error
		requests int
		contains []string
	}{
		{"401 is not retried and names the provider", llmtest.Config{APIKey: "the-right-key"}, llm.ErrAuth, 1, []string{"openai", "authentication failed", "OPENAI_API_KEY"}},
		{"404 unknown model", llmtest.Config{Models: []string{"gpt-5"}}, llm.ErrUnknownModel, 1, []string{"unknown model"}},
		{"persistent 503 stops at the bound", llmtest.Config{Faults: llmtest.Faults{Rate: 1, Kinds: []llmtest.FaultKind{llmtest.Fault503}}}, llm.ErrUnavailable, 3, []string{"gave up after 3 attempts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, srv := backend(t, tt.cfg)
			_, err := Retry(p, RetryOptions{MaxAttempts: 3, BaseDelay: time.Millisecond}).Complete(context.Background(), ask(1))
			if !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want %v", err, tt.kind)
			}
			if srv.Count() != tt.requests {
				t.Errorf("%d requests, want %d", srv.Count(), tt.requests)
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("error %q lacks %q", err, c)
				}
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("the key leaked into the error: %v", err)
			}
		})
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	p, srv := backend(t, llmtest.Config{Faults: llmtest.Faults{Sequence: []llmtest.FaultKind{llmtest.Fault429}, RetryAfter: 2}})
	complete(t, Retry(p, RetryOptions{BaseDelay: time.Millisecond}), ask(1))
	recs := srv.Requests()
	if len(recs) != 2 {
		t.Fatalf("%d requests, want 2", len(recs))
	}
	if gap := recs[1].Time.Sub(recs[0].Time); gap < 2*time.Second {
		t.Errorf("retried after %s; the provider asked for 2s", gap)
	}
}

func TestRetryTooLongRetryAfterFailsFast(t *testing.T) {
	p, srv := backend(t, llmtest.Config{Faults: llmtest.Faults{Sequence: []llmtest.FaultKind{llmtest.Fault429}, RetryAfter: 600}})
	_, err := Retry(p, RetryOptions{MaxRetryAfter: time.Second}).Complete(context.Background(), ask(1))
	if !errors.Is(err, llm.ErrRateLimited) || !strings.Contains(err.Error(), "longer than") || srv.Count() != 1 {
		t.Errorf("err = %v after %d requests; a 10-minute Retry-After should fail at once", err, srv.Count())
	}
}

func TestRetryStopsWhenTheCallerCancels(t *testing.T) {
	p, _ := backend(t, llmtest.Config{Faults: llmtest.Faults{Rate: 1, Kinds: []llmtest.FaultKind{llmtest.Fault429}, RetryAfter: 30}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := Retry(p, RetryOptions{}).Complete(ctx, ask(1))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the caller's deadline", err)
	}
	// The provider's error is kept too: what was being retried, and why.
	var pe *llm.Error
	if !errors.Is(err, llm.ErrRateLimited) || !errors.As(err, &pe) || pe.Status != 429 {
		t.Errorf("err = %v, want it to wrap the 429 it was waiting out", err)
	}
}

func TestLimitBoundsConcurrency(t *testing.T) {
	p, srv := backend(t, llmtest.Config{Latency: 30 * time.Millisecond})
	l := Limit(p, 3, 0)
	var wg sync.WaitGroup
	for i := range 15 {
		wg.Add(1)
		go func() { defer wg.Done(); complete(t, l, ask(i)) }()
	}
	wg.Wait()
	if got := srv.MaxConcurrent(); got != 3 {
		t.Errorf("max concurrency at the server = %d, want 3", got)
	}
}

// The limit spaces the calls it lets through: four calls at 1,200 rpm
// start over at least three gaps of 50 ms. The starts are stamped as the
// limit lets each call go (OnStart), not as the server receives them,
// which a loaded machine may bunch together or spread.
func TestLimitSpacesRequestsPerMinute(t *testing.T) {
	p, _ := backend(t, llmtest.Config{})
	l := Limit(p, 0, 1200) // one every 50ms
	var mu sync.Mutex
	var starts []time.Time
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := ask(i)
			req.OnStart = func() {
				mu.Lock()
				starts = append(starts, time.Now())
				mu.Unlock()
			}
			complete(t, l, req)
		}()
	}
	wg.Wait()
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	if len(starts) != 4 {
		t.Fatalf("%d starts, want 4", len(starts))
	}
	if span := starts[3].Sub(starts[0]); span < 145*time.Millisecond {
		t.Errorf("four calls started within %s; 1200 rpm spaces them 50ms apart (150ms from first to last)", span)
	}
}

// A call that has to wait for a slot yields first (llm.Yield), so that the
// caller can let another call build its request meanwhile; one let
// through at once yields only as its request leaves (the provider's
// middleware), after its own work.
func TestLimitYieldsWhileWaiting(t *testing.T) {
	p, _ := backend(t, llmtest.Config{Latency: 200 * time.Millisecond})
	l := Limit(p, 1, 0)
	first := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx := llm.WithYield(context.Background(), func() {})
		req := ask(0)
		req.OnStart = func() { close(first) }
		if _, err := l.Complete(ctx, req); err != nil {
			t.Error(err)
		}
	}()
	<-first
	var yieldedWhileFirstRan atomic.Bool
	ctx := llm.WithYield(context.Background(), func() {
		select {
		case <-done:
		default:
			yieldedWhileFirstRan.Store(true)
		}
	})
	if _, err := l.Complete(ctx, ask(1)); err != nil {
		t.Fatal(err)
	}
	if !yieldedWhileFirstRan.Load() {
		t.Error("the call waiting for the only slot did not yield while it waited")
	}
}

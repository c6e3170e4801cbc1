package middleware

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

func TestMeterCountsUsageAndCost(t *testing.T) {
	p, _ := backend(t, llmtest.Config{})
	prices := llm.PriceTable{"gpt-4.1": {Input: 2, CachedInput: 0.5, Output: 8}}
	m := NewMeter(Budget{}, prices, nil)
	w := m.Wrap(p)
	var want llm.Usage
	for i := range 3 {
		want = want.Add(complete(t, w, ask(i)).Usage)
	}
	got := m.Totals()
	if got.Calls != 3 || got.Usage != want {
		t.Errorf("totals = %+v, want 3 calls and usage %+v", got, want)
	}
	wantCost := (float64(want.InputTokens)*2 + float64(want.OutputTokens)*8) / 1e6
	if math.Abs(got.Cost-wantCost) > 1e-12 || got.ByModel["openai:gpt-4.1"].Calls != 3 {
		t.Errorf("cost = %g, want %g; by model %+v", got.Cost, wantCost, got.ByModel)
	}
}

func TestMeterReportsUnpricedModels(t *testing.T) {
	p, _ := backend(t, llmtest.Config{})
	m := NewMeter(Budget{}, llm.PriceTable{}, nil)
	complete(t, m.Wrap(p), ask(1))
	if got := m.Totals(); got.Cost != 0 || len(got.Unpriced) != 1 || got.Unpriced[0] != "openai:gpt-4.1" {
		t.Errorf("totals = %+v; an unknown price must be reported, not guessed", got)
	}
}

func TestBudgetsStopTheRun(t *testing.T) {
	tests := []struct {
		name    string
		budget  Budget
		allowed int
		flag    string
	}{
		{"max calls", Budget{MaxCalls: 2}, 2, "--max-calls 2 reached"},
		{"max tokens", Budget{MaxTokens: 1}, 1, "--max-tokens 1 reached"},
		// A call is refused when its worst case (its input, and 16,384
		// output tokens as it sets no limit: $0.13) would break the cap.
		{"max cost", Budget{MaxCost: 0.1}, 0, "--max-cost $0.10 could be exceeded: the next call could cost up to $0.1312"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, srv := backend(t, llmtest.Config{})
			w := NewMeter(tt.budget, llm.PriceTable{"gpt-4.1": {Input: 2, Output: 8}}, nil).Wrap(p)
			var err error
			n := 0
			for ; n < 5; n++ {
				if _, err = w.Complete(context.Background(), ask(n)); err != nil {
					break
				}
			}
			if n != tt.allowed || !errors.Is(err, llm.ErrBudget) {
				t.Fatalf("%d calls then err %v; want %d calls then a budget error", n, err, tt.allowed)
			}
			if !strings.Contains(err.Error(), tt.flag) || !strings.Contains(err.Error(), "run the same command again") {
				t.Errorf("message %q should name the limit and say how to continue", err)
			}
			if srv.Count() != tt.allowed {
				t.Errorf("the refused call reached the server: %d requests", srv.Count())
			}
		})
	}
}

// A resumed run's earlier spending counts toward its budget, not toward
// what this process reports as spent.
func TestBudgetCoversPriorSpending(t *testing.T) {
	tests := []struct {
		name    string
		budget  Budget
		prior   func(m *Meter)
		allowed int
	}{
		{"calls", Budget{MaxCalls: 3}, func(m *Meter) { m.AddPrior(2, llm.Usage{}, 0) }, 1},
		{"calls spent", Budget{MaxCalls: 2}, func(m *Meter) { m.AddPrior(2, llm.Usage{}, 0) }, 0},
		{"tokens", Budget{MaxTokens: 100}, func(m *Meter) { m.AddPrior(1, llm.Usage{InputTokens: 100}, 0) }, 0},
		{"cost", Budget{MaxCost: 1}, func(m *Meter) { m.AddPrior(1, llm.Usage{}, 1) }, 0},
		{"nothing before", Budget{MaxCalls: 2}, func(m *Meter) {}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := backend(t, llmtest.Config{})
			m := NewMeter(tt.budget, llm.PriceTable{"gpt-4.1": {Input: 2, Output: 8}}, nil)
			tt.prior(m)
			w := m.Wrap(p)
			n := 0
			for ; n < 5; n++ {
				if _, err := w.Complete(context.Background(), ask(n)); err != nil {
					if !errors.Is(err, llm.ErrBudget) {
						t.Fatal(err)
					}
					break
				}
			}
			if n != tt.allowed {
				t.Errorf("%d calls allowed, want %d", n, tt.allowed)
			}
			if got := m.Totals().Calls; got != n {
				t.Errorf("totals count %d calls, want only this process's %d", got, n)
			}
		})
	}
}

func TestBudgetValidate(t *testing.T) {
	for _, b := range []Budget{{MaxCalls: -1}, {MaxTokens: -5}, {MaxCost: -0.01}} {
		if err := b.Validate(); err == nil {
			t.Errorf("%+v should be rejected", b)
		}
	}
	if err := (Budget{MaxCalls: 1, MaxTokens: 2, MaxCost: 3}).Validate(); err != nil {
		t.Error(err)
	}
}

// --max-cost is a hard cap: calls in flight at once never spend more than
// it, because each call reserves its worst case before it is sent, waits
// while others hold the room it needs, and is refused once it cannot fit.
func TestMaxCostIsAHardCap(t *testing.T) {
	// Each answer is 200 bytes, 50 tokens: the whole output limit.
	p, srv := backend(t, llmtest.Config{Latency: 20 * time.Millisecond, Rules: []llmtest.Rule{{Reply: strings.Repeat("x", 200)}}})
	prices := llm.PriceTable{"gpt-4.1": {Input: 2, CachedInput: 0.5, Output: 8}}
	const limit = 0.002
	m := NewMeter(Budget{MaxCost: limit}, prices, nil)
	w := m.Wrap(p)
	worst, ok := m.WorstCost(capped(0))
	if !ok || worst*4 > limit || worst*5 <= limit {
		t.Fatalf("worst case $%g; the test needs four of them to fit the cap of $%g and five not to", worst, limit)
	}
	var wg sync.WaitGroup
	errs := make([]error, 18)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = w.Complete(context.Background(), capped(i))
		}()
	}
	wg.Wait()
	done, refused := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			done++
		case errors.Is(err, llm.ErrBudget):
			refused++
			if !strings.Contains(err.Error(), "--max-cost $0.00 could be exceeded: the next call could cost up to $0.0005") {
				t.Errorf("the refusal should name the cap and what the next call could cost: %v", err)
			}
		default:
			t.Fatal(err)
		}
	}
	got := m.Totals()
	if got.Cost > limit {
		t.Errorf("18 calls at once spent $%.6f under a cap of $%g", got.Cost, limit)
	}
	if done == 0 || refused == 0 || done+refused != 18 || srv.Count() != done {
		t.Errorf("%d calls done, %d refused, %d reached the server; want some of each, and no refused call sent", done, refused, srv.Count())
	}
}

// capped is a call with a small output limit.
func capped(n int) *llm.Request {
	r := ask(n)
	r.MaxTokens = 50
	return r
}

// Under --max-cost a model with no known price is refused before any call,
// as a configuration error that says where to add the price; without a
// cost cap it is only reported.
func TestMaxCostRefusesUnpricedModels(t *testing.T) {
	prices := llm.PriceTable{"gpt-4.1": {Input: 2, Output: 8}}
	m := NewMeter(Budget{MaxCost: 1}, prices, nil)
	if err := m.CheckPrices("openai:gpt-4.1", "openai:gpt-4.1-2025"); err != nil {
		t.Fatalf("priced models refused: %v", err)
	}
	err := m.CheckPrices("openai:gpt-4.1", "ollama-remote:qwen3", "openai:house-model", "openai:house-model")
	var ue *UnpricedError
	if !errors.As(err, &ue) || !errors.Is(err, llm.ErrConfig) || !slices.Equal(ue.Models, []string{"ollama-remote:qwen3", "openai:house-model"}) {
		t.Fatalf("err = %v; want an UnpricedError for the two unpriced models, a configuration error", err)
	}
	for _, want := range []string{"--max-cost", "prices:", "openai:house-model"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	p, srv := backend(t, llmtest.Config{})
	r := ask(1)
	r.Model = "openai:house-model"
	if _, err := m.Wrap(p).Complete(context.Background(), r); !errors.As(err, &ue) {
		t.Errorf("a call on an unpriced model under a cost cap: err %v", err)
	}
	if srv.Count() != 0 {
		t.Error("the refused call reached the server")
	}
	if err := NewMeter(Budget{}, prices, nil).CheckPrices("openai:house-model"); err != nil {
		t.Errorf("without a cost cap, an unpriced model is allowed: %v", err)
	}
}

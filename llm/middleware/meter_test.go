package middleware

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

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
		{"max cost", Budget{MaxCost: 1e-9}, 1, "--max-cost $0.00 reached"},
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

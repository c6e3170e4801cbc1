package middleware

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"github.com/sotlabs/sot/llm"
)

// Budget caps a run. Zero fields mean no cap.
type Budget struct {
	MaxCalls  int     // provider calls
	MaxTokens int     // input plus output tokens
	MaxCost   float64 // US dollars
}

// Validate rejects negative caps.
func (b Budget) Validate() error {
	switch {
	case b.MaxCalls < 0:
		return fmt.Errorf("--max-calls must be 0 (no limit) or more, not %d", b.MaxCalls)
	case b.MaxTokens < 0:
		return fmt.Errorf("--max-tokens must be 0 (no limit) or more, not %d", b.MaxTokens)
	case b.MaxCost < 0:
		return fmt.Errorf("--max-cost must be 0 (no limit) or more, not %g", b.MaxCost)
	}
	return nil
}

// BudgetError says which cap stopped the run. It unwraps to llm.ErrBudget.
type BudgetError struct {
	Flag  string // "--max-calls", "--max-tokens" or "--max-cost"
	Limit string // the cap, formatted
	Spent string // what was spent, formatted
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("budget exhausted: %s %s reached (spent %s); raise the limit and run the same command again to continue (finished calls are replayed, not paid for twice)", e.Flag, e.Limit, e.Spent)
}

// Unwrap returns llm.ErrBudget.
func (e *BudgetError) Unwrap() error { return llm.ErrBudget }

// Totals is what a run has used so far.
type Totals struct {
	Calls    int       `json:"calls"`    // provider calls that returned an answer
	Failures int       `json:"failures"` // provider calls that failed for good
	Usage    llm.Usage `json:"usage"`
	Cost     float64   `json:"cost_usd"`
	// Unpriced lists models with no entry in the price table; their calls are
	// counted in Usage but not in Cost.
	Unpriced []string              `json:"unpriced_models,omitempty"`
	ByModel  map[string]ModelTotal `json:"by_model,omitempty"`
}

// ModelTotal is one model's share of Totals.
type ModelTotal struct {
	Calls int       `json:"calls"`
	Usage llm.Usage `json:"usage"`
	Cost  float64   `json:"cost_usd"`
}

// Meter counts calls, tokens and dollars, and refuses calls once a budget is spent.
type Meter struct {
	budget Budget
	prices llm.PriceTable
	log    *slog.Logger

	mu       sync.Mutex
	inflight int
	t        Totals
	unpriced map[string]bool
	// prior is what the run spent before this process (a resumed run): it
	// counts toward the budget but not toward Totals.
	prior Totals
}

// NewMeter returns a meter with the given caps and prices.
func NewMeter(b Budget, prices llm.PriceTable, log *slog.Logger) *Meter {
	if log == nil {
		log = slog.Default()
	}
	return &Meter{budget: b, prices: prices, log: log, unpriced: map[string]bool{},
		t: Totals{ByModel: map[string]ModelTotal{}}}
}

// Totals returns a snapshot of what has been used.
func (m *Meter) Totals() Totals {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.t
	t.ByModel = make(map[string]ModelTotal, len(m.t.ByModel))
	for k, v := range m.t.ByModel {
		t.ByModel[k] = v
	}
	t.Unpriced = nil
	for k := range m.unpriced {
		t.Unpriced = append(t.Unpriced, k)
	}
	sort.Strings(t.Unpriced)
	return t
}

// Cost prices a usage of the given model, reporting whether a price was known.
func (m *Meter) Cost(model string, u llm.Usage) (float64, bool) {
	p, ok := m.prices.Lookup(model)
	return p.Cost(u), ok
}

// AddPrior records what the run spent before this process, so that the
// budget covers the whole run: a review resumed after a budget stop needs a
// higher limit to go on, as the budget error says. Totals do not include it.
func (m *Meter) AddPrior(calls int, u llm.Usage, cost float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prior.Calls += calls
	m.prior.Usage = m.prior.Usage.Add(u)
	m.prior.Cost += cost
}

// reserve admits a call if no budget is spent.
func (m *Meter) reserve() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.budget
	calls := m.prior.Calls + m.t.Calls + m.t.Failures
	tokens := m.prior.Usage.Total() + m.t.Usage.Total()
	cost := m.prior.Cost + m.t.Cost
	switch {
	case b.MaxCalls > 0 && calls+m.inflight >= b.MaxCalls:
		spent := fmt.Sprintf("%d calls", calls)
		if m.inflight > 0 {
			spent += fmt.Sprintf(", %d more under way", m.inflight)
		}
		return &BudgetError{Flag: "--max-calls", Limit: fmt.Sprint(b.MaxCalls), Spent: spent}
	case b.MaxTokens > 0 && tokens >= b.MaxTokens:
		return &BudgetError{Flag: "--max-tokens", Limit: fmt.Sprint(b.MaxTokens), Spent: fmt.Sprintf("%d tokens", tokens)}
	case b.MaxCost > 0 && cost >= b.MaxCost:
		return &BudgetError{Flag: "--max-cost", Limit: fmt.Sprintf("$%.2f", b.MaxCost), Spent: fmt.Sprintf("$%.4f", cost)}
	}
	m.inflight++
	return nil
}

func (m *Meter) settle(model string, resp *llm.Response, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inflight--
	if err != nil {
		// A call that never reached a provider is not a call.
		if !errors.Is(err, llm.ErrBudget) && !errors.Is(err, llm.ErrUnknownProvider) &&
			!errors.Is(err, llm.ErrMissingKey) && !errors.Is(err, llm.ErrConfig) {
			m.t.Failures++
		}
		return
	}
	cost, ok := m.Cost(model, resp.Usage)
	if !ok && !m.unpriced[model] {
		m.unpriced[model] = true
		m.log.Warn("no price known for model; its cost is not counted (add it under prices: in config)", "model", model)
	}
	m.t.Calls++
	m.t.Usage = m.t.Usage.Add(resp.Usage)
	m.t.Cost += cost
	mt := m.t.ByModel[model]
	mt.Calls++
	mt.Usage = mt.Usage.Add(resp.Usage)
	mt.Cost += cost
	m.t.ByModel[model] = mt
}

// Wrap meters every call made through next.
func (m *Meter) Wrap(next llm.Provider) llm.Provider {
	return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if err := m.reserve(); err != nil {
			return nil, err
		}
		resp, err := next.Complete(ctx, req)
		m.settle(req.Model, resp, err)
		return resp, err
	})
}

package middleware

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
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
	// Next, when set, is why the next call would break the cap: what it
	// could cost at most, next to what the cap leaves.
	Next string
}

func (e *BudgetError) Error() string {
	const more = "raise the limit and run the same command again to continue (finished calls are replayed, not paid for twice)"
	if e.Next != "" {
		return fmt.Sprintf("budget exhausted: %s %s could be exceeded: %s (spent %s); %s", e.Flag, e.Limit, e.Next, e.Spent, more)
	}
	return fmt.Sprintf("budget exhausted: %s %s reached (spent %s); %s", e.Flag, e.Limit, e.Spent, more)
}

// Unwrap returns llm.ErrBudget.
func (e *BudgetError) Unwrap() error { return llm.ErrBudget }

// UnpricedError refuses a run under --max-cost that would use a model
// with no known price: its calls could not be counted against the cap. It
// unwraps to llm.ErrConfig, a usage error: the configuration must name the
// price.
type UnpricedError struct {
	Models []string // the models without a price, sorted
}

func (e *UnpricedError) Error() string {
	example := e.Models[0]
	return fmt.Sprintf("--max-cost needs every model's price, and none is known for %s; add it under prices: in config, in USD per million tokens "+
		"(for example prices: {%q: {input: 2, cached_input: 0.5, output: 8}}), or run without --max-cost", strings.Join(e.Models, ", "), example)
}

// Unwrap returns llm.ErrConfig.
func (e *UnpricedError) Unwrap() error { return llm.ErrConfig }

// defaultOutputReserve is the output a call that sets no MaxTokens is
// assumed to produce at most, when its worst-case cost is reserved.
const defaultOutputReserve = 16384

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

// Meter counts calls, tokens and dollars, and refuses calls once a budget is
// spent. Under a cost cap it is a hard cap: before a call is sent, its
// worst-case cost (every byte of its input a token at the dearest input
// price, plus its whole output limit) is reserved, and a call whose
// reservation does not fit next to what was spent and what calls under way
// have reserved waits for one of them to finish; if it cannot fit even
// once nothing is under way, it is refused. A finished call's reservation
// gives way to what it really cost.
type Meter struct {
	// Note, when set, tells the user once per model that it has no known
	// price; otherwise that is logged at slog.LevelInfo.
	Note func(string)

	budget Budget
	prices llm.PriceTable
	log    *slog.Logger

	mu       sync.Mutex
	inflight int
	reserved float64       // worst-case cost of the calls under way
	released chan struct{} // closed, and replaced, whenever a call finishes
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
		t: Totals{ByModel: map[string]ModelTotal{}}, released: make(chan struct{})}
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

// CheckPrices refuses, before any call, models whose cost a cost cap
// could not count: under --max-cost every model needs a price. Without a
// cost cap it accepts every model.
func (m *Meter) CheckPrices(models ...string) error {
	if m.budget.MaxCost <= 0 {
		return nil
	}
	var missing []string
	for _, model := range models {
		if _, ok := m.prices.Lookup(model); !ok && !slices.Contains(missing, model) {
			missing = append(missing, model)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return &UnpricedError{Models: missing}
}

// WorstCost is the most a request can cost: every byte of its input (no
// text has more tokens than bytes) at the dearest input price, whether
// read, cached or written to a prompt cache, plus its whole output limit.
// ok is false when the model has no known price.
func (m *Meter) WorstCost(req *llm.Request) (cost float64, ok bool) {
	p, ok := m.prices.Lookup(req.Model)
	if !ok {
		return 0, false
	}
	in := len(req.System) + 16
	for _, msg := range req.Messages {
		in += len(msg.Content) + len(msg.ToolCallID) + 16 // and the role and framing of the turn
		for _, c := range msg.ToolCalls {
			in += len(c.ID) + len(c.Name) + len(c.Arguments) + 16
		}
	}
	for _, t := range req.Tools {
		in += len(t.Name) + len(t.Description) + len(t.Parameters) + 16
	}
	if req.Schema != nil {
		in += len(req.Schema.JSON) + len(req.Schema.Name) + 16
	}
	out := req.MaxTokens
	if out <= 0 {
		out = defaultOutputReserve
	}
	inPrice := max(p.Input, p.CacheWrite, p.CachedInput)
	return (float64(in)*inPrice + float64(out)*p.Output) / 1e6, true
}

// reserve admits a call if no budget is spent and, under a cost cap, once
// its worst-case cost fits: it waits while calls under way hold the room
// it needs, and is refused when it cannot fit even once they are done. It
// returns the reservation to release when the call finishes.
func (m *Meter) reserve(ctx context.Context, req *llm.Request) (float64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for {
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
			return 0, &BudgetError{Flag: "--max-calls", Limit: fmt.Sprint(b.MaxCalls), Spent: spent}
		case b.MaxTokens > 0 && tokens >= b.MaxTokens:
			return 0, &BudgetError{Flag: "--max-tokens", Limit: fmt.Sprint(b.MaxTokens), Spent: fmt.Sprintf("%d tokens", tokens)}
		}
		if b.MaxCost <= 0 {
			m.inflight++
			return 0, nil
		}
		worst, ok := m.WorstCost(req)
		if !ok {
			return 0, &UnpricedError{Models: []string{req.Model}}
		}
		if cost+m.reserved+worst <= b.MaxCost {
			m.inflight++
			m.reserved += worst
			return worst, nil
		}
		if m.inflight == 0 {
			next := fmt.Sprintf("the next call could cost up to $%.4f (its input and its output limit of %d tokens), more than the $%.4f left",
				worst, cmp.Or(max(req.MaxTokens, 0), defaultOutputReserve), max(b.MaxCost-cost, 0))
			return 0, &BudgetError{Flag: "--max-cost", Limit: fmt.Sprintf("$%.2f", b.MaxCost), Spent: fmt.Sprintf("$%.4f", cost), Next: next}
		}
		// Calls under way hold the room this one needs: wait for one to
		// finish, and look again.
		released := m.released
		m.mu.Unlock()
		if s := llm.SchedulerOf(ctx); s != nil {
			// The calls under way are coroutines of the same workflow:
			// let them run while this one waits.
			err := s.Await(ctx, func() bool {
				select {
				case <-released:
					return true
				default:
					return false
				}
			})
			m.mu.Lock()
			if err != nil {
				return 0, err
			}
			continue
		}
		llm.Yield(ctx)
		select {
		case <-released:
			m.mu.Lock()
		case <-ctx.Done():
			m.mu.Lock()
			return 0, ctx.Err()
		}
	}
}

func (m *Meter) settle(model string, reserved float64, resp *llm.Response, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inflight--
	m.reserved = max(m.reserved-reserved, 0)
	if m.inflight == 0 {
		m.reserved = 0 // no rounding left over
	}
	close(m.released)
	m.released = make(chan struct{})
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
		if m.Note != nil {
			m.Note(fmt.Sprintf("no price is known for %s, so its calls count no cost (add it under prices: in your config)", model))
			m.log.Debug("no price known for model", "model", model)
		} else {
			// No one to tell the user (sot doctor's stack, a library
			// caller's): a diagnostic, which a command shows with --verbose.
			m.log.Info("no price known for model; its cost is not counted (add it under prices: in config)", "model", model)
		}
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
		reserved, err := m.reserve(ctx, req)
		if err != nil {
			return nil, err
		}
		resp, err := next.Complete(ctx, req)
		m.settle(req.Model, reserved, resp, err)
		return resp, err
	})
}

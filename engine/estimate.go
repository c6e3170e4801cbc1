package engine

import (
	"sort"

	"github.com/sotlabs/sot/llm"
)

// Planned is a call a plan expects to make, for an estimate.
type Planned struct {
	Model        string
	InputTokens  int
	PrefixTokens int // of InputTokens, the prompt prefix calls of one Prefix share
	// Prefix names the shared prefix: of the calls naming the same prefix
	// to one provider, all but the first read it from the provider's cache.
	Prefix string
}

// Estimate is what a plan's calls are expected to send and cost.
type Estimate struct {
	InputTokens  int
	CachedTokens int // of InputTokens, read from a provider's prefix cache
	Cost         float64
	Unpriced     []string // models with no known price, left out of Cost
	// OutputPerCall is the answer length Cost assumes.
	OutputPerCall int
}

// Estimates prices calls at prices, assuming output tokens an answer.
func Estimates(calls []Planned, prices llm.PriceTable, output int) Estimate {
	e := Estimate{OutputPerCall: output}
	type prefixKey struct{ prefix, provider string }
	shared := map[prefixKey]bool{} // prefixes already paid for
	unpriced := map[string]bool{}
	for _, c := range calls {
		cached := 0
		ref, _ := llm.ParseModel(c.Model)
		key := prefixKey{c.Prefix, ref.Provider}
		if shared[key] {
			cached = c.PrefixTokens
		}
		shared[key] = true
		e.InputTokens += c.InputTokens
		e.CachedTokens += cached
		price, ok := prices.Lookup(c.Model)
		if !ok {
			unpriced[c.Model] = true
		}
		e.Cost += price.Cost(llm.Usage{InputTokens: c.InputTokens, CachedInputTokens: cached, OutputTokens: output})
	}
	for m := range unpriced {
		e.Unpriced = append(e.Unpriced, m)
	}
	sort.Strings(e.Unpriced)
	return e
}

package llm

import (
	"sort"
	"strings"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input       float64 `yaml:"input" json:"input"`
	CachedInput float64 `yaml:"cached_input" json:"cached_input"`
	CacheWrite  float64 `yaml:"cache_write,omitempty" json:"cache_write,omitempty"`
	Output      float64 `yaml:"output" json:"output"`
}

// Cost returns the price of one call's usage in dollars.
func (p Price) Cost(u Usage) float64 {
	cached := u.CachedInputTokens
	write := u.CacheWriteTokens
	plain := u.InputTokens - cached - write
	if plain < 0 {
		plain = 0
	}
	writePrice := p.CacheWrite
	if writePrice == 0 {
		writePrice = p.Input
	}
	cachedPrice := p.CachedInput
	if cachedPrice == 0 {
		cachedPrice = p.Input
	}
	return (float64(plain)*p.Input + float64(cached)*cachedPrice +
		float64(write)*writePrice + float64(u.OutputTokens)*p.Output) / 1e6
}

// PriceTable maps a model reference, or a prefix of one, to its price.
// Keys are "provider:model" ("anthropic:claude-sonnet-4-5") or a bare model
// name that applies to every provider; a key also matches dated variants
// ("claude-sonnet-4-5-20250929").
type PriceTable map[string]Price

// DefaultPrices lists public list prices of common models (USD per million
// tokens, as published by the vendors in 2025). Local providers cost nothing.
// Users override or extend the table in config under "prices".
func DefaultPrices() PriceTable {
	return PriceTable{
		"gpt-5":             {Input: 1.25, CachedInput: 0.125, Output: 10},
		"gpt-5-mini":        {Input: 0.25, CachedInput: 0.025, Output: 2},
		"gpt-5-nano":        {Input: 0.05, CachedInput: 0.005, Output: 0.40},
		"gpt-4.1":           {Input: 2, CachedInput: 0.50, Output: 8},
		"gpt-4.1-mini":      {Input: 0.40, CachedInput: 0.10, Output: 1.60},
		"gpt-4.1-nano":      {Input: 0.10, CachedInput: 0.025, Output: 0.40},
		"gpt-4o":            {Input: 2.50, CachedInput: 1.25, Output: 10},
		"gpt-4o-mini":       {Input: 0.15, CachedInput: 0.075, Output: 0.60},
		"o3":                {Input: 2, CachedInput: 0.50, Output: 8},
		"o4-mini":           {Input: 1.10, CachedInput: 0.275, Output: 4.40},
		"claude-opus-4-1":   {Input: 15, CachedInput: 1.50, CacheWrite: 18.75, Output: 75},
		"claude-opus-4-5":   {Input: 5, CachedInput: 0.50, CacheWrite: 6.25, Output: 25},
		"claude-sonnet-4-5": {Input: 3, CachedInput: 0.30, CacheWrite: 3.75, Output: 15},
		"claude-sonnet-4":   {Input: 3, CachedInput: 0.30, CacheWrite: 3.75, Output: 15},
		"claude-haiku-4-5":  {Input: 1, CachedInput: 0.10, CacheWrite: 1.25, Output: 5},
		"claude-3-5-haiku":  {Input: 0.80, CachedInput: 0.08, CacheWrite: 1, Output: 4},
		"ollama:":           {},
		"command:":          {},
	}
}

// Lookup finds the price of a model reference. An exact "provider:model" key
// wins, then the longest key that prefixes the reference or its model name.
func (t PriceTable) Lookup(ref string) (Price, bool) {
	if p, ok := t[ref]; ok {
		return p, true
	}
	name := ref
	if m, err := ParseModel(ref); err == nil {
		name = m.Name
	}
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		if strings.HasPrefix(ref, k) || strings.HasPrefix(name, k) {
			return t[k], true
		}
	}
	return Price{}, false
}

// Merge returns a table with the entries of over replacing those of t.
func (t PriceTable) Merge(over PriceTable) PriceTable {
	out := make(PriceTable, len(t)+len(over))
	for k, v := range t {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// contextWindows are input limits in tokens, by model-name prefix.
var contextWindows = []struct {
	prefix string
	tokens int
}{
	{"gpt-4.1", 1_000_000}, {"gpt-5", 400_000}, {"gpt-4o", 128_000}, {"o3", 200_000}, {"o4", 200_000},
	{"claude", 200_000}, {"gemini", 1_000_000}, {"llama", 128_000}, {"qwen", 32_000}, {"mistral", 32_000},
}

// DefaultContextWindow is assumed for models sot does not know.
const DefaultContextWindow = 128_000

// ContextWindow returns the input limit of a model in tokens: the known
// limit of its family, or DefaultContextWindow.
func ContextWindow(ref string) int {
	name := ref
	if m, err := ParseModel(ref); err == nil {
		name = m.Name
	}
	name = strings.ToLower(name)
	for _, w := range contextWindows {
		if strings.HasPrefix(name, w.prefix) {
			return w.tokens
		}
	}
	return DefaultContextWindow
}

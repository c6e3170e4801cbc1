package debatecmd

import (
	"testing"

	"github.com/sotlabs/sot/config"
)

// A passage of sot debate --graph is not begun once what the passages
// before it spent has used up one of the command's budgets.
func TestBudgetUsedUp(t *testing.T) {
	tests := []struct {
		name         string
		total, spent config.Budget
		out          string
	}{
		{"no budget", config.Budget{}, config.Budget{MaxCalls: 50, MaxCost: 3}, ""},
		{"some left", config.Budget{MaxCalls: 40, MaxTokens: 1000, MaxCost: 1}, config.Budget{MaxCalls: 18, MaxTokens: 400, MaxCost: 0.25}, ""},
		{"calls used up", config.Budget{MaxCalls: 18}, config.Budget{MaxCalls: 18}, "call budget (--max-calls 18)"},
		{"tokens used up", config.Budget{MaxTokens: 100}, config.Budget{MaxTokens: 120}, "token budget (--max-tokens 100)"},
		{"cost used up", config.Budget{MaxCalls: 99, MaxCost: 0.5}, config.Budget{MaxCalls: 3, MaxCost: 0.5}, "cost budget (--max-cost 0.5)"},
	}
	for _, tt := range tests {
		if out := budgetUsedUp(tt.total, tt.spent); out != tt.out {
			t.Errorf("%s: budgetUsedUp = %q, want %q", tt.name, out, tt.out)
		}
	}
}

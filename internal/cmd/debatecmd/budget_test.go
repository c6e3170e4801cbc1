package debatecmd

import (
	"testing"

	"github.com/sotlabs/sot/config"
)

// Each passage of sot debate --graph gets what the passages before it left
// of the command's budgets; one that is used up stops the command.
func TestBudgetLeft(t *testing.T) {
	tests := []struct {
		name         string
		total, spent config.Budget
		left         config.Budget
		out          string
	}{
		{"no budget", config.Budget{}, config.Budget{MaxCalls: 50, MaxCost: 3}, config.Budget{}, ""},
		{"some left", config.Budget{MaxCalls: 40, MaxTokens: 1000, MaxCost: 1}, config.Budget{MaxCalls: 18, MaxTokens: 400, MaxCost: 0.25},
			config.Budget{MaxCalls: 22, MaxTokens: 600, MaxCost: 0.75}, ""},
		{"calls used up", config.Budget{MaxCalls: 18}, config.Budget{MaxCalls: 18}, config.Budget{}, "call budget (--max-calls 18)"},
		{"tokens used up", config.Budget{MaxTokens: 100}, config.Budget{MaxTokens: 120}, config.Budget{}, "token budget (--max-tokens 100)"},
		{"cost used up", config.Budget{MaxCalls: 99, MaxCost: 0.5}, config.Budget{MaxCalls: 3, MaxCost: 0.5}, config.Budget{}, "cost budget (--max-cost 0.5)"},
	}
	for _, tt := range tests {
		left, out := budgetLeft(tt.total, tt.spent)
		if out != tt.out || (out == "" && left != tt.left) {
			t.Errorf("%s: budgetLeft = %+v %q, want %+v %q", tt.name, left, out, tt.left, tt.out)
		}
	}
}

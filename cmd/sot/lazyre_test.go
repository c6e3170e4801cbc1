package main

import (
	"testing"

	"github.com/sotlabs/sot/internal/lazyre"
)

// Every package's expressions are compiled on their first use
// (internal/lazyre), not as sot starts; this binary links every package,
// so a mistyped expression fails here instead of in the one command that
// first uses it.
func TestEveryExpressionCompiles(t *testing.T) {
	n, expr, err := lazyre.CompileAll()
	if n < 50 {
		t.Errorf("%d expressions registered; the packages of sot declare more than 50", n)
	}
	if err != nil {
		t.Errorf("%s: %v", expr, err)
	}
}

package review

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/tokens"
	"github.com/sotlabs/sot/llm/llmtest"
)

// The fence's gutter costs about a token a line beyond the material's own
// count. Material of short lines, where that matters most, is split so that
// every prompt fits the budget once fenced, whether the budget leaves room
// for nearly all of the material or for a small part of it.
func TestChunksFitTheBudgetOnceFenced(t *testing.T) {
	repo := benchRepo(t, 1, 10)
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "x%d\n", i%7)
	}
	if err := os.WriteFile(filepath.Join(repo, "short.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(llmtest.Config{})
	defer srv.Close()
	o := benchOptions(t, repo, srv, "openai:gpt-4.1")
	o.Context.Specialists, o.Context.Perspectives = "security", "none"
	whole, err := Prepare(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	full, raw := tokens.Count(whole.Tasks[0].Prompt().System), whole.Material.Tokens()
	tests := []struct {
		name   string
		budget int
	}{
		{"room for the raw material, not the fenced", full - (full-raw)/20},
		{"room for seven eighths", full - raw/8},
		{"room for half", full - raw/2},
		{"room for a tenth", full - raw*9/10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o.MaxPromptTokens = tt.budget
			p, err := Prepare(context.Background(), o)
			if err != nil {
				t.Fatalf("budget %d: %v", tt.budget, err)
			}
			if len(p.Chunks) < 2 {
				t.Errorf("budget %d: %d chunk(s); want the material split", tt.budget, len(p.Chunks))
			}
			for _, task := range p.Tasks {
				if n := tokens.Count(task.Prompt().System); n > tt.budget {
					t.Errorf("%s: a prompt of %d tokens over the budget of %d", task.ID, n, tt.budget)
				}
			}
		})
	}
}

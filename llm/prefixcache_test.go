package llm

import "testing"

// Each provider's prompt cache floor, as its documentation gives it: a
// call waits for another to write a prefix only where a cache could
// serve it.
func TestMinCachePrefix(t *testing.T) {
	for _, tt := range []struct {
		model string
		want  int
	}{
		{"openai:gpt-4.1", 1024},
		{"openai:o3-mini", 1024},
		{"anthropic:claude-sonnet-4-5", 1024},
		{"anthropic:claude-opus-4-1-20250805", 1024},
		{"anthropic:claude-3-7-sonnet-latest", 1024},
		{"anthropic:claude-sonnet-4-6", 2048},
		{"anthropic:claude-3-5-haiku-latest", 2048},
		{"anthropic:claude-3-haiku-20240307", 2048},
		{"anthropic:claude-haiku-4-5", 4096},
		{"anthropic:Claude-Opus-4-5-20251101", 4096},
		{"command:llm -m gpt-4.1", 0},
		{"ollama:qwen2.5:7b", 0},
		{"openrouter:some/model", 1024},
		{"gpt-4.1", 0},
	} {
		if got := MinCachePrefix(tt.model); got != tt.want {
			t.Errorf("MinCachePrefix(%q) = %d, want %d", tt.model, got, tt.want)
		}
	}
}

package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm"
)

// TestModelWithoutName: a model reference that names a provider and no
// model says so and suggests a model of that provider, never the provider
// twice ("openai:openai:").
func TestModelWithoutName(t *testing.T) {
	providers := "providers:\n  openrouter:\n    type: openai\n    base_url: https://openrouter.ai/api/v1\n"
	for _, tt := range []struct {
		model string
		want  string
		is    error
	}{
		{"openai:", `default_model (from env SOT_MODEL): model "openai:" has no model name after "openai:"; write it as openai:MODEL, for example openai:gpt-4.1`, llm.ErrBadModelRef},
		{"openai: ", `model "openai:" has no model name after "openai:"; write it as openai:MODEL, for example openai:gpt-4.1`, llm.ErrBadModelRef},
		{"anthropic:", `write it as anthropic:MODEL, for example anthropic:claude-sonnet-4-5`, llm.ErrBadModelRef},
		{"openrouter:", `model "openrouter:" has no model name after "openrouter:"; write it as openrouter:MODEL`, llm.ErrBadModelRef},
		{":gpt-4.1", `model ":gpt-4.1" names no provider before the colon: write it as PROVIDER:gpt-4.1`, llm.ErrBadModelRef},
		{"  :  ", `model ":" names neither a provider nor a model: write it as provider:model, for example openai:gpt-4.1`, llm.ErrBadModelRef},
		{"openai", `model "openai" names the provider openai but no model: write it as openai:MODEL, for example openai:gpt-4.1`, llm.ErrUnknownProvider},
		{"Anthropic", `model "Anthropic" names the provider anthropic but no model: write it as anthropic:MODEL, for example anthropic:claude-sonnet-4-5`, llm.ErrUnknownProvider},
		{"openrouter", `model "openrouter" names the provider openrouter but no model: write it as openrouter:MODEL, for example openrouter:gpt-4.1`, llm.ErrUnknownProvider},
	} {
		t.Run(tt.model, func(t *testing.T) {
			_, _, err := fixture{user: providers, env: map[string]string{"SOT_MODEL": tt.model}}.load(t)
			if err == nil {
				t.Fatalf("SOT_MODEL=%q loaded", tt.model)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("SOT_MODEL=%q:\n got %v\nwant it to say %s", tt.model, err, tt.want)
			}
			for _, p := range []string{"openai", "anthropic", "openrouter"} {
				if strings.Contains(err.Error(), p+":"+p) {
					t.Errorf("SOT_MODEL=%q: the error suggests %s:%s: %v", tt.model, p, p, err)
				}
			}
			if strings.Contains(err.Error(), "::") {
				t.Errorf("SOT_MODEL=%q: the error suggests an empty part: %v", tt.model, err)
			}

			// ResolveModel, as the commands call it, says the same.
			cfg, _, err := fixture{user: providers}.load(t)
			if err != nil {
				t.Fatal(err)
			}
			_, err = cfg.ResolveModel(tt.model)
			if want := strings.TrimPrefix(tt.want, "default_model (from env SOT_MODEL): "); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("ResolveModel(%q) = %v, want %s", tt.model, err, tt.want)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("ResolveModel(%q) = %v, want it to be %v", tt.model, err, tt.is)
			}
		})
	}
}

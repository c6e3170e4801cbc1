package llm

import (
	"errors"
	"strings"
	"testing"
)

func TestParseModel(t *testing.T) {
	for _, tt := range []struct {
		in, want string // want: the reference, or the error
		bad      bool
	}{
		{"openai:gpt-4.1", "openai:gpt-4.1", false},
		{" OpenAI : gpt-4.1 ", "openai:gpt-4.1", false},
		{"ollama:qwen2.5:7b", "ollama:qwen2.5:7b", false},
		{"", "empty model reference: name one as provider:model, for example openai:gpt-4.1", true},
		{"openai:", `model "openai:" has no model name after "openai:"; write it as openai:MODEL, for example openai:gpt-4.1`, true},
		{"openai: ", `model "openai:" has no model name after "openai:"; write it as openai:MODEL, for example openai:gpt-4.1`, true},
		{"OpenAI:", `model "OpenAI:" has no model name after "openai:"; write it as openai:MODEL, for example openai:gpt-4.1`, true},
		{"anthropic:", `model "anthropic:" has no model name after "anthropic:"; write it as anthropic:MODEL, for example anthropic:claude-sonnet-4-5`, true},
		{"ollama:  ", `model "ollama:" has no model name after "ollama:"; write it as ollama:MODEL, for example ollama:qwen2.5:7b`, true},
		{"openrouter:", `model "openrouter:" has no model name after "openrouter:"; write it as openrouter:MODEL`, true},
		{":gpt-4.1", `model ":gpt-4.1" names no provider before the colon: write it as PROVIDER:gpt-4.1, PROVIDER being openai, anthropic, ollama, command or a provider of your config`, true},
		{"  :  ", `model ":" names neither a provider nor a model: write it as provider:model, for example openai:gpt-4.1`, true},
		{":", `model ":" names neither a provider nor a model: write it as provider:model, for example openai:gpt-4.1`, true},
		{"gpt4", `model "gpt4": write it as provider:model, for example openai:gpt4 or anthropic:claude-sonnet-4-5`, true},
	} {
		t.Run(tt.in, func(t *testing.T) {
			ref, err := ParseModel(tt.in)
			if !tt.bad {
				if err != nil || ref.String() != tt.want {
					t.Fatalf("ParseModel(%q) = %v, %v; want %s", tt.in, ref, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseModel(%q) = %v, want an error", tt.in, ref)
			}
			if err.Error() != tt.want {
				t.Errorf("ParseModel(%q) error\n got %s\nwant %s", tt.in, err, tt.want)
			}
			if !errors.Is(err, ErrBadModelRef) {
				t.Errorf("the error is not ErrBadModelRef: %v", err)
			}
			// The suggestion never repeats the provider: no "openai:openai:",
			// no "openai::".
			for _, p := range []string{ProviderOpenAI, ProviderAnthropic, ProviderOllama, "openrouter"} {
				if strings.Contains(err.Error(), p+":"+p+":") {
					t.Errorf("the error suggests %s:%s: %s", p, p, err)
				}
			}
			if strings.Contains(err.Error(), "::") {
				t.Errorf("the error suggests an empty part: %s", err)
			}
		})
	}
}

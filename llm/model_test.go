package llm

import (
	"encoding/json"
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

func TestSupportsTools(t *testing.T) {
	for ref, want := range map[string]bool{
		"openai:gpt-4.1":              true,
		"anthropic:claude-sonnet-4-5": true,
		"ollama:qwen2.5:7b":           true,
		"openrouter:some/model":       true, // a name of the user's own: an OpenAI-compatible server
		"command:llm -m x":            false,
		"Command:gpt-4o":              false,
		"gpt-4.1":                     false, // no provider: not a reference
		"":                            false,
	} {
		if got := SupportsTools(ref); got != want {
			t.Errorf("SupportsTools(%q) = %v, want %v", ref, got, want)
		}
	}
}

func TestCheckTools(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	ok := []Tool{{Name: "read_file", Parameters: schema}, {Name: "git-log"}, {Name: strings.Repeat("x", 64)}}
	if err := CheckTools(ok); err != nil {
		t.Errorf("good tools: %v", err)
	}
	for name, tools := range map[string][]Tool{
		"empty name":         {{Name: ""}},
		"space in the name":  {{Name: "read file"}},
		"name too long":      {{Name: strings.Repeat("x", 65)}},
		"not ASCII":          {{Name: "lire_le_fichier_é"}},
		"two of one name":    {{Name: "grep"}, {Name: "grep"}},
		"parameters a list":  {{Name: "t", Parameters: []byte(`[]`)}},
		"parameters no JSON": {{Name: "t", Parameters: []byte(`{`)}},
	} {
		if err := CheckTools(tools); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestToolArguments(t *testing.T) {
	for in, want := range map[string]string{
		`{"path":"x"}`:  `{"path":"x"}`,
		" ":             `{}`,
		"":              `{}`,
		`{"path":"READ`: `"{\"path\":\"READ"`,
	} {
		got := ToolArguments(in)
		if string(got) != want || !json.Valid(got) {
			t.Errorf("ToolArguments(%q) = %s, want %s", in, got, want)
		}
	}
}

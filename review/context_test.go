package review

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/persona"
)

func TestContextValidate(t *testing.T) {
	tests := []struct {
		name  string
		c     Context
		field string
	}{
		{"defaults are valid", Context{}, ""},
		{"bad type", Context{Type: "poem"}, "type"},
		{"bad interaction mode", Context{InteractionMode: "chat"}, "interaction_mode"},
		{"bad interactive", Context{Interactive: "maybe"}, "interactive"},
		{"framing without freeform", Context{Type: "diff", Framing: "x"}, "framing"},
		{"framing with freeform", Context{Type: "freeform", Framing: "x"}, ""},
		{"negative cap", Context{PerspectiveCap: -1}, "perspective_cap"},
		{"bad specialists", Context{Specialists: "adaptive:zero"}, "specialists"},
		{"bad perspectives", Context{Perspectives: "premortem,../x"}, "perspectives"},
		{"bad model pin", Context{SpecialistModels: "=openai:gpt-4.1"}, "specialist_models"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.c
			c.Defaults()
			err := c.Validate()
			var fe *FieldError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field):
				t.Fatalf("err = %v, want a FieldError naming %s", err, tt.field)
			}
		})
	}
}

func TestParseModels(t *testing.T) {
	cfg := config.Defaults()
	cfg.Providers["openrouter"] = config.Provider{Type: "openai"}
	tests := []struct {
		in   string
		cfg  *config.Config
		want ModelSpec
	}{
		{"none", nil, ModelSpec{Pinned: map[string]string{}}},
		{"openai:gpt-4.1, anthropic:claude-sonnet-4-5", nil, ModelSpec{Pool: []string{"openai:gpt-4.1", "anthropic:claude-sonnet-4-5"}, Pinned: map[string]string{}}},
		{"security=anthropic:claude-sonnet-4-5", nil, ModelSpec{Pinned: map[string]string{"security": "anthropic:claude-sonnet-4-5"}}},
		{"security:anthropic:claude-sonnet-4-5, fast", nil, ModelSpec{Pool: []string{"fast"}, Pinned: map[string]string{"security": "anthropic:claude-sonnet-4-5"}}},
		{"ollama:qwen2.5:7b", nil, ModelSpec{Pool: []string{"ollama:qwen2.5:7b"}, Pinned: map[string]string{}}},
		// PAW's syntax: a name that is no provider, then a bare model.
		{"security:claude-opus-4.6, architecture:claude-opus-4.6, assumptions:gemini-3-pro", nil, ModelSpec{Pinned: map[string]string{
			"security": "claude-opus-4.6", "architecture": "claude-opus-4.6", "assumptions": "gemini-3-pro"}}},
		{"Testing:gpt-5.2, gpt-4.1", nil, ModelSpec{Pool: []string{"gpt-4.1"}, Pinned: map[string]string{"testing": "gpt-5.2"}}},
		// A configured provider is a provider, not a specialist.
		{"openrouter:meta/llama-3, security:o3", &cfg, ModelSpec{Pool: []string{"openrouter:meta/llama-3"}, Pinned: map[string]string{"security": "o3"}}},
		{"openrouter:meta/llama-3", nil, ModelSpec{Pinned: map[string]string{"openrouter": "meta/llama-3"}}},
	}
	for _, tt := range tests {
		got, err := ParseModelsFor(tt.in, tt.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(ModelSpec{})); diff != "" {
			t.Errorf("ParseModelsFor(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestAssignModelsPAWPins: PAW's "specialist:model" pins go to their
// specialists (bare names resolved by family), a pin for a specialist not
// taking part warns, and a custom provider's model stays in the pool.
func TestAssignModelsPAWPins(t *testing.T) {
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	var specs []*persona.Persona
	for _, id := range []string{"security", "architecture", "testing", "performance"} {
		p, _ := lib.Get(persona.Specialist, id)
		specs = append(specs, p)
	}
	cfg := config.Defaults()
	cfg.Providers["openrouter"] = config.Provider{Type: "openai"}
	ms, err := ParseModels("security:claude-opus-4.6, architecture:claude-opus-4.6, testing:gpt-5.2, maintainability:gpt-5.2, openrouter:meta/llama-3")
	if err != nil {
		t.Fatal(err)
	}
	got, warnings := assignModels(specs, ms, "openai:gpt-4.1", &cfg)
	want := map[string]string{
		"security":     "anthropic:claude-opus-4.6",
		"architecture": "anthropic:claude-opus-4.6",
		"testing":      "openai:gpt-5.2",
		"performance":  "openrouter:meta/llama-3", // the pool, read with the configured providers
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("assignment (-want +got):\n%s", diff)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `pins "maintainability", which is not taking part`) {
		t.Errorf("warnings = %q", warnings)
	}
}

func TestCheckModels(t *testing.T) {
	cfg := config.Defaults()
	cfg.Aliases = map[string]string{"gemini-3-pro": "openai:gemini-3-pro"}
	tests := []struct {
		name, list, want string
	}{
		{"resolvable", "security:claude-opus-4.6, gpt-5.2, o3, gemini-3-pro, anthropic:claude-sonnet-4-5", ""},
		{"none", "none", ""},
		{"one bare name", "assumptions:gemini-3-pro-preview",
			`--specialist-models: model "gemini-3-pro-preview" names no provider, and its name is not one sot can place: write each as provider:model (for example openai:gemini-3-pro-preview), or add to your config: aliases: {gemini-3-pro-preview: <provider>:gemini-3-pro-preview}`},
		{"several, once each", "a:llama-4, b:mistral-large, c:llama-4",
			`--specialist-models: models "llama-4", "mistral-large" name no provider, and their names are not ones sot can place: write each as provider:model (for example openai:llama-4), or add to your config: aliases: {llama-4: <provider>:llama-4, mistral-large: <provider>:mistral-large}`},
		{"a provider and no model", "security=openai",
			`--specialist-models: model "openai" names the provider openai but no model: write it as openai:MODEL, for example openai:gpt-4.1`},
		// An unknown provider falls back at plan time, with a warning.
		{"unknown provider", "security=vertex:gemini", ""},
		{"bad pin", "=openai:gpt-4.1", `--specialist-models: "=openai:gpt-4.1": write a pinned pair`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSpecialistModels(tt.list, "--specialist-models", &cfg)
			var fe *FieldError
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (!errors.As(err, &fe) || !strings.HasPrefix(err.Error(), tt.want)):
				t.Fatalf("err = %v\nwant a *FieldError starting %q", err, tt.want)
			}
		})
	}
	if err := CheckModelNames([]string{"gpt-5.2", "claude-opus-4.6"}, "--models", &cfg); err != nil {
		t.Errorf("plain models: %v", err)
	}
	if err := CheckModelNames([]string{"gpt-5.2", "gemini-3-pro-preview"}, "--models", &cfg); err == nil || !strings.HasPrefix(err.Error(), `--models: model "gemini-3-pro-preview" names no provider`) {
		t.Errorf("plain models: %v", err)
	}
	if err := CheckModelNames([]string{"vertex:gemini", "gpt-5.2"}, "--models", &cfg); err == nil || err.Error() != `--models: model "vertex:gemini": unknown provider "vertex" in model "vertex:gemini": use one of anthropic, command, ollama, openai, or configure it under providers: with a type` {
		t.Errorf("multi-model's models must all resolve: %v", err)
	}
}

func TestAssignModelsPrecedence(t *testing.T) {
	lib, err := persona.Discover(persona.Dirs{})
	if err != nil {
		t.Fatal(err)
	}
	var specs []*persona.Persona
	for _, id := range []string{"testing", "security", "architecture", "performance"} {
		p, _ := lib.Get(persona.Specialist, id)
		specs = append(specs, p)
	}
	own := *specs[3]
	own.Meta.Model = "anthropic:claude-haiku-4-5"
	specs[3] = &own
	cfg := benchConfig()
	ms, _ := ParseModels("security=anthropic:claude-sonnet-4-5, openai:gpt-4.1-mini, openai:gpt-4.1-nano, testing=vertex:x")
	got, warnings := assignModels(specs, ms, "openai:gpt-4.1", cfg)
	want := map[string]string{
		"performance":  "anthropic:claude-haiku-4-5",  // frontmatter
		"security":     "anthropic:claude-sonnet-4-5", // pinned
		"architecture": "openai:gpt-4.1-mini",         // pool, round-robin by name
		"testing":      "openai:gpt-4.1",              // pinned to an unknown provider: default
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("assignment (-want +got):\n%s", diff)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `"vertex:x" for testing is unavailable`) {
		t.Errorf("warnings = %q", warnings)
	}
}

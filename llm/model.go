package llm

import (
	"errors"
	"fmt"
	"strings"
)

// Providers that sot knows how to talk to.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderOllama    = "ollama"
	ProviderCommand   = "command"
)

// ModelRef is a parsed model reference.
type ModelRef struct {
	Provider string // "openai", "anthropic", "ollama", "command" or a configured name
	Name     string // the provider's own model name
}

func (m ModelRef) String() string { return m.Provider + ":" + m.Name }

// ParseModel splits "provider:model". The provider is lower-cased; the model
// name is kept as written and may itself contain colons ("ollama:qwen2.5:7b").
// A reference without a colon, or with nothing before or after it, is an
// error that is ErrBadModelRef and says how to write it; its example never
// repeats the provider ("openai:" suggests openai:gpt-4.1, not
// openai:openai:).
func ParseModel(ref string) (ModelRef, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ModelRef{}, refError("empty model reference: name one as provider:model, for example openai:gpt-4.1")
	}
	p, name, ok := strings.Cut(ref, ":")
	p, name = strings.ToLower(strings.TrimSpace(p)), strings.TrimSpace(name)
	switch {
	case !ok:
		return ModelRef{}, refError(fmt.Sprintf("model %q: write it as provider:model, for example openai:%s or anthropic:claude-sonnet-4-5", ref, ref))
	case p == "" && name == "":
		return ModelRef{}, refError(fmt.Sprintf("model %q names neither a provider nor a model: write it as provider:model, for example openai:gpt-4.1", ref))
	case p == "":
		return ModelRef{}, refError(fmt.Sprintf("model %q names no provider before the colon: write it as PROVIDER:%s, PROVIDER being %s or a provider of your config", ref, name, strings.Join(builtinProviders, ", ")))
	case name == "":
		return ModelRef{}, refError(missingModel(ref, p))
	}
	return ModelRef{Provider: p, Name: name}, nil
}

// builtinProviders are the providers every configuration has, as named in
// messages.
var builtinProviders = []string{ProviderOpenAI, ProviderAnthropic, ProviderOllama, ProviderCommand}

// missingModel says how to write a model reference, ref as it was written,
// that names a provider but no model after it:
//
//	model "openai:" has no model name after "openai:"; write it as openai:MODEL, for example openai:gpt-4.1
func missingModel(ref, provider string) string {
	msg := fmt.Sprintf("model %q has no model name after %q; write it as %s:MODEL", ref, provider+":", provider)
	if ex := ExampleModel(provider); ex != "" {
		msg += fmt.Sprintf(", for example %s:%s", provider, ex)
	}
	return msg
}

// ExampleModel is a model of the given provider type (openai, anthropic,
// ollama, command) to show in a message, or "" for a type sot has no
// example of.
func ExampleModel(typ string) string {
	switch typ {
	case ProviderOpenAI:
		return "gpt-4.1"
	case ProviderAnthropic:
		return "claude-sonnet-4-5"
	case ProviderOllama:
		return "qwen2.5:7b"
	}
	return ""
}

// ErrBadModelRef marks a model reference that is not provider:model.
var ErrBadModelRef = errors.New("not a provider:model reference")

// refError is a model reference ParseModel cannot read; it is
// ErrBadModelRef.
type refError string

func (e refError) Error() string        { return string(e) }
func (e refError) Is(target error) bool { return target == ErrBadModelRef }

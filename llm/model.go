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
func ParseModel(ref string) (ModelRef, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ModelRef{}, refError("empty model reference: name one as provider:model, for example openai:gpt-4.1")
	}
	p, name, ok := strings.Cut(ref, ":")
	if !ok || p == "" || strings.TrimSpace(name) == "" {
		return ModelRef{}, refError(fmt.Sprintf("model %q: write it as provider:model, for example openai:%s or anthropic:claude-sonnet-4-5", ref, ref))
	}
	return ModelRef{Provider: strings.ToLower(strings.TrimSpace(p)), Name: strings.TrimSpace(name)}, nil
}

// ErrBadModelRef marks a model reference that is not provider:model.
var ErrBadModelRef = errors.New("not a provider:model reference")

// refError is a model reference ParseModel cannot read; it is
// ErrBadModelRef.
type refError string

func (e refError) Error() string        { return string(e) }
func (e refError) Is(target error) bool { return target == ErrBadModelRef }

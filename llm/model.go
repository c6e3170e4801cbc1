package llm

import (
	"encoding/json"
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

// SupportsTools reports whether the provider of a model reference can
// offer the model tools (Request.Tools): the command provider runs a
// program that has no tool calling, and refuses such a request with
// ErrBadRequest; openai, anthropic, ollama and the OpenAI-compatible
// servers of the user's own naming speak the APIs' tool calling. A name
// of the user's own is judged as MinCachePrefix judges it, as an
// OpenAI-compatible server; a caller with the configuration resolves it
// to its type first (config's ProviderType) and asks about
// "TYPE:model". Whether the model behind an endpoint takes tools is
// known only when it is called: one that rejects them fails with
// ErrBadRequest (the endpoint's 400), as any request it cannot take.
func SupportsTools(ref string) bool {
	m, err := ParseModel(ref)
	return err == nil && m.Provider != ProviderCommand
}

// CheckTools says what is wrong with a request's tools, or returns nil:
// a name that is not 1 to 64 letters, digits, _ and - (what both APIs
// accept), two tools of one name, or parameters that are not a JSON
// object (a JSON Schema of the arguments). Empty parameters are allowed:
// the tool takes no arguments.
func CheckTools(tools []Tool) error {
	for i, t := range tools {
		if !toolNameOK(t.Name) {
			return fmt.Errorf("tool %d: the name %q is not 1 to 64 letters, digits, _ and -", i+1, t.Name)
		}
		for _, u := range tools[:i] {
			if u.Name == t.Name {
				return fmt.Errorf("two tools are named %q", t.Name)
			}
		}
		if len(t.Parameters) > 0 {
			var schema map[string]json.RawMessage
			if json.Unmarshal(t.Parameters, &schema) != nil || schema == nil {
				return fmt.Errorf("tool %q: its parameters are not a JSON Schema object", t.Name)
			}
		}
	}
	return nil
}

func toolNameOK(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return true
}

// ToolArguments is the arguments text a model wrote for a tool call as
// ToolCall.Arguments holds it: the text itself when it is JSON, {} when
// it is empty, and otherwise (arguments cut off at the output limit, say)
// the text as a JSON string. A Response must marshal (the journal and the
// cache store it), so the text that does not parse travels as a string,
// and the tool, given a string where it wants an object, says so to the
// model.
func ToolArguments(text string) json.RawMessage {
	if strings.TrimSpace(text) == "" {
		return json.RawMessage(`{}`)
	}
	if json.Valid([]byte(text)) {
		return json.RawMessage(text)
	}
	b, _ := json.Marshal(text)
	return b
}

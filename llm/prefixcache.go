package llm

import "strings"

// MinCachePrefix is the shortest prompt prefix, in tokens, that the
// provider of model (a "provider:name" reference) keeps in its prompt
// cache; 0 means it keeps none, so no call gains by waiting for another
// to have written a prefix.
//
// OpenAI caches prefixes of 1,024 tokens and more. Anthropic's floor
// depends on the model: 1,024 tokens for most Sonnet and Opus models,
// 2,048 for Sonnet 4.6 and the Claude 3 Haiku models, 4,096 for Haiku
// 4.5 and Opus 4.5 and 4.6. The command provider runs a program and
// ollama keeps no cache that is billed apart, so both are 0. A provider
// of the user's own naming is taken for an OpenAI-compatible server, the
// kind most of them are.
func MinCachePrefix(model string) int {
	ref, err := ParseModel(model)
	if err != nil {
		return 0
	}
	switch ref.Provider {
	case ProviderCommand, ProviderOllama:
		return 0
	case ProviderAnthropic:
		return anthropicMinPrefix(strings.ToLower(ref.Name))
	}
	return 1024
}

// anthropicMinPrefix is the cache floor of an Anthropic model by the
// family and version its name carries (claude-haiku-4-5,
// claude-3-5-haiku-latest, claude-opus-4-5-20251101). A model it does not
// know gets the 1,024 tokens of most.
func anthropicMinPrefix(name string) int {
	has := func(parts ...string) bool {
		for _, p := range parts {
			if strings.Contains(name, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("haiku-4", "opus-4-5", "opus-4-6"):
		return 4096
	case has("haiku", "sonnet-4-6"):
		return 2048
	}
	return 1024
}

package llm

import (
	"encoding/json"
	"strings"
)

// ExtractJSON finds the JSON value in a model's answer, tolerating a Markdown
// code fence or a sentence around it. It returns nil when there is none.
func ExtractJSON(text string) json.RawMessage {
	t := strings.TrimSpace(text)
	if i := strings.Index(t, "```"); i >= 0 {
		rest := t[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		}
		if j := strings.LastIndex(rest, "```"); j >= 0 {
			rest = rest[:j]
		}
		t = strings.TrimSpace(rest)
	}
	if json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	start := strings.IndexAny(t, "{[")
	if start < 0 {
		return nil
	}
	closer := map[byte]byte{'{': '}', '[': ']'}[t[start]]
	end := strings.LastIndexByte(t, closer)
	if end <= start {
		return nil
	}
	if c := t[start : end+1]; json.Valid([]byte(c)) {
		return json.RawMessage(c)
	}
	return nil
}

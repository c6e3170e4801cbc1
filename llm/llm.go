// Package llm is the one place in sot that describes a call to a language model.
//
// It defines a provider-neutral Request and Response, the Provider interface that
// every backend (openai, anthropic, command) implements, the sentinel errors that
// callers branch on, and model references of the form "provider:model".
// Cross-cutting behaviour (retries, limits, budgets, schema checks, caching and
// the run journal) lives in llm/middleware; each backend lives in its own
// subpackage; llm/llmtest is a fake model server for tests and benchmarks.
package llm

import (
	"context"
	"encoding/json"
	"time"
)

// Role is who speaks a message.
type Role string

// Message roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries the result of one tool call back to the model; its
	// ToolCallID names the call.
	RoleTool Role = "tool"
)

// Message is one turn of the conversation after the system prompt.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// ToolCalls are the tools an assistant message asked to call.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a RoleTool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// Tool describes a tool a model may call: a name (letters, digits, _ and
// -), one sentence on what it does, and the JSON Schema of its arguments,
// an object.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ToolCall is a model's request to call a tool.
type ToolCall struct {
	// ID is the provider's id for the call; the RoleTool message that
	// answers it carries the same id.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON value the model wrote as the tool's input;
	// text that does not parse arrives as a JSON string (ToolArguments).
	Arguments json.RawMessage `json:"arguments"`
}

// Schema asks for structured output: the answer must be one JSON value that
// validates against JSON.
type Schema struct {
	// Name identifies the schema to the provider (letters, digits, _ and -).
	Name string `json:"name"`
	// JSON is the JSON Schema document.
	JSON json.RawMessage `json:"schema"`
}

// Request is one call to a model, independent of the provider.
type Request struct {
	// Model is a model reference, "provider:model" (see ParseModel).
	Model string `json:"model"`
	// System is the system prompt.
	System string `json:"system,omitempty"`
	// SharedPrefix is the number of leading bytes of System that are the same
	// for every request of a run (shared rules, preamble, material). Providers
	// with explicit prompt caching put a cache breakpoint there; 0 means none.
	SharedPrefix int `json:"shared_prefix,omitempty"`
	// Messages follow the system prompt; the last one is normally the user's.
	Messages []Message `json:"messages"`
	// Temperature is the sampling temperature; nil leaves the provider default.
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens bounds the output; 0 means the provider default.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Schema, when set, asks for structured output.
	Schema *Schema `json:"response_schema,omitempty"`
	// Tools, when set, are offered to the model through the provider's
	// native tool calling. The answer is then either tool calls
	// (Response.ToolCalls, FinishReason FinishToolCalls) or the final
	// answer, structured when Schema is set. A request without tools is
	// sent, and keyed in journals and caches, exactly as before tools
	// existed.
	Tools []Tool `json:"tools,omitempty"`
	// Label names the step of a run this call serves ("review/security/baseline").
	// It is for logs, journals and metering; it never changes the answer.
	Label string `json:"label,omitempty"`
	// OnDelta, when set, receives the answer text as it streams in. A retried
	// call may deliver the beginning of an answer twice. An answer of tool
	// calls, which has no text, delivers one "" as its calls begin, so
	// that a caller can tell the answer has started.
	OnDelta func(text string) `json:"-"`
	// OnStart, when set, is called each time an attempt of the call is let
	// through the provider's concurrency and rate limits, just before it is
	// sent. A call answered from the journal or the cache never starts.
	OnStart func() `json:"-"`
}

// Usage is the token usage of one call.
type Usage struct {
	// InputTokens counts every input token, cached or not.
	InputTokens int `json:"input_tokens"`
	// CachedInputTokens is the part of InputTokens read from a prompt cache.
	CachedInputTokens int `json:"cached_input_tokens,omitempty"`
	// CacheWriteTokens is the part of InputTokens written to a prompt cache
	// (Anthropic bills these at a premium).
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	OutputTokens     int `json:"output_tokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:       u.InputTokens + v.InputTokens,
		CachedInputTokens: u.CachedInputTokens + v.CachedInputTokens,
		CacheWriteTokens:  u.CacheWriteTokens + v.CacheWriteTokens,
		OutputTokens:      u.OutputTokens + v.OutputTokens,
	}
}

// Total is input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Finish reasons, normalised across providers.
const (
	FinishStop   = "stop"   // the model ended its answer
	FinishLength = "length" // the output hit MaxTokens
	FinishFilter = "filter" // the provider withheld content
	FinishTool   = "tool"   // structured output came back as a tool call
	// FinishToolCalls: the model asks for the Response.ToolCalls to be
	// run and their results sent back before it answers.
	FinishToolCalls = "tool_calls"
)

// Source tells where a response came from.
type Source string

// Response sources.
const (
	SourceLive    Source = ""        // a provider answered it now
	SourceCache   Source = "cache"   // the on-disk response cache
	SourceJournal Source = "journal" // replayed from the run journal
)

// Response is a model's answer.
type Response struct {
	// Text is the answer text. For structured output it holds the JSON too.
	Text string `json:"text"`
	// JSON is the structured answer when the request carried a Schema.
	JSON json.RawMessage `json:"json,omitempty"`
	// ToolCalls are the tools the model asks to call (only when the
	// request offered Tools); Text may then be empty and JSON is nil.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// FinishReason is one of the Finish* constants, or the provider's own word.
	FinishReason string `json:"finish_reason"`
	Usage        Usage  `json:"usage"`
	// Latency is the wall time of the call that produced the answer.
	Latency time.Duration `json:"latency"`
	// RequestID is the provider's id for the call, when it gives one.
	RequestID string `json:"request_id,omitempty"`
	// Model is the reference the request asked for.
	Model string `json:"model"`
	// Calls is how many provider calls produced this answer (a schema repair
	// makes two). Zero is read as one.
	Calls int `json:"calls,omitempty"`
	// Repairs say how a structured answer that did not validate was
	// mended to validate (middleware.Repair): an unknown key ignored, "3"
	// read as 3. They are journaled with the answer.
	Repairs []string `json:"repairs,omitempty"`
	// Source is where the answer came from; it is not stored.
	Source Source `json:"-"`
	// Rounds are the calls of the tool rounds that came before this answer
	// (see engine.Converse), each by where it came from; Usage and Calls
	// include theirs. Nil for a call without tools; not stored.
	Rounds []Source `json:"-"`
}

// Provider answers requests. Every backend and every middleware implements it.
type Provider interface {
	Complete(ctx context.Context, req *Request) (*Response, error)
}

// ProviderFunc adapts a function to a Provider.
type ProviderFunc func(ctx context.Context, req *Request) (*Response, error)

// Complete calls f.
func (f ProviderFunc) Complete(ctx context.Context, req *Request) (*Response, error) {
	return f(ctx, req)
}

// Float returns a pointer to v, for Request.Temperature.
func Float(v float64) *float64 { return &v }

// Clone returns a copy of r whose slices can be changed without touching r.
func (r *Request) Clone() *Request {
	c := *r
	c.Messages = append([]Message(nil), r.Messages...)
	c.Tools = append([]Tool(nil), r.Tools...)
	if r.Tools == nil {
		c.Tools = nil
	}
	return &c
}

// LastUser returns the content of the last user message, or "".
func (r *Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == RoleUser {
			return r.Messages[i].Content
		}
	}
	return ""
}

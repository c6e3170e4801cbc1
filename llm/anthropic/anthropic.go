// Package anthropic is sot's backend for the Anthropic Messages API, built on
// the official anthropic-sdk-go SDK.
//
// It marks the shared prefix of the system prompt for Anthropic's prompt
// cache, asks for structured output through one forced tool call, streams
// only when the caller wants the text as it arrives, and returns failures as
// *llm.Error. The SDK's own retries are off because sot's middleware retries.
//
// Request.Tools are offered as tools, before the answer tool of a
// structured request; the model's calls to them come back as
// Response.ToolCalls (FinishReason llm.FinishToolCalls). An assistant
// turn's calls go back as tool_use blocks and the RoleTool messages after
// it as one user turn of tool_result blocks.
//
// Request.Temperature is ignored: the API version the SDK speaks (2026-10-21)
// no longer takes a sampling temperature.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/llm"
)

// DefaultMaxTokens is the output limit sent when a request sets none
// (the Messages API requires one).
const DefaultMaxTokens = 4096

// streamAbove is the output limit above which calls stream even without
// OnDelta: the SDK refuses long non-streaming calls.
const streamAbove = 16384

// Config configures a Provider.
type Config struct {
	// Name labels the provider in errors; default "anthropic".
	Name string
	// BaseURL is the API root, such as https://api.anthropic.com; empty means
	// the SDK's default.
	BaseURL string
	// APIKey is sent in the x-api-key header when set.
	APIKey string
	// RequireKey makes New fail when APIKey is empty.
	RequireKey bool
	// HTTPClient makes the requests; nil means a client of the provider's own.
	HTTPClient *http.Client
	// APIKeyEnv and BaseURLEnv name the variables the key and the URL came
	// from, for error messages; defaults ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL.
	APIKeyEnv  string
	BaseURLEnv string
}

// Provider calls the Messages API. It is safe for concurrent use.
// DefaultBaseURL is the API root a Provider given no BaseURL sends to: the
// SDK's own default (TestDefaultBaseURLIsTheSDKs), which New leaves to it.
const DefaultBaseURL = "https://api.anthropic.com"

type Provider struct {
	cfg Config
	svc sdk.MessageService
}

var _ llm.Provider = (*Provider)(nil)

// New checks cfg and returns a Provider. Its errors are *llm.Error of kind
// llm.ErrConfig (a bad base URL) or llm.ErrMissingKey.
func New(cfg Config) (*Provider, error) {
	if cfg.Name == "" {
		cfg.Name = llm.ProviderAnthropic
	}
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = "ANTHROPIC_API_KEY"
	}
	if cfg.BaseURLEnv == "" {
		cfg.BaseURLEnv = "ANTHROPIC_BASE_URL"
	}
	llm.RegisterSecret(cfg.APIKey)
	u, err := llm.ParseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, &llm.Error{Provider: cfg.Name, Kind: llm.ErrConfig,
			Message: fmt.Sprintf("%v; fix %s (for example https://api.anthropic.com)", err, cfg.BaseURLEnv)}
	}
	if cfg.RequireKey && strings.TrimSpace(cfg.APIKey) == "" {
		return nil, &llm.Error{Provider: cfg.Name, Kind: llm.ErrMissingKey,
			Message: fmt.Sprintf("set %s (create a key at https://console.anthropic.com/settings/keys)", cfg.APIKeyEnv)}
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = llm.NewHTTPClient()
	}
	opts := []option.RequestOption{
		option.WithEnvironmentProduction(),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithoutOpenTelemetry(),
	}
	if u != nil {
		opts = append(opts, option.WithBaseURL(u.String()))
	}
	if key := strings.TrimSpace(cfg.APIKey); key != "" {
		// The API's documented header for keys.
		opts = append(opts, option.WithHeader("X-Api-Key", key))
	}
	// The service is built from explicit options only: no ANTHROPIC_* variable
	// or profile of the process leaks in.
	return &Provider{cfg: cfg, svc: sdk.NewMessageService(opts...)}, nil
}

// toolSpec is the tool that carries a structured answer: the only one,
// forced, or the last of the request's tools.
type toolSpec struct {
	name string
	// wrapped: the schema is not an object, so the tool's input is
	// {"value": answer}.
	wrapped bool
}

// Complete sends req and returns the answer. It streams when req.OnDelta is
// set (or the output limit is large) and passes the text to OnDelta.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Holding(func(held *llm.HeldTexts) (*llm.Response, error) { return p.complete(ctx, req, held) })
}

// complete is Complete, its long texts encoded apart from the SDK's
// encoder when held is not nil.
func (p *Provider) complete(ctx context.Context, req *llm.Request, held *llm.HeldTexts) (*llm.Response, error) {
	start := time.Now()
	params, tool, err := p.params(req)
	if err != nil {
		return nil, err
	}
	holdTexts(&params, held)
	var (
		httpResp *http.Response
		msg      *sdk.Message
	)
	hold := option.WithMiddleware(held.Middleware)
	if req.OnDelta != nil || params.MaxTokens > streamAbove {
		msg, err = p.stream(ctx, req, params, tool, &httpResp, hold)
	} else {
		msg, err = p.svc.New(ctx, params, option.WithResponseInto(&httpResp), hold)
	}
	if errors.Is(err, llm.ErrHeldTexts) {
		return nil, err
	}
	if err != nil {
		return nil, p.fail(ctx, req, httpResp, err)
	}
	if msg == nil || httpResp == nil {
		return nil, p.badResponse(req, httpResp, "the answer is empty")
	}

	var text strings.Builder
	var input json.RawMessage
	var calls []llm.ToolCall
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			if tool != nil && b.Name == tool.name {
				input = b.Input
			} else {
				calls = append(calls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: llm.ToolArguments(string(b.Input))})
			}
		}
	}
	resp := &llm.Response{
		Text:         text.String(),
		FinishReason: normalizeStop(string(msg.StopReason)),
		Usage: llm.Usage{
			InputTokens:       int(msg.Usage.InputTokens + msg.Usage.CacheReadInputTokens + msg.Usage.CacheCreationInputTokens),
			CachedInputTokens: int(msg.Usage.CacheReadInputTokens),
			CacheWriteTokens:  int(msg.Usage.CacheCreationInputTokens),
			OutputTokens:      int(msg.Usage.OutputTokens),
		},
		Latency:   time.Since(start),
		RequestID: httpResp.Header.Get("request-id"),
		Model:     req.Model,
		Calls:     1,
	}
	// Calls to the caller's tools are this round's answer, unless the
	// model gave its structured answer beside them: that ends the loop,
	// and the calls, which would only cost another round, are dropped.
	if input == nil && calls != nil {
		resp.ToolCalls = calls
		if resp.FinishReason != llm.FinishLength {
			resp.FinishReason = llm.FinishToolCalls
		}
		return resp, nil
	}
	if input != nil {
		if tool.wrapped {
			var w struct {
				Value json.RawMessage `json:"value"`
			}
			if json.Unmarshal(input, &w) == nil && w.Value != nil {
				input = w.Value
			}
		}
		var buf bytes.Buffer
		if json.Compact(&buf, input) == nil {
			resp.Text = buf.String()
			resp.JSON = json.RawMessage(buf.Bytes())
		} else {
			// A tool call cut off by the output limit.
			resp.Text = string(input)
		}
		return resp, nil
	}
	if strings.TrimSpace(resp.Text) == "" {
		if resp.FinishReason == llm.FinishFilter {
			return nil, p.badResponse(req, httpResp, "the model refused to answer")
		}
		return nil, p.badResponse(req, httpResp, "the answer is empty")
	}
	if req.Schema != nil {
		resp.JSON = llm.ExtractJSON(resp.Text)
	}
	return resp, nil
}

// stream makes a streaming call, passing text and the answer tool's input
// (not the input of calls to other tools) to req.OnDelta, and returns the
// whole message.
func (p *Provider) stream(ctx context.Context, req *llm.Request, params sdk.MessageNewParams, tool *toolSpec, httpResp **http.Response, hold option.RequestOption) (*sdk.Message, error) {
	s := p.svc.NewStreaming(ctx, params, option.WithResponseInto(httpResp), hold)
	defer s.Close()
	var msg sdk.Message
	stopped, callsBegun := false, false
	for s.Next() {
		ev := s.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, &streamBroken{err}
		}
		switch ev.Type {
		case "content_block_delta":
			if req.OnDelta == nil {
				continue
			}
			switch ev.Delta.Type {
			case "text_delta":
				if ev.Delta.Text != "" {
					callsBegun = true // the answer has begun already
					req.OnDelta(ev.Delta.Text)
				}
			case "input_json_delta":
				// Accumulate checked the index.
				b := msg.Content[ev.Index]
				switch {
				case ev.Delta.PartialJSON != "" && tool != nil && b.Name == tool.name:
					req.OnDelta(ev.Delta.PartialJSON)
				case !callsBegun:
					// A round of calls has no text: say the answer has begun.
					callsBegun = true
					req.OnDelta("")
				}
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if *httpResp == nil {
		return nil, fmt.Errorf("no response")
	}
	if !stopped {
		return nil, &streamBroken{fmt.Errorf("the answer stream ended before the answer was complete")}
	}
	return &msg, nil
}

// streamBroken is a stream that arrived but does not add up.
type streamBroken struct{ err error }

func (e *streamBroken) Error() string { return e.err.Error() }
func (e *streamBroken) Unwrap() error { return e.err }

// params translates a request into the SDK's parameters.
func (p *Provider) params(req *llm.Request) (sdk.MessageNewParams, *toolSpec, error) {
	var params sdk.MessageNewParams
	params.Model = sdk.Model(modelName(req.Model))
	params.MaxTokens = DefaultMaxTokens
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	// req.Temperature is not sent: API version 2026-10-21, which this SDK
	// speaks, has no sampling temperature.
	params.System = systemBlocks(req.System, req.SharedPrefix)
	bad := func(format string, args ...any) (sdk.MessageNewParams, *toolSpec, error) {
		return params, nil, &llm.Error{Provider: p.cfg.Name, Model: req.Model, Kind: llm.ErrBadRequest, Message: fmt.Sprintf(format, args...)}
	}
	results := false
	var last []sdk.ContentBlockParamUnion // the blocks of the last turn
	for i := 0; i < len(req.Messages); i++ {
		m := req.Messages[i]
		switch m.Role {
		case llm.RoleUser:
			last = []sdk.ContentBlockParamUnion{sdk.NewTextBlock(m.Content)}
			params.Messages = append(params.Messages, sdk.NewUserMessage(last...))
		case llm.RoleAssistant:
			last = assistantBlocks(m)
			params.Messages = append(params.Messages, sdk.NewAssistantMessage(last...))
		case llm.RoleTool:
			// The results of one turn's calls, and any user text right
			// after them, are one user turn: the API wants every
			// tool_result in the turn after the calls, ahead of any text.
			var blocks []sdk.ContentBlockParamUnion
			for ; i < len(req.Messages) && req.Messages[i].Role == llm.RoleTool; i++ {
				r := req.Messages[i]
				if r.ToolCallID == "" {
					return bad("message %d is a tool result without the id of the call it answers", i)
				}
				blocks = append(blocks, toolResult(r))
			}
			if i < len(req.Messages) && req.Messages[i].Role == llm.RoleUser {
				blocks = append(blocks, sdk.NewTextBlock(req.Messages[i].Content))
			} else {
				i--
			}
			params.Messages = append(params.Messages, sdk.NewUserMessage(blocks...))
			last, results = blocks, true
		default:
			return bad("message %d has role %q; want user, assistant or tool", i, m.Role)
		}
	}
	if len(params.Messages) == 0 {
		return bad("the request has no messages (the Messages API needs at least one user message)")
	}
	if results {
		// A tool loop sends the conversation again each round, longer by
		// a round's calls and results: a breakpoint at its end lets the
		// next round read all of it from the cache. The prompt's own
		// breakpoint (systemBlocks) still covers the tools, which come
		// before the system prompt in the cache's order.
		if cc := last[len(last)-1].GetCacheControl(); cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
		}
	}
	if err := llm.CheckTools(req.Tools); err != nil {
		return bad("%v", err)
	}
	for _, t := range req.Tools {
		schema := json.RawMessage(`{"type":"object"}`) // the API needs one; no parameters is no properties
		if len(t.Parameters) > 0 {
			schema = t.Parameters
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &sdk.ToolParam{
			Name:        t.Name,
			Description: sdk.String(t.Description),
			// As written, the properties in the order the model is to
			// read them, and the same prefix on every call.
			InputSchema: param.Override[sdk.ToolInputSchemaParam](schema),
		}})
	}
	if req.Schema == nil {
		if len(req.Tools) > 0 {
			params.ToolChoice = sdk.ToolChoiceUnionParam{OfAuto: &sdk.ToolChoiceAutoParam{}}
		}
		return params, nil, nil
	}
	schema, wrapped, err := toolSchema(req.Schema.JSON)
	if err != nil {
		return bad("the response schema is not valid JSON")
	}
	tool := &toolSpec{name: toolName(req.Schema.Name), wrapped: wrapped}
	description := "Give your complete answer as the input of this tool. The input must match the schema exactly."
	if len(req.Tools) > 0 {
		if slices.ContainsFunc(req.Tools, func(t llm.Tool) bool { return t.Name == tool.name }) {
			return bad("a tool is named %q, as the structured answer's tool is (from the schema's name); rename one", tool.name)
		}
		description = "When you have what you need, give your complete answer as the input of this tool. The input must match the schema exactly."
	}
	params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: &sdk.ToolParam{
		Name:        tool.name,
		Description: sdk.String(description),
		// The schema goes out byte for byte, so that it is the same prefix on
		// every call and the prompt cache can match it.
		InputSchema: param.Override[sdk.ToolInputSchemaParam](schema),
	}})
	if len(req.Tools) == 0 {
		params.ToolChoice = sdk.ToolChoiceParamOfTool(tool.name)
		return params, tool, nil
	}
	// With tools of the caller's besides it, the answer tool is not
	// forced, or no other could be called. "any" makes the model call at
	// least one tool, so every turn ends either with calls to the
	// caller's tools or with the answer in its schema; "auto" would let
	// it end a turn in prose, whose JSON only the schema check could try
	// to recover. The price: under "any" the model writes no text before
	// its calls.
	params.ToolChoice = sdk.ToolChoiceUnionParam{OfAny: &sdk.ToolChoiceAnyParam{}}
	return params, tool, nil
}

// assistantBlocks is an assistant turn: its text, then its tool calls.
// Empty text is left out (the API refuses empty text blocks) unless the
// turn has nothing else.
func assistantBlocks(m llm.Message) []sdk.ContentBlockParamUnion {
	var blocks []sdk.ContentBlockParamUnion
	if m.Content != "" || len(m.ToolCalls) == 0 {
		blocks = append(blocks, sdk.NewTextBlock(m.Content))
	}
	for _, c := range m.ToolCalls {
		// The API takes an object as a call's input; arguments that are
		// none (cut off, from another provider) go back as {}.
		var input json.RawMessage = []byte(`{}`)
		var obj map[string]json.RawMessage
		if json.Unmarshal(c.Arguments, &obj) == nil && obj != nil {
			input = c.Arguments
		}
		blocks = append(blocks, sdk.NewToolUseBlock(c.ID, input, c.Name))
	}
	return blocks
}

// toolResult is the tool_result block of a RoleTool message. An empty
// result is sent with no content, which the API takes; an empty text
// block it refuses.
func toolResult(m llm.Message) sdk.ContentBlockParamUnion {
	r := sdk.ToolResultBlockParam{ToolUseID: m.ToolCallID}
	if m.Content != "" {
		r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Content}}}
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &r}
}

// holdTexts puts held's stand-ins in params for its long texts: the system
// prompt's blocks, and the text blocks of the messages and of their tool
// results.
func holdTexts(params *sdk.MessageNewParams, held *llm.HeldTexts) {
	if held == nil {
		return
	}
	for i := range params.System {
		params.System[i].Text = held.Hold(params.System[i].Text)
	}
	for _, m := range params.Messages {
		var blocks []sdk.ContentBlockParamUnion
		switch {
		case m.OfUser != nil:
			blocks = m.OfUser.Content
		case m.OfAssistant != nil:
			blocks = m.OfAssistant.Content
		}
		for _, b := range blocks {
			if t := b.OfText; t != nil {
				t.Text = held.Hold(t.Text)
			}
			if r := b.OfToolResult; r != nil {
				for _, c := range r.Content {
					if t := c.OfText; t != nil {
						t.Text = held.Hold(t.Text)
					}
				}
			}
		}
	}
}

// systemBlocks splits the system prompt at the shared prefix and marks the
// prefix for the prompt cache.
func systemBlocks(system string, shared int) []sdk.TextBlockParam {
	if system == "" {
		return nil
	}
	cached := func(text string) sdk.TextBlockParam {
		return sdk.TextBlockParam{Text: text, CacheControl: sdk.NewCacheControlEphemeralParam()}
	}
	switch {
	case shared <= 0:
		return []sdk.TextBlockParam{{Text: system}}
	case shared >= len(system):
		return []sdk.TextBlockParam{cached(system)}
	}
	// Never cut a UTF-8 sequence in two.
	for shared > 0 && !utf8.RuneStart(system[shared]) {
		shared--
	}
	if shared == 0 {
		return []sdk.TextBlockParam{{Text: system}}
	}
	return []sdk.TextBlockParam{cached(system[:shared]), {Text: system[shared:]}}
}

// toolSchema returns the input schema of the forced tool: the schema itself
// when it describes an object, else an object with one property "value"
// (with the schema's definitions moved up, so that its $refs still resolve).
func toolSchema(raw json.RawMessage) (schema json.RawMessage, wrapped bool, err error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, false, err
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(buf.Bytes(), &m) != nil {
		// true, false or junk: let the API judge it, wrapped.
		w := fmt.Appendf(nil, `{"type":"object","properties":{"value":%s},"required":["value"]}`, buf.Bytes())
		return w, true, nil
	}
	typ, hasType := m["type"]
	_, hasProps := m["properties"]
	if string(typ) == `"object"` || (!hasType && hasProps) {
		return buf.Bytes(), false, nil
	}
	wrapper := map[string]any{
		"type":     "object",
		"required": []string{"value"},
	}
	for _, k := range []string{"$defs", "definitions"} {
		if d, ok := m[k]; ok {
			wrapper[k] = d
			delete(m, k)
		}
	}
	wrapper["properties"] = map[string]any{"value": m}
	b, err := json.Marshal(wrapper)
	return b, true, err
}

var badNameChars = lazyre.New(`[^a-zA-Z0-9_-]`)

// toolName makes a schema name acceptable as a tool name.
func toolName(name string) string {
	name = badNameChars.Re().ReplaceAllString(name, "_")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		name = "respond"
	}
	return name
}

// modelName is the provider's own name from a "provider:model" reference;
// a bare name is used as it is.
func modelName(ref string) string {
	if m, err := llm.ParseModel(ref); err == nil {
		return m.Name
	}
	return strings.TrimSpace(ref)
}

func normalizeStop(r string) string {
	switch r {
	case "end_turn", "stop_sequence":
		return llm.FinishStop
	case "max_tokens", "model_context_window_exceeded":
		return llm.FinishLength
	case "tool_use":
		return llm.FinishTool // a call to the caller's tools is FinishToolCalls (Complete)
	case "refusal":
		return llm.FinishFilter
	}
	return r
}

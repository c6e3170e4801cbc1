// Package openai is sot's backend for the OpenAI Chat Completions API and the
// endpoints that speak it (Ollama, vLLM, llama.cpp server, LM Studio,
// OpenRouter), built on the official openai-go SDK.
//
// Every call streams, so answers can be shown as they arrive and usage
// (including prompt-cache hits) is reported at the end. Failures are returned
// as *llm.Error; the SDK's own retries are off because sot's middleware
// retries.
//
// Request.Tools are sent as function tools, strict only when their
// parameters' schema is one strict mode accepts (StrictCompatible), and
// together with a response schema when the request has one: the model
// either calls tools (Response.ToolCalls, FinishReason llm.FinishToolCalls)
// or gives the structured answer.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/llm"
)

// Config configures a Provider.
type Config struct {
	// Name labels the provider in errors ("openai", "ollama", ...); default "openai".
	Name string
	// BaseURL is the API root, such as https://api.openai.com/v1 or
	// http://localhost:11434/v1; empty means the SDK's default (OpenAI).
	BaseURL string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// RequireKey makes New fail when APIKey is empty.
	RequireKey bool
	// HTTPClient makes the requests; nil means a client of the provider's own.
	HTTPClient *http.Client
	// APIKeyEnv and BaseURLEnv name the variables the key and the URL came
	// from, for error messages; defaults OPENAI_API_KEY and OPENAI_BASE_URL.
	APIKeyEnv  string
	BaseURLEnv string
}

// Provider calls a Chat Completions endpoint. It is safe for concurrent use.
// DefaultBaseURL is the API root a Provider given no BaseURL sends to: the
// SDK's own default (TestDefaultBaseURLIsTheSDKs), which New leaves to it.
const DefaultBaseURL = "https://api.openai.com/v1"

type Provider struct {
	cfg Config
	svc sdk.ChatCompletionService
	// maxCompletion sends max_completion_tokens (OpenAI itself) rather than
	// max_tokens (what compatible servers understand).
	maxCompletion bool
}

var _ llm.Provider = (*Provider)(nil)

// New checks cfg and returns a Provider. Its errors are *llm.Error of kind
// llm.ErrConfig (a bad base URL) or llm.ErrMissingKey.
func New(cfg Config) (*Provider, error) {
	if cfg.Name == "" {
		cfg.Name = llm.ProviderOpenAI
	}
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = "OPENAI_API_KEY"
	}
	if cfg.BaseURLEnv == "" {
		cfg.BaseURLEnv = "OPENAI_BASE_URL"
	}
	llm.RegisterSecret(cfg.APIKey)
	u, err := llm.ParseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, &llm.Error{Provider: cfg.Name, Kind: llm.ErrConfig,
			Message: fmt.Sprintf("%v; fix %s (for example https://api.openai.com/v1 or http://localhost:11434/v1)", err, cfg.BaseURLEnv)}
	}
	if cfg.RequireKey && strings.TrimSpace(cfg.APIKey) == "" {
		return nil, &llm.Error{Provider: cfg.Name, Kind: llm.ErrMissingKey,
			Message: fmt.Sprintf("set %s (or point %s at an endpoint that needs no key)", cfg.APIKeyEnv, cfg.BaseURLEnv)}
	}

	hc := cfg.HTTPClient
	if hc == nil {
		hc = llm.NewHTTPClient()
	}
	opts := []option.RequestOption{
		option.WithEnvironmentProduction(),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	if u != nil {
		opts = append(opts, option.WithBaseURL(u.String()))
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(strings.TrimSpace(cfg.APIKey)))
	}
	p := &Provider{
		cfg: cfg,
		// The service is built from explicit options only: no OPENAI_* variable
		// of the process (a key meant for another endpoint) leaks in.
		svc:           sdk.NewChatCompletionService(opts...),
		maxCompletion: u == nil || strings.HasSuffix(u.Hostname(), "openai.com") || strings.HasSuffix(u.Hostname(), "openai.azure.com"),
	}
	return p, nil
}

// Complete sends req and returns the answer. The call always streams; the
// text is passed to req.OnDelta as it arrives.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Holding(func(held *llm.HeldTexts) (*llm.Response, error) { return p.complete(ctx, req, held) })
}

// complete is Complete, its long texts encoded apart from the SDK's
// encoder when held is not nil.
func (p *Provider) complete(ctx context.Context, req *llm.Request, held *llm.HeldTexts) (*llm.Response, error) {
	start := time.Now()
	params, err := p.params(req, held)
	if err != nil {
		return nil, err
	}
	var httpResp *http.Response
	stream := p.svc.NewStreaming(ctx, params, option.WithResponseInto(&httpResp), option.WithMiddleware(held.Middleware))
	defer stream.Close()

	var (
		text, refusal strings.Builder
		finish        string
		usage         llm.Usage
		calls         toolCalls
		callsBegun    bool
	)
	for stream.Next() {
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() {
			u := chunk.Usage
			usage = llm.Usage{
				InputTokens:       int(u.PromptTokens),
				CachedInputTokens: int(u.PromptTokensDetails.CachedTokens),
				OutputTokens:      int(u.CompletionTokens),
			}
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue
			}
			if d := c.Delta.Content; d != "" {
				text.WriteString(d)
				if req.OnDelta != nil {
					req.OnDelta(d)
				}
			}
			refusal.WriteString(c.Delta.Refusal)
			if len(c.Delta.ToolCalls) > 0 && text.Len() == 0 && !callsBegun && req.OnDelta != nil {
				// A round of calls has no text: say the answer has begun.
				callsBegun = true
				req.OnDelta("")
			}
			for _, d := range c.Delta.ToolCalls {
				if err := calls.add(d); err != nil {
					return nil, p.badResponse(req, httpResp, err.Error())
				}
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		if errors.Is(err, llm.ErrHeldTexts) {
			return nil, err
		}
		return nil, p.fail(ctx, req, httpResp, err)
	}
	if httpResp == nil {
		return nil, p.fail(ctx, req, nil, fmt.Errorf("no response"))
	}
	if finish == "" {
		return nil, p.badResponse(req, httpResp, "the answer stream ended before the answer was complete")
	}
	resp := &llm.Response{
		Text:         text.String(),
		FinishReason: normalizeFinish(finish),
		ToolCalls:    calls.done(),
		Usage:        usage,
		Latency:      time.Since(start),
		RequestID:    httpResp.Header.Get("x-request-id"),
		Model:        req.Model,
		Calls:        1,
	}
	if resp.ToolCalls != nil {
		// Some compatible servers finish a turn of tool calls with
		// "stop"; a cut-off turn keeps "length".
		if resp.FinishReason != llm.FinishLength {
			resp.FinishReason = llm.FinishToolCalls
		}
		return resp, nil
	}
	if strings.TrimSpace(resp.Text) == "" {
		switch {
		case refusal.Len() > 0:
			return nil, p.badResponse(req, httpResp, "the model refused: "+llm.Clip(refusal.String()))
		case resp.FinishReason == llm.FinishFilter:
			return nil, p.badResponse(req, httpResp, "the provider withheld the answer (content filter)")
		}
		return nil, p.badResponse(req, httpResp, "the answer is empty")
	}
	if req.Schema != nil {
		resp.JSON = llm.ExtractJSON(resp.Text)
	}
	return resp, nil
}

// params translates a request into the SDK's parameters, its long texts
// held by held.
func (p *Provider) params(req *llm.Request, held *llm.HeldTexts) (sdk.ChatCompletionNewParams, error) {
	var params sdk.ChatCompletionNewParams
	params.Model = shared.ChatModel(modelName(req.Model))
	if req.System != "" {
		params.Messages = append(params.Messages, sdk.SystemMessage(held.Hold(req.System)))
	}
	for i, m := range req.Messages {
		m.Content = held.Hold(m.Content)
		switch m.Role {
		case llm.RoleUser:
			params.Messages = append(params.Messages, sdk.UserMessage(m.Content))
		case llm.RoleAssistant:
			params.Messages = append(params.Messages, assistantMessage(m))
		case llm.RoleTool:
			if m.ToolCallID == "" {
				return params, &llm.Error{Provider: p.cfg.Name, Model: req.Model, Kind: llm.ErrBadRequest,
					Message: fmt.Sprintf("message %d is a tool result without the id of the call it answers", i)}
			}
			params.Messages = append(params.Messages, sdk.ToolMessage(m.Content, m.ToolCallID))
		default:
			return params, &llm.Error{Provider: p.cfg.Name, Model: req.Model, Kind: llm.ErrBadRequest,
				Message: fmt.Sprintf("message %d has role %q; want user, assistant or tool", i, m.Role)}
		}
	}
	if len(params.Messages) == 0 {
		return params, &llm.Error{Provider: p.cfg.Name, Model: req.Model, Kind: llm.ErrBadRequest,
			Message: "the request has no system prompt and no messages"}
	}
	if req.Temperature != nil {
		params.Temperature = sdk.Float(*req.Temperature)
	}
	if req.MaxTokens > 0 {
		if p.maxCompletion {
			params.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = sdk.Int(int64(req.MaxTokens))
		}
	}
	params.StreamOptions.IncludeUsage = sdk.Bool(true)
	if s := req.Schema; s != nil {
		if !StrictCompatible(s.JSON) && !json.Valid(s.JSON) { // a strict-compatible schema is valid JSON
			return params, &llm.Error{Provider: p.cfg.Name, Model: req.Model, Kind: llm.ErrBadRequest,
				Message: "the response schema is not valid JSON"}
		}
		js := shared.ResponseFormatJSONSchemaJSONSchemaParam{
			Name:   schemaName(s.Name),
			Schema: json.RawMessage(s.JSON),
		}
		if StrictCompatible(s.JSON) {
			js.Strict = sdk.Bool(true)
		}
		params.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}
	}
	if err := llm.CheckTools(req.Tools); err != nil {
		return params, &llm.Error{Provider: p.cfg.Name, Model: req.Model, Kind: llm.ErrBadRequest, Message: err.Error()}
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, sdk.ChatCompletionToolUnionParam{OfFunction: &sdk.ChatCompletionFunctionToolParam{
			Function: function(t),
		}})
	}
	return params, nil
}

// function is a tool's definition. The parameters' schema goes out as it
// was written, its properties in their order (the order the model reads
// them in), and the same on every call of a run, so that the prompt cache
// can match it.
func function(t llm.Tool) shared.FunctionDefinitionParam {
	return param.Override[shared.FunctionDefinitionParam](struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
		Strict      bool            `json:"strict,omitempty"`
	}{t.Name, t.Description, t.Parameters, len(t.Parameters) > 0 && StrictCompatible(t.Parameters)})
}

// assistantMessage is an assistant turn, with the tool calls it made.
func assistantMessage(m llm.Message) sdk.ChatCompletionMessageParamUnion {
	if len(m.ToolCalls) == 0 {
		return sdk.AssistantMessage(m.Content)
	}
	var a sdk.ChatCompletionAssistantMessageParam
	if m.Content != "" {
		a.Content.OfString = sdk.String(m.Content)
	}
	for _, c := range m.ToolCalls {
		args := string(c.Arguments)
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
			ID:       c.ID,
			Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
		}})
	}
	return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// maxToolCalls bounds the calls of one answer: a stream that numbers
// more is not a model's.
const maxToolCalls = 256

// toolCalls gathers the tool calls of a stream. Each call's id, type and
// name come in its first piece and its arguments in pieces after, all
// under the call's index.
type toolCalls struct {
	calls []llm.ToolCall
	args  [][]byte
	// slot maps a stream index to its call. Some compatible servers number
	// every call 0: a piece with a new id at an index starts a new call.
	slot map[int64]int
}

func (t *toolCalls) add(d sdk.ChatCompletionChunkChoiceDeltaToolCall) error {
	if t.slot == nil {
		t.slot = map[int64]int{}
	}
	i, ok := t.slot[d.Index]
	if !ok || d.ID != "" && t.calls[i].ID != "" && d.ID != t.calls[i].ID {
		if len(t.calls) == maxToolCalls {
			return fmt.Errorf("the answer holds more than %d tool calls", maxToolCalls)
		}
		i = len(t.calls)
		t.slot[d.Index] = i
		t.calls = append(t.calls, llm.ToolCall{})
		t.args = append(t.args, nil)
	}
	c := &t.calls[i]
	if c.ID == "" {
		c.ID = d.ID
	}
	if c.Name == "" {
		c.Name = d.Function.Name
	}
	t.args[i] = append(t.args[i], d.Function.Arguments...)
	return nil
}

// done returns the calls, nil when there were none.
func (t *toolCalls) done() []llm.ToolCall {
	for i := range t.calls {
		t.calls[i].Arguments = llm.ToolArguments(string(t.args[i]))
	}
	return t.calls
}

// modelName is the provider's own name from a "provider:model" reference;
// a bare name is used as it is.
func modelName(ref string) string {
	if m, err := llm.ParseModel(ref); err == nil {
		return m.Name
	}
	return strings.TrimSpace(ref)
}

var badNameChars = lazyre.New(`[^a-zA-Z0-9_-]`)

// schemaName makes a schema name acceptable to the API: letters, digits, _
// and -, at most 64 characters.
func schemaName(name string) string {
	name = badNameChars.Re().ReplaceAllString(name, "_")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		name = "response"
	}
	return name
}

func normalizeFinish(r string) string {
	switch r {
	case "stop":
		return llm.FinishStop
	case "length":
		return llm.FinishLength
	case "content_filter":
		return llm.FinishFilter
	case "tool_calls", "function_call":
		return llm.FinishToolCalls
	}
	return r
}

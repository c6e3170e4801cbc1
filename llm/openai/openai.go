// Package openai is sot's backend for the OpenAI Chat Completions API and the
// endpoints that speak it (Ollama, vLLM, llama.cpp server, LM Studio,
// OpenRouter), built on the official openai-go SDK.
//
// Every call streams, so answers can be shown as they arrive and usage
// (including prompt-cache hits) is reported at the end. Failures are returned
// as *llm.Error; the SDK's own retries are off because sot's middleware
// retries.
package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

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
	start := time.Now()
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	var httpResp *http.Response
	stream := p.svc.NewStreaming(ctx, params, option.WithResponseInto(&httpResp))
	defer stream.Close()

	var (
		text, refusal strings.Builder
		finish        string
		usage         llm.Usage
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
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
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
		Usage:        usage,
		Latency:      time.Since(start),
		RequestID:    httpResp.Header.Get("x-request-id"),
		Model:        req.Model,
		Calls:        1,
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

// params translates a request into the SDK's parameters.
func (p *Provider) params(req *llm.Request) (sdk.ChatCompletionNewParams, error) {
	var params sdk.ChatCompletionNewParams
	params.Model = shared.ChatModel(modelName(req.Model))
	if req.System != "" {
		params.Messages = append(params.Messages, sdk.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case llm.RoleUser:
			params.Messages = append(params.Messages, sdk.UserMessage(m.Content))
		case llm.RoleAssistant:
			params.Messages = append(params.Messages, sdk.AssistantMessage(m.Content))
		default:
			return params, &llm.Error{Provider: p.cfg.Name, Model: req.Model, Kind: llm.ErrBadRequest,
				Message: fmt.Sprintf("message %d has role %q; want user or assistant", i, m.Role)}
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
	return params, nil
}

// modelName is the provider's own name from a "provider:model" reference;
// a bare name is used as it is.
func modelName(ref string) string {
	if m, err := llm.ParseModel(ref); err == nil {
		return m.Name
	}
	return strings.TrimSpace(ref)
}

var badNameChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// schemaName makes a schema name acceptable to the API: letters, digits, _
// and -, at most 64 characters.
func schemaName(name string) string {
	name = badNameChars.ReplaceAllString(name, "_")
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
		return llm.FinishTool
	}
	return r
}

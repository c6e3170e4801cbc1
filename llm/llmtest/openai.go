package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// errKind is a class of error answer, written in each provider's shape.
type errKind int

const (
	errInvalid errKind = iota
	errAuth
	errModel
	errRate
	errServer
	errOverloaded
)

// dialect is one provider's wire format.
type dialect interface {
	// parse reads a request body into rec and returns the call.
	parse(body []byte, rec *Recorded) (*call, error)
	// body and stream render an answer. stream also returns where its
	// head ends: the events up to and including the first piece of the
	// answer's text, which are sent when the answer starts.
	body(c *call, a answer) []byte
	stream(c *call, a answer) (out []byte, head int)
	// invalid is a 200 body that the client cannot decode.
	invalid(stream bool) []byte
	writeError(w http.ResponseWriter, id int64, status int, kind errKind, detail string)
	setRequestID(h http.Header, id int64)
}

func dialectFor(provider string) dialect {
	if provider == Anthropic {
		return anthropicDialect{}
	}
	return openaiDialect{}
}

type openaiDialect struct{}

type oaiRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"messages"`
	Temperature         *float64 `json:"temperature"`
	MaxTokens           *int     `json:"max_tokens"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
	Stream              bool     `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

func (openaiDialect) parse(body []byte, rec *Recorded) (*call, error) {
	c := &call{rec: rec}
	var req oaiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return c, fmt.Errorf("the request body is not valid JSON: %v", err)
	}
	rec.Model, c.model = req.Model, req.Model
	if req.Model == "" {
		return c, errors.New("you must provide a model parameter")
	}
	if len(req.Messages) == 0 {
		return c, errNoMessages
	}
	rec.Temperature = req.Temperature
	if req.MaxCompletionTokens != nil {
		rec.MaxTokens = *req.MaxCompletionTokens
	} else if req.MaxTokens != nil {
		rec.MaxTokens = *req.MaxTokens
	}
	rec.Stream = req.Stream
	rec.IncludeUsage = req.Stream && req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_schema":
			if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 {
				return c, errors.New("response_format.json_schema.schema is required")
			}
			rec.Schema = append(json.RawMessage(nil), rf.JSONSchema.Schema...)
			rec.SchemaName = rf.JSONSchema.Name
			rec.Strict = rf.JSONSchema.Strict != nil && *rf.JSONSchema.Strict
		case "json_object":
			c.jsonMode = true
		case "text", "":
		default:
			return c, fmt.Errorf("response_format.type %q is not supported", rf.Type)
		}
	}

	var system []string
	size := 0
	for _, m := range req.Messages {
		text, _ := m.Content.(string)
		size += len(text) + len(m.Role) + 3
	}
	var prompt bytes.Buffer
	prompt.Grow(size)
	for i, m := range req.Messages {
		text, err := partsText(m.Content)
		if err != nil {
			return c, fmt.Errorf("messages[%d].content: %v", i, err)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user", "assistant", "tool":
			rec.Messages = append(rec.Messages, Message{Role: m.Role, Text: text})
		default:
			return c, fmt.Errorf("messages[%d].role: %q is not a known role", i, m.Role)
		}
		prompt.WriteString(m.Role)
		prompt.WriteString(":\n")
		prompt.WriteString(text)
		prompt.WriteString("\n\n")
	}
	rec.System = strings.Join(system, "\n")
	c.prompt = prompt.Bytes()
	return c, nil
}

// partsText reads message content: a string, or an array of parts whose text
// is joined with "\n". The content arrives decoded as a generic value, so a
// large system prompt is scanned once, not once more as raw JSON.
func partsText(content any) (string, error) {
	switch v := content.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case []any:
		texts := make([]string, 0, len(v))
		for i, p := range v {
			part, ok := p.(map[string]any)
			if !ok {
				return "", fmt.Errorf("part %d is not an object", i)
			}
			switch part["type"] {
			case "text", "input_text", "output_text":
				text, ok := part["text"].(string)
				if !ok && part["text"] != nil {
					return "", fmt.Errorf("part %d: text must be a string", i)
				}
				texts = append(texts, text)
			}
		}
		return strings.Join(texts, "\n"), nil
	}
	return "", errors.New("must be a string or an array of content parts")
}

type oaiUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func oaiUsageOf(u usage) oaiUsage {
	var o oaiUsage
	o.PromptTokens = u.input
	o.CompletionTokens = u.output
	o.TotalTokens = u.input + u.output
	o.PromptTokensDetails.CachedTokens = u.cacheRead
	return o
}

type oaiCompletion struct {
	ID                string      `json:"id"`
	Object            string      `json:"object"`
	Created           int64       `json:"created"`
	Model             string      `json:"model"`
	Choices           []oaiChoice `json:"choices"`
	Usage             *oaiUsage   `json:"usage,omitempty"`
	SystemFingerprint string      `json:"system_fingerprint"`
}

type oaiChoice struct {
	Index        int              `json:"index"`
	Message      *oaiMessage      `json:"message,omitempty"`
	Delta        *oaiDelta        `json:"delta,omitempty"`
	Logprobs     *json.RawMessage `json:"logprobs"`
	FinishReason *string          `json:"finish_reason"`
}

type oaiMessage struct {
	Role    string  `json:"role"`
	Content string  `json:"content"`
	Refusal *string `json:"refusal"`
}

type oaiDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

func (openaiDialect) envelope(c *call, object string) oaiCompletion {
	return oaiCompletion{
		ID:                "chatcmpl-llmtest-" + strconv.FormatInt(c.id, 10),
		Object:            object,
		Created:           c.rec.Time.Unix(),
		Model:             c.model,
		SystemFingerprint: "fp_llmtest",
	}
}

func (d openaiDialect) body(c *call, a answer) []byte {
	out := d.envelope(c, "chat.completion")
	finish := a.finish
	u := oaiUsageOf(a.usage)
	out.Choices = []oaiChoice{{Message: &oaiMessage{Role: "assistant", Content: a.text}, FinishReason: &finish}}
	out.Usage = &u
	b, _ := json.Marshal(out)
	return b
}

func (d openaiDialect) stream(c *call, a answer) ([]byte, int) {
	var buf bytes.Buffer
	buf.Grow(len(a.text)*2 + 1024)
	event := func(v any) {
		b, _ := json.Marshal(v)
		buf.WriteString("data: ")
		buf.Write(b)
		buf.WriteString("\n\n")
	}
	chunk := d.envelope(c, "chat.completion.chunk")
	empty := ""
	chunk.Choices = []oaiChoice{{Delta: &oaiDelta{Role: "assistant", Content: &empty}}}
	event(chunk)
	head := buf.Len()
	for i, p := range splitPieces(a.text, 4) {
		chunk.Choices = []oaiChoice{{Delta: &oaiDelta{Content: &p}}}
		event(chunk)
		if i == 0 {
			head = buf.Len()
		}
	}
	finish := a.finish
	chunk.Choices = []oaiChoice{{Delta: &oaiDelta{}, FinishReason: &finish}}
	event(chunk)
	if c.rec.IncludeUsage {
		u := oaiUsageOf(a.usage)
		chunk.Choices = []oaiChoice{}
		chunk.Usage = &u
		event(chunk)
	}
	buf.WriteString("data: [DONE]\n\n")
	return buf.Bytes(), head
}

func (openaiDialect) invalid(stream bool) []byte {
	if stream {
		return []byte("data: {\"id\": this is not JSON\n\n")
	}
	return []byte(`this is not JSON {"choices": [`)
}

func (openaiDialect) setRequestID(h http.Header, id int64) {
	h.Set("x-request-id", "req_llmtest_"+strconv.FormatInt(id, 10))
	h.Set("openai-processing-ms", "1")
}

func (d openaiDialect) writeError(w http.ResponseWriter, id int64, status int, kind errKind, detail string) {
	type apiErr struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	code := func(s string) *string { return &s }
	var e apiErr
	switch kind {
	case errAuth:
		e = apiErr{Message: "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.", Type: "invalid_request_error", Code: code("invalid_api_key")}
	case errModel:
		e = apiErr{Message: "The model `" + detail + "` does not exist", Type: "invalid_request_error", Code: code("model_not_found")}
	case errRate:
		e = apiErr{Message: "Rate limit reached for requests. Please try again in " + w.Header().Get("Retry-After") + "s.", Type: "requests", Code: code("rate_limit_exceeded")}
	case errServer:
		msg := "The server had an error while processing your request. Sorry about that!"
		if detail != "" {
			msg = detail
		}
		e = apiErr{Message: msg, Type: "server_error"}
	case errOverloaded:
		e = apiErr{Message: "The engine is currently overloaded, please try again later.", Type: "server_error", Code: code("service_unavailable")}
	default:
		e = apiErr{Message: detail, Type: "invalid_request_error"}
	}
	d.setRequestID(w.Header(), id)
	writeJSON(w, status, map[string]apiErr{"error": e})
}

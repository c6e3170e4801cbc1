package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
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
		Role       string        `json:"role"`
		Content    any           `json:"content"`
		ToolCalls  []oaiToolCall `json:"tool_calls"`
		ToolCallID string        `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
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
	// The tools' definitions come first, as the model sees them.
	for i, t := range req.Tools {
		if t.Type != "function" {
			return c, fmt.Errorf("tools[%d].type: %q is not supported (want function)", i, t.Type)
		}
		if !toolNameOK(t.Function.Name) {
			return c, fmt.Errorf("tools[%d].function.name: %q does not match '^[a-zA-Z0-9_-]{1,64}$'", i, t.Function.Name)
		}
		rec.Tools = append(rec.Tools, t.Function.Name)
		prompt.WriteString("tool:")
		prompt.WriteString(t.Function.Name)
		prompt.WriteString("\n")
		prompt.WriteString(t.Function.Description)
		prompt.WriteString("\n")
		prompt.Write(t.Function.Parameters)
		prompt.WriteString("\n\n")
	}
	// open holds the calls of the last assistant turn not yet answered:
	// as at the API, tool turns answer exactly the calls of the assistant
	// turn before them.
	var open []string
	answering := false
	unanswered := func() error {
		return fmt.Errorf("an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(open, ", "))
	}
	for i, m := range req.Messages {
		text, err := partsText(m.Content)
		if err != nil {
			return c, fmt.Errorf("messages[%d].content: %v", i, err)
		}
		if m.Role != "tool" && len(open) > 0 {
			return c, unanswered()
		}
		msg := Message{Role: m.Role, Text: text}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
		case "assistant":
			for j, tc := range m.ToolCalls {
				if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" {
					return c, fmt.Errorf("messages[%d].tool_calls[%d]: id, type \"function\" and function.name are required", i, j)
				}
				msg.ToolCalls = append(msg.ToolCalls, RecordedCall{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)})
				open = append(open, tc.ID)
			}
		case "tool":
			j := slices.Index(open, m.ToolCallID)
			switch {
			case !answering:
				return c, fmt.Errorf("messages[%d]: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'", i)
			case j < 0:
				return c, fmt.Errorf("messages[%d].tool_call_id: %q answers no call of the assistant message before it", i, m.ToolCallID)
			}
			open = slices.Delete(open, j, j+1)
			msg.ToolCallID = m.ToolCallID
			rec.ToolResults++
		default:
			return c, fmt.Errorf("messages[%d].role: %q is not a known role", i, m.Role)
		}
		if m.Role != "system" && m.Role != "developer" {
			rec.Messages = append(rec.Messages, msg)
		}
		answering = len(msg.ToolCalls) > 0 || m.Role == "tool" && answering
		prompt.WriteString(m.Role)
		prompt.WriteString(":\n")
		prompt.WriteString(text)
		for _, tc := range msg.ToolCalls {
			prompt.WriteString("\ncall ")
			prompt.WriteString(tc.Name)
			prompt.Write(tc.Arguments)
		}
		prompt.WriteString("\n\n")
	}
	if len(open) > 0 {
		return c, unanswered()
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
	Role      string        `json:"role"`
	Content   *string       `json:"content"`
	Refusal   *string       `json:"refusal"`
	ToolCalls []oaiToolCall `json:"tool_calls,omitempty"`
}

type oaiDelta struct {
	Role      string        `json:"role,omitempty"`
	Content   *string       `json:"content,omitempty"`
	ToolCalls []oaiToolCall `json:"tool_calls,omitempty"`
}

// oaiToolCall is a tool call in a request, an answer, or (with Index, and
// the id, type and name only in its first piece) a stream.
type oaiToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// oaiCallID is the id of call i of the answer to request id.
func oaiCallID(id int64, i int) string {
	return "call_llmtest_" + strconv.FormatInt(id, 10) + "_" + strconv.Itoa(i)
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
	msg := &oaiMessage{Role: "assistant", Content: &a.text}
	if a.calls != nil && a.text == "" {
		msg.Content = nil // as the API sends it
	}
	for i, tc := range a.calls {
		oc := oaiToolCall{ID: oaiCallID(c.id, i), Type: "function"}
		oc.Function.Name, oc.Function.Arguments = tc.name, string(tc.args)
		msg.ToolCalls = append(msg.ToolCalls, oc)
	}
	out.Choices = []oaiChoice{{Message: msg, FinishReason: &finish}}
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
	first := true
	for _, p := range splitPieces(a.text, 4) {
		chunk.Choices = []oaiChoice{{Delta: &oaiDelta{Content: &p}}}
		event(chunk)
		if first {
			head, first = buf.Len(), false
		}
	}
	// Each call starts with its id and name, then its arguments follow
	// in pieces, as the API streams them.
	for i, tc := range a.calls {
		start := oaiToolCall{Index: &i, ID: oaiCallID(c.id, i), Type: "function"}
		start.Function.Name = tc.name
		chunk.Choices = []oaiChoice{{Delta: &oaiDelta{ToolCalls: []oaiToolCall{start}}}}
		event(chunk)
		if first {
			head, first = buf.Len(), false
		}
		for _, p := range splitPieces(string(tc.args), 3) {
			piece := oaiToolCall{Index: &i}
			piece.Function.Arguments = p
			chunk.Choices = []oaiChoice{{Delta: &oaiDelta{ToolCalls: []oaiToolCall{piece}}}}
			event(chunk)
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

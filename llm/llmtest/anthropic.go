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

type anthropicDialect struct{}

// answerToolMarker is how the server tells, among an Anthropic request's
// tools, the one sot's anthropic provider gives a structured answer
// through when it offers tools besides it (tool_choice "any" or "auto"):
// the tool whose description holds these words (llm/anthropic writes
// them). Under tool_choice "tool", the forced tool is the answer tool, as
// is the only tool under "any".
const answerToolMarker = "complete answer as the input of this tool"

type antRequest struct {
	Model     string          `json:"model"`
	MaxTokens *int            `json:"max_tokens"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools      []antTool `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
	Temperature *float64 `json:"temperature"`
	Stream      bool     `json:"stream"`
}

type antTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl json.RawMessage `json:"cache_control"`
}

type antBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	ToolUseID    string          `json:"tool_use_id"`
	Input        json.RawMessage `json:"input"`
	Content      json.RawMessage `json:"content"`
	CacheControl json.RawMessage `json:"cache_control"`
}

func marked(cc json.RawMessage) bool {
	cc = bytes.TrimSpace(cc)
	return len(cc) > 0 && string(cc) != "null"
}

// blocks reads content that is a string or an array of blocks.
func blocks(raw json.RawMessage) ([]antBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []antBlock{{Type: "text", Text: s}}, nil
	case '[':
		var bs []antBlock
		err := json.Unmarshal(raw, &bs)
		return bs, err
	}
	return nil, errors.New("must be a string or an array of content blocks")
}

// blockText is the text a block contributes to the prompt.
func blockText(b antBlock) string {
	switch b.Type {
	case "text":
		return b.Text
	case "tool_use":
		return string(b.Input)
	case "tool_result":
		inner, err := blocks(b.Content)
		if err != nil {
			return string(b.Content)
		}
		texts := make([]string, 0, len(inner))
		for _, ib := range inner {
			texts = append(texts, blockText(ib))
		}
		return strings.Join(texts, "\n")
	}
	return ""
}

func (anthropicDialect) parse(body []byte, rec *Recorded) (*call, error) {
	c := &call{rec: rec}
	var req antRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return c, fmt.Errorf("the request body is not valid JSON: %v", err)
	}
	rec.Model, c.model = req.Model, req.Model
	if req.Model == "" {
		return c, errors.New("model: Field required")
	}
	if req.MaxTokens == nil {
		return c, errors.New("max_tokens: Field required")
	}
	if len(req.Messages) == 0 {
		return c, errNoMessages
	}
	rec.MaxTokens = *req.MaxTokens
	rec.Temperature = req.Temperature
	rec.Stream = req.Stream

	var prompt bytes.Buffer
	prompt.Grow(len(body))
	// The cache sees tools, then system, then messages.
	for i, t := range req.Tools {
		if !toolNameOK(t.Name) {
			return c, fmt.Errorf("tools.%d.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", i)
		}
		for _, u := range req.Tools[:i] {
			if u.Name == t.Name {
				return c, fmt.Errorf("tools: Tool names must be unique (%q)", t.Name)
			}
		}
		prompt.WriteString("tool:")
		prompt.WriteString(t.Name)
		prompt.WriteString("\n")
		prompt.WriteString(t.Description)
		prompt.WriteString("\n")
		prompt.Write(t.InputSchema)
		prompt.WriteString("\n\n")
		c.ends = append(c.ends, prompt.Len())
		if marked(t.CacheControl) {
			rec.CacheControlBlocks++
			c.breaks = append(c.breaks, prompt.Len())
		}
	}
	// The answer tool: the forced one, the only one a call is required
	// of, or else the one described as sot describes it.
	answer := ""
	switch tc := req.ToolChoice; {
	case tc != nil && tc.Type == "tool":
		answer = tc.Name
	case tc != nil && tc.Type == "any" && len(req.Tools) == 1:
		answer = req.Tools[0].Name
	default:
		for _, t := range req.Tools {
			if strings.Contains(t.Description, answerToolMarker) {
				answer = t.Name
				break
			}
		}
	}
	found := answer == ""
	for _, t := range req.Tools {
		if t.Name != answer {
			rec.Tools = append(rec.Tools, t.Name)
			continue
		}
		found = true
		c.toolName = answer
		rec.SchemaName = answer
		rec.Schema = append(json.RawMessage(nil), t.InputSchema...)
	}
	if !found {
		return c, fmt.Errorf("tool_choice: tool %q is not among the tools", answer)
	}

	sys, err := blocks(req.System)
	if err != nil {
		return c, fmt.Errorf("system: %v", err)
	}
	texts := make([]string, 0, len(sys))
	for _, b := range sys {
		if b.Type != "text" {
			return c, fmt.Errorf("system: blocks must be of type text, not %q", b.Type)
		}
		texts = append(texts, b.Text)
		prompt.WriteString("system:\n")
		prompt.WriteString(b.Text)
		prompt.WriteString("\n\n")
		c.ends = append(c.ends, prompt.Len())
		if marked(b.CacheControl) {
			rec.CacheControlBlocks++
			c.breaks = append(c.breaks, prompt.Len())
		}
	}
	// Blocks are pieces of one prompt (sot splits its system prompt at the
	// cache breakpoint), so they are joined as they are.
	rec.System = strings.Join(texts, "")

	// open holds the tool_use ids of the last assistant turn: as at the
	// API, the next turn must be a user turn that starts with a
	// tool_result for each of them.
	var open []string
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return c, fmt.Errorf("messages.%d.role: must be user or assistant, not %q", i, m.Role)
		}
		bs, err := blocks(m.Content)
		if err != nil {
			return c, fmt.Errorf("messages.%d.content: %v", i, err)
		}
		msg := Message{Role: m.Role}
		var results []Message
		texts := make([]string, 0, len(bs))
		prompt.WriteString(m.Role)
		prompt.WriteString(":\n")
		for j, b := range bs {
			t := blockText(b)
			switch {
			case b.Type == "tool_use" && m.Role == "assistant":
				if b.ID == "" || b.Name == "" {
					return c, fmt.Errorf("messages.%d.content.%d: tool_use blocks need an id and a name", i, j)
				}
				msg.ToolCalls = append(msg.ToolCalls, RecordedCall{ID: b.ID, Name: b.Name, Arguments: b.Input})
			case b.Type == "tool_result" && m.Role == "user":
				k := slices.Index(open, b.ToolUseID)
				switch {
				case len(texts) > 0:
					return c, fmt.Errorf("messages.%d.content.%d: tool_result blocks must come first in a user message, before any text", i, j)
				case k < 0:
					return c, fmt.Errorf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message", i, j, b.ToolUseID)
				}
				open = slices.Delete(open, k, k+1)
				results = append(results, Message{Role: "tool", Text: t, ToolCallID: b.ToolUseID})
			default:
				texts = append(texts, t)
			}
			prompt.WriteString(t)
			prompt.WriteString("\n\n")
			c.ends = append(c.ends, prompt.Len())
			if marked(b.CacheControl) {
				rec.CacheControlBlocks++
				c.breaks = append(c.breaks, prompt.Len())
			}
		}
		if len(open) > 0 {
			return c, fmt.Errorf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message", i-1, strings.Join(open, ", "))
		}
		for _, tc := range msg.ToolCalls {
			open = append(open, tc.ID)
		}
		msg.Text = strings.Join(texts, "\n")
		rec.Messages = append(rec.Messages, results...)
		rec.ToolResults += len(results)
		if len(results) == 0 || len(texts) > 0 {
			rec.Messages = append(rec.Messages, msg)
		}
	}
	if len(open) > 0 {
		return c, fmt.Errorf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message", len(req.Messages)-1, strings.Join(open, ", "))
	}
	c.prompt = prompt.Bytes()
	return c, nil
}

type antUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

type antMessage struct {
	ID           string            `json:"id"`
	Type         string            `json:"type"`
	Role         string            `json:"role"`
	Model        string            `json:"model"`
	Content      []json.RawMessage `json:"content"`
	StopReason   *string           `json:"stop_reason"`
	StopSequence *string           `json:"stop_sequence"`
	Usage        antUsage          `json:"usage"`
}

// antOut is one content block of an answer: text, or a tool_use with its
// id, name and input.
type antOut struct {
	tool     bool
	id, name string
	text     string // the text, or the tool's input as JSON text
}

// shape decides how an answer is sent: as content blocks (text, the
// answer tool's call, or text and calls to the request's tools), and with
// which stop reason.
func (d anthropicDialect) shape(c *call, a answer) (out []antOut, stop string) {
	switch {
	case a.calls != nil:
		if a.text != "" {
			out = append(out, antOut{text: a.text})
		}
		for i, tc := range a.calls {
			out = append(out, antOut{tool: true, id: d.toolID(c) + "_" + strconv.Itoa(i), name: tc.name, text: string(tc.args)})
		}
	case c.toolName != "" && a.isJSON:
		input := a.text
		if !json.Valid([]byte(input)) {
			input = `{}`
		}
		out = []antOut{{tool: true, id: d.toolID(c), name: c.toolName, text: input}}
	default:
		out = []antOut{{text: a.text}}
	}
	switch {
	case a.finish == "length":
		stop = "max_tokens"
	case out[len(out)-1].tool:
		stop = "tool_use"
	default:
		stop = "end_turn"
	}
	return out, stop
}

func (d anthropicDialect) message(c *call) antMessage {
	return antMessage{
		ID:    "msg_llmtest_" + strconv.FormatInt(c.id, 10),
		Type:  "message",
		Role:  "assistant",
		Model: c.model,
	}
}

func (d anthropicDialect) toolID(c *call) string {
	return "toolu_llmtest_" + strconv.FormatInt(c.id, 10)
}

func antUsageOf(u usage) antUsage {
	return antUsage{
		InputTokens:              u.input,
		CacheCreationInputTokens: u.cacheWrite,
		CacheReadInputTokens:     u.cacheRead,
		OutputTokens:             u.output,
	}
}

func (d anthropicDialect) body(c *call, a answer) []byte {
	out, stop := d.shape(c, a)
	m := d.message(c)
	for _, o := range out {
		var block []byte
		if o.tool {
			block, _ = json.Marshal(map[string]any{"type": "tool_use", "id": o.id, "name": o.name, "input": json.RawMessage(o.text)})
		} else {
			block, _ = json.Marshal(map[string]any{"type": "text", "text": o.text})
		}
		m.Content = append(m.Content, block)
	}
	m.StopReason = &stop
	m.Usage = antUsageOf(a.usage)
	b, _ := json.Marshal(m)
	return b
}

func (d anthropicDialect) stream(c *call, a answer) ([]byte, int) {
	out, stop := d.shape(c, a)
	var buf bytes.Buffer
	buf.Grow(len(a.text)*2 + 1024)
	event := func(name string, v any) {
		b, _ := json.Marshal(v)
		buf.WriteString("event: ")
		buf.WriteString(name)
		buf.WriteString("\ndata: ")
		buf.Write(b)
		buf.WriteString("\n\n")
	}
	m := d.message(c)
	m.Content = []json.RawMessage{}
	m.Usage = antUsageOf(a.usage)
	m.Usage.OutputTokens = 1
	event("message_start", map[string]any{"type": "message_start", "message": m})
	head := 0
	for k, o := range out {
		if o.tool {
			event("content_block_start", map[string]any{"type": "content_block_start", "index": k,
				"content_block": map[string]any{"type": "tool_use", "id": o.id, "name": o.name, "input": map[string]any{}}})
		} else {
			event("content_block_start", map[string]any{"type": "content_block_start", "index": k,
				"content_block": map[string]any{"type": "text", "text": ""}})
		}
		if k == 0 {
			event("ping", map[string]any{"type": "ping"})
			head = buf.Len()
		}
		for i, p := range splitPieces(o.text, 4) {
			var delta map[string]any
			if o.tool {
				delta = map[string]any{"type": "input_json_delta", "partial_json": p}
			} else {
				delta = map[string]any{"type": "text_delta", "text": p}
			}
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": k, "delta": delta})
			if k == 0 && i == 0 {
				head = buf.Len()
			}
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": k})
	}
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": a.usage.output}})
	event("message_stop", map[string]any{"type": "message_stop"})
	return buf.Bytes(), head
}

func (anthropicDialect) invalid(stream bool) []byte {
	if stream {
		return []byte("event: message_start\ndata: {\"type\": this is not JSON\n\n")
	}
	return []byte(`this is not JSON {"content": [`)
}

func (anthropicDialect) setRequestID(h http.Header, id int64) {
	h.Set("request-id", "req_llmtest_"+strconv.FormatInt(id, 10))
}

func (d anthropicDialect) writeError(w http.ResponseWriter, id int64, status int, kind errKind, detail string) {
	var typ, msg string
	switch kind {
	case errAuth:
		typ, msg = "authentication_error", "invalid x-api-key"
	case errModel:
		typ, msg = "not_found_error", "model: "+detail
	case errRate:
		typ, msg = "rate_limit_error", "This request would exceed the rate limit for your organization. Please try again in "+w.Header().Get("Retry-After")+"s."
	case errServer:
		typ, msg = "api_error", "Internal server error"
		if detail != "" {
			msg = detail
		}
	case errOverloaded:
		typ, msg = "overloaded_error", "Overloaded"
	default:
		typ, msg = "invalid_request_error", detail
	}
	d.setRequestID(w.Header(), id)
	rid := "req_llmtest_" + strconv.FormatInt(id, 10)
	writeJSON(w, status, map[string]any{
		"type":       "error",
		"error":      map[string]string{"type": typ, "message": msg},
		"request_id": rid,
	})
}

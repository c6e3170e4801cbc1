package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

// readFileParams lists its properties out of alphabetical order: they must
// reach the model in this order.
const readFileParams = `{"type":"object","properties":{"path":{"type":"string"},"lines":{"type":"string"}},"required":["path"]}`

// strictParams is one strict mode accepts.
const strictParams = `{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"],"additionalProperties":false}`

var testTools = []llm.Tool{
	{Name: "read_file", Description: "Read a file of the project.", Parameters: json.RawMessage(readFileParams)},
	{Name: "grep", Description: "Search the project.", Parameters: json.RawMessage(strictParams)},
}

// loop is the script of a tool loop: round 1 calls two tools, round 2
// answers.
func loop() llmtest.Config {
	return llmtest.Config{Rules: []llmtest.Rule{
		{Reply: "Let me look.", ToolCalls: []llmtest.ToolCall{
			{Name: "read_file", Arguments: map[string]any{"path": "README.md"}},
			{Name: "grep", Arguments: map[string]any{"pattern": "TODO"}},
		}},
		{JSON: map[string]any{"verdict": "pass", "score": 4}},
	}}
}

func TestToolLoop(t *testing.T) {
	s := server(t, loop())
	p := provider(t, s, nil)
	req := ask("review")
	req.System = "You review."
	req.Tools = testTools
	req.Schema = &llm.Schema{Name: "verdict", JSON: json.RawMessage(strictSchema)}
	var deltas []string
	req.OnDelta = func(d string) { deltas = append(deltas, d) }

	// Round 1: the calls, streamed in pieces and put together.
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != llm.FinishToolCalls || resp.Text != "Let me look." || resp.JSON != nil || len(resp.ToolCalls) != 2 {
		t.Fatalf("round 1: %+v", resp)
	}
	for i, want := range []string{`read_file {"path":"README.md"}`, `grep {"pattern":"TODO"}`} {
		c := resp.ToolCalls[i]
		if got := c.Name + " " + string(c.Arguments); got != want || !strings.HasPrefix(c.ID, "call_llmtest_") {
			t.Errorf("call %d = %s %q, want %s", i, got, c.ID, want)
		}
	}
	if strings.Join(deltas, "") != "Let me look." {
		t.Errorf("deltas %q: only the text streams to OnDelta", deltas)
	}
	rec := s.Requests()[0]
	if !slices.Equal(rec.Tools, []string{"read_file", "grep"}) || rec.SchemaName != "verdict" || rec.ToolResults != 0 {
		t.Errorf("round 1 record: %+v", rec)
	}
	var body struct {
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
				Strict      *bool           `json:"strict"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(rec.Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Tools) != 2 {
		t.Fatalf("tools sent: %s", rec.Body)
	}
	for i, tl := range body.Tools {
		f := tl.Function
		if tl.Type != "function" || f.Name != testTools[i].Name || f.Description != testTools[i].Description || string(f.Parameters) != string(testTools[i].Parameters) {
			t.Errorf("tool %d sent as %+v", i, tl)
		}
		// Strict only where strict mode accepts the schema.
		if strict := f.Strict != nil && *f.Strict; strict != (i == 1) {
			t.Errorf("tool %s: strict %v", f.Name, strict)
		}
	}

	// Round 2: the calls and their results go back; the answer is the JSON.
	next := req.Clone()
	next.OnDelta = nil
	next.Messages = append(next.Messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
	for _, c := range resp.ToolCalls {
		next.Messages = append(next.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: "result of " + c.Name})
	}
	resp2, err := p.Complete(context.Background(), next)
	if err != nil {
		t.Fatal(err)
	}
	if resp2.FinishReason != llm.FinishStop || resp2.ToolCalls != nil || string(resp2.JSON) != `{"score":4,"verdict":"pass"}` {
		t.Errorf("round 2: %+v", resp2)
	}
	rec = s.Requests()[1]
	m := rec.Messages
	if rec.ToolResults != 2 || len(m) != 4 || m[1].Role != "assistant" || m[1].Text != "Let me look." || len(m[1].ToolCalls) != 2 ||
		m[1].ToolCalls[0].ID != resp.ToolCalls[0].ID || string(m[1].ToolCalls[1].Arguments) != `{"pattern":"TODO"}` ||
		m[2].Role != "tool" || m[2].ToolCallID != resp.ToolCalls[0].ID || m[3].Text != "result of grep" {
		t.Errorf("round 2 sent: %+v", m)
	}
}

// TestToolCallsWithoutText: a turn of only tool calls is an answer, not
// an empty one, and an assistant turn without text goes back without it.
func TestToolCallsWithoutText(t *testing.T) {
	s := server(t, llmtest.Config{Rules: []llmtest.Rule{{ToolCalls: []llmtest.ToolCall{{Name: "grep"}}}}})
	p := provider(t, s, nil)
	req := ask("look")
	req.Tools = testTools
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "" || len(resp.ToolCalls) != 1 || string(resp.ToolCalls[0].Arguments) != `{}` || resp.FinishReason != llm.FinishToolCalls {
		t.Fatalf("resp %+v", resp)
	}
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: resp.ToolCalls},
		llm.Message{Role: llm.RoleTool, ToolCallID: resp.ToolCalls[0].ID, Content: "no match"})
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if body := string(s.Requests()[1].Body); strings.Contains(body, `"content":""`) {
		t.Errorf("an empty assistant text was sent: %s", body)
	}
}

// TestToolCallStreamVariants: servers that number every call 0 or
// finish a turn of calls with "stop", and arguments cut off.
func TestToolCallStreamVariants(t *testing.T) {
	chunk := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = fmt.Sprintf("%q", finish)
		}
		return fmt.Sprintf(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, f)
	}
	tests := []struct {
		name   string
		events []string
		want   []string
		finish string
	}{
		{"every call numbered 0, finished with stop", []string{
			chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"x\"}"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"id":"b","type":"function","function":{"name":"grep","arguments":"{\"pattern\""}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":":\"y\"}"}}]}`, ""),
			chunk(`{}`, "stop"),
		}, []string{`a read_file {"path":"x"}`, `b grep {"pattern":"y"}`}, llm.FinishToolCalls},
		{"pieces of two calls interleaved", []string{
			chunk(`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"grep","arguments":"{\"pattern\""}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"x\"}"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":1,"function":{"arguments":":\"y\"}"}}]}`, ""),
			chunk(`{}`, "tool_calls"),
		}, []string{`a read_file {"path":"x"}`, `b grep {"pattern":"y"}`}, llm.FinishToolCalls},
		{"arguments cut off", []string{
			chunk(`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"READ"}}]}`, ""),
			chunk(`{}`, "length"),
		}, []string{`a read_file "{\"path\":\"READ"`}, llm.FinishLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				for _, e := range tt.events {
					fmt.Fprint(w, e)
				}
				fmt.Fprint(w, "data: [DONE]\n\n")
			}))
			defer srv.Close()
			p, err := New(Config{BaseURL: srv.URL + "/v1", APIKey: testKey})
			if err != nil {
				t.Fatal(err)
			}
			req := ask("look")
			req.Tools = testTools
			resp, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range resp.ToolCalls {
				got = append(got, c.ID+" "+c.Name+" "+string(c.Arguments))
			}
			if !slices.Equal(got, tt.want) || resp.FinishReason != tt.finish {
				t.Errorf("calls %q finish %q, want %q %q", got, resp.FinishReason, tt.want, tt.finish)
			}
			// Whatever was streamed, the answer can be journaled.
			if _, err := json.Marshal(resp); err != nil {
				t.Errorf("the response does not marshal: %v", err)
			}
		})
	}
}

func TestBadToolRequests(t *testing.T) {
	s := server(t, llmtest.Config{})
	p := provider(t, s, nil)
	withTools := func(tools ...llm.Tool) *llm.Request {
		r := ask("x")
		r.Tools = tools
		return r
	}
	for name, req := range map[string]*llm.Request{
		"result without a call id": {Model: "openai:x", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}, {Role: llm.RoleTool, Content: "r"}}},
		"bad tool name":            withTools(llm.Tool{Name: "read file"}),
		"two tools of one name":    withTools(testTools[0], testTools[0]),
		"parameters not an object": withTools(llm.Tool{Name: "t", Parameters: json.RawMessage(`"string"`)}),
	} {
		if _, err := p.Complete(context.Background(), req); !errors.Is(err, llm.ErrBadRequest) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if len(s.Requests()) != 0 {
		t.Errorf("bad requests reached the server")
	}
}

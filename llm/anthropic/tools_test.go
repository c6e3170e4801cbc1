package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

// readFileParams lists its properties out of alphabetical order: they must
// reach the model in this order.
const readFileParams = `{"type":"object","properties":{"path":{"type":"string"},"lines":{"type":"string"}},"required":["path"]}`

var testTools = []llm.Tool{
	{Name: "read_file", Description: "Read a file of the project.", Parameters: json.RawMessage(readFileParams)},
	{Name: "grep", Description: "Search the project."},
}

var readAndGrep = []llmtest.ToolCall{
	{Name: "read_file", Arguments: map[string]any{"path": "README.md"}},
	{Name: "grep", Arguments: map[string]any{"pattern": "TODO"}},
}

// toolBody is the part of a request body the tool tests look at.
type toolBody struct {
	Tools []struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"input_schema"`
		CacheControl json.RawMessage `json:"cache_control"`
	} `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Type         string          `json:"type"`
			Text         string          `json:"text"`
			ID           string          `json:"id"`
			Name         string          `json:"name"`
			Input        json.RawMessage `json:"input"`
			ToolUseID    string          `json:"tool_use_id"`
			Content      json.RawMessage `json:"content"`
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"content"`
	} `json:"messages"`
}

func toolSent(t *testing.T, rec llmtest.Recorded) toolBody {
	t.Helper()
	var b toolBody
	if err := json.Unmarshal(rec.Body, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// next is the request of the next round: req with the answer's calls and
// their results appended.
func next(req *llm.Request, resp *llm.Response) *llm.Request {
	n := req.Clone()
	n.Messages = append(n.Messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
	for _, c := range resp.ToolCalls {
		n.Messages = append(n.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: "result of " + c.Name})
	}
	return n
}

func TestToolLoop(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "streamed"}[streaming], func(t *testing.T) {
			s := server(t, llmtest.Config{Rules: []llmtest.Rule{
				{Reply: "Let me look.", ToolCalls: readAndGrep},
				{JSON: map[string]any{"verdict": "pass", "score": 4}},
			}})
			p := provider(t, s, nil)
			req := ask("review")
			req.System = "You review."
			req.Tools = testTools
			req.Schema = &llm.Schema{Name: "verdict", JSON: json.RawMessage(objSchema)}
			var deltas []string
			if streaming {
				req.OnDelta = func(d string) { deltas = append(deltas, d) }
			}

			resp, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.FinishReason != llm.FinishToolCalls || resp.Text != "Let me look." || resp.JSON != nil || len(resp.ToolCalls) != 2 {
				t.Fatalf("round 1: %+v", resp)
			}
			for i, want := range []string{`read_file {"path":"README.md"}`, `grep {"pattern":"TODO"}`} {
				c := resp.ToolCalls[i]
				if got := c.Name + " " + string(c.Arguments); got != want || !strings.HasPrefix(c.ID, "toolu_llmtest_") {
					t.Errorf("call %d = %s %q, want %s", i, got, c.ID, want)
				}
			}
			// The calls' input is not the answer: only the text streams.
			if streaming && strings.Join(deltas, "") != "Let me look." {
				t.Errorf("round 1 deltas %q", deltas)
			}
			rec := s.Requests()[0]
			b := toolSent(t, rec)
			// The caller's tools, then the answer tool, none forced; the
			// fake finds the answer tool by its description.
			if len(b.Tools) != 3 || b.Tools[0].Name != "read_file" || string(b.Tools[0].InputSchema) != readFileParams ||
				b.Tools[1].Name != "grep" || string(b.Tools[1].InputSchema) != `{"type":"object"}` || b.Tools[2].Name != "verdict" ||
				b.ToolChoice == nil || b.ToolChoice.Type != "any" {
				t.Errorf("tools sent: %s", rec.Body)
			}
			if !slices.Equal(rec.Tools, []string{"read_file", "grep"}) || rec.SchemaName != "verdict" || string(rec.Schema) != objSchema {
				t.Errorf("the fake saw tools %q and answer tool %q", rec.Tools, rec.SchemaName)
			}

			deltas = nil
			resp2, err := p.Complete(context.Background(), next(req, resp))
			if err != nil {
				t.Fatal(err)
			}
			if resp2.FinishReason != llm.FinishTool || resp2.ToolCalls != nil || string(resp2.JSON) != `{"score":4,"verdict":"pass"}` {
				t.Errorf("round 2: %+v", resp2)
			}
			if streaming && strings.Join(deltas, "") != `{"score":4,"verdict":"pass"}` {
				t.Errorf("round 2 deltas %q", deltas)
			}
			rec = s.Requests()[1]
			b = toolSent(t, rec)
			// The calls go back as tool_use blocks after the text, the two
			// results as one user turn.
			if rec.ToolResults != 2 || len(b.Messages) != 3 {
				t.Fatalf("round 2 sent: %s", rec.Body)
			}
			a, u := b.Messages[1], b.Messages[2]
			if a.Role != "assistant" || len(a.Content) != 3 || a.Content[0].Text != "Let me look." ||
				a.Content[1].Type != "tool_use" || a.Content[1].ID != resp.ToolCalls[0].ID || string(a.Content[1].Input) != `{"path":"README.md"}` ||
				u.Role != "user" || len(u.Content) != 2 || u.Content[0].Type != "tool_result" || u.Content[0].ToolUseID != resp.ToolCalls[0].ID ||
				u.Content[1].ToolUseID != resp.ToolCalls[1].ID || !strings.Contains(string(u.Content[1].Content), "result of grep") {
				t.Errorf("round 2 messages: %s", rec.Body)
			}
		})
	}
}

// TestToolsWithoutSchema: tools for a free answer are the model's to
// call or not (tool_choice auto), and no answer tool is added.
func TestToolsWithoutSchema(t *testing.T) {
	s := server(t, llmtest.Config{Rules: []llmtest.Rule{{ToolCalls: readAndGrep[:1]}, {Reply: "It is fine."}}})
	p := provider(t, s, nil)
	req := ask("review")
	req.Tools = testTools
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// A turn of calls and no text is an answer, not an empty one.
	if resp.FinishReason != llm.FinishToolCalls || resp.Text != "" || len(resp.ToolCalls) != 1 {
		t.Fatalf("round 1: %+v", resp)
	}
	b := toolSent(t, s.Requests()[0])
	if len(b.Tools) != 2 || b.ToolChoice == nil || b.ToolChoice.Type != "auto" {
		t.Errorf("sent: %s", s.Requests()[0].Body)
	}
	resp, err = p.Complete(context.Background(), next(req, resp))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "It is fine." || resp.FinishReason != llm.FinishStop {
		t.Errorf("round 2: %+v", resp)
	}
	// An assistant turn of calls alone goes back without an empty text block.
	if b := toolSent(t, s.Requests()[1]); len(b.Messages[1].Content) != 1 || b.Messages[1].Content[0].Type != "tool_use" {
		t.Errorf("round 2 sent: %s", s.Requests()[1].Body)
	}
}

// TestToolResultsAndText: results and the user text after them are one
// user turn, results first; an empty result is sent with no content.
func TestToolResultsAndText(t *testing.T) {
	s := server(t, llmtest.Config{})
	p := provider(t, s, nil)
	req := ask("review")
	req.Tools = testTools
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
			{ID: "toolu_a", Name: "read_file", Arguments: json.RawMessage(`{"path":"x"}`)},
			{ID: "toolu_b", Name: "grep", Arguments: json.RawMessage(`"cut off`)},
		}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_a", Content: "contents"},
		llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_b"},
		llm.Message{Role: llm.RoleUser, Content: "Now answer."})
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	rec := s.Requests()[0]
	b := toolSent(t, rec)
	if len(b.Messages) != 3 {
		t.Fatalf("sent: %s", rec.Body)
	}
	a, u := b.Messages[1].Content, b.Messages[2].Content
	if len(a) != 2 || string(a[1].Input) != `{}` {
		t.Errorf("arguments that are no object went back as %s", a[1].Input)
	}
	if len(u) != 3 || u[0].Type != "tool_result" || u[1].Type != "tool_result" || u[1].Content != nil || u[2].Type != "text" || u[2].Text != "Now answer." {
		t.Errorf("user turn: %s", rec.Body)
	}
	if rec.ToolResults != 2 || rec.LastUser() != "Now answer." {
		t.Errorf("the fake saw %d results, last user %q", rec.ToolResults, rec.LastUser())
	}
}

// TestToolLoopCache: the system prompt's breakpoint still caches the tools
// before it, and each round of a loop marks the end of its conversation,
// so that the next round reads it all from the cache.
func TestToolLoopCache(t *testing.T) {
	s := server(t, llmtest.Config{PrefixCache: true, Rules: []llmtest.Rule{
		{Round: 1, ToolCalls: readAndGrep[:1]},
		{Round: 2, ToolCalls: readAndGrep[1:]},
		{JSON: map[string]any{"verdict": "pass", "score": 1}},
	}})
	p := provider(t, s, nil)
	shared := strings.Repeat("The shared review rules and the material under review. ", 160) // ~8.8 KB
	req := ask("review")
	req.System = shared + "You are the security reviewer."
	req.SharedPrefix = len(shared)
	req.Tools = testTools
	req.Schema = &llm.Schema{Name: "verdict", JSON: json.RawMessage(objSchema)}

	var usage []llm.Usage
	for round := 1; round <= 3; round++ {
		resp, err := p.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		usage = append(usage, resp.Usage)
		if round < 3 {
			// The results are long enough to be worth caching.
			req = next(req, resp)
			req.Messages[len(req.Messages)-1].Content = strings.Repeat("line of the file\n", 300)
		}
	}
	recs := s.Requests()
	for i, want := range []int{1, 2, 2} {
		if recs[i].CacheControlBlocks != want {
			t.Errorf("round %d: %d breakpoints, want %d", i+1, recs[i].CacheControlBlocks, want)
		}
	}
	if usage[0].CacheWriteTokens < 2048 || usage[1].CachedInputTokens != usage[0].CacheWriteTokens || usage[1].CacheWriteTokens == 0 ||
		usage[2].CachedInputTokens != usage[0].CacheWriteTokens+usage[1].CacheWriteTokens {
		t.Errorf("usage by round: %+v", usage)
	}
}

// TestAnswerBesideCalls: an answer given with calls beside it ends the
// loop.
func TestAnswerBesideCalls(t *testing.T) {
	s := server(t, llmtest.Config{Rules: []llmtest.Rule{{ToolCalls: []llmtest.ToolCall{
		readAndGrep[0], {Name: "verdict", Arguments: map[string]any{"verdict": "fail", "score": 2}},
	}}}})
	req := ask("review")
	req.Tools = testTools
	req.Schema = &llm.Schema{Name: "verdict", JSON: json.RawMessage(objSchema)}
	resp, err := provider(t, s, nil).Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ToolCalls != nil || string(resp.JSON) != `{"score":2,"verdict":"fail"}` || resp.FinishReason != llm.FinishTool {
		t.Errorf("resp %+v", resp)
	}
}

func TestBadToolRequests(t *testing.T) {
	s := server(t, llmtest.Config{})
	p := provider(t, s, nil)
	collide := ask("x")
	collide.Tools = []llm.Tool{{Name: "verdict"}}
	collide.Schema = &llm.Schema{Name: "verdict", JSON: json.RawMessage(objSchema)}
	twice := ask("x")
	twice.Tools = []llm.Tool{testTools[1], testTools[1]}
	for name, req := range map[string]*llm.Request{
		"result without a call id":          {Model: "anthropic:x", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}, {Role: llm.RoleTool, Content: "r"}}},
		"a tool named as the answer's tool": collide,
		"two tools of one name":             twice,
	} {
		if _, err := p.Complete(context.Background(), req); !errors.Is(err, llm.ErrBadRequest) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if len(s.Requests()) != 0 {
		t.Errorf("bad requests reached the server")
	}
}

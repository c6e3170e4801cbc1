package llmtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// loopConfig is the script of a two-round tool loop, as a YAML file
// writes it: round 1 reads a file, round 2 answers.
const loopConfig = `
rules:
  - reply: Let me look.
    tool_calls:
      - name: read_file
        arguments: {path: README.md}
      - name: grep
        arguments: {pattern: TODO}
  - json: {verdict: pass}
`

func loadLoop(t *testing.T) Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "loop.yaml")
	if err := os.WriteFile(p, []byte(loopConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

var readFileTool = map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []string{"path"}}

const verdictSchema = `{"type":"object","properties":{"verdict":{"type":"string"}},"required":["verdict"]}`

// oaiToolBody is an OpenAI request that offers read_file and grep and
// asks for a verdict, after the given conversation.
func oaiToolBody(stream bool, msgs ...map[string]any) map[string]any {
	b := map[string]any{
		"model":    "m",
		"messages": append([]map[string]any{{"role": "system", "content": "sys"}, {"role": "user", "content": "review"}}, msgs...),
		"tools": []map[string]any{
			{"type": "function", "function": map[string]any{"name": "read_file", "description": "Read a file.", "parameters": readFileTool}},
			{"type": "function", "function": map[string]any{"name": "grep", "description": "Search.", "parameters": readFileTool}},
		},
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "verdict", "schema": json.RawMessage(verdictSchema)}},
	}
	if stream {
		b["stream"] = true
	}
	return b
}

// oaiToolAnswer reads an OpenAI answer, whole or streamed, into its text,
// its calls ("name args" with ids) and its finish reason.
func oaiToolAnswer(t *testing.T, r resp, stream bool) (text string, ids, calls []string, finish string) {
	t.Helper()
	type callJSON struct {
		Index    int    `json:"index"`
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if !stream {
		var out struct {
			Choices []struct {
				Message struct {
					Content   *string    `json:"content"`
					ToolCalls []callJSON `json:"tool_calls"`
				} `json:"message"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(r.body, &out); err != nil || len(out.Choices) != 1 {
			t.Fatalf("answer %s: %v", r.body, err)
		}
		m := out.Choices[0].Message
		if m.Content != nil {
			text = *m.Content
		} else if len(m.ToolCalls) == 0 {
			t.Errorf("content null without tool calls")
		}
		for _, c := range m.ToolCalls {
			if c.Type != "function" {
				t.Errorf("call type %q", c.Type)
			}
			ids = append(ids, c.ID)
			calls = append(calls, c.Function.Name+" "+c.Function.Arguments)
		}
		return text, ids, calls, out.Choices[0].FinishReason
	}
	var names, args []string
	for _, e := range parseSSE(t, r.body) {
		if e.data == "[DONE]" {
			continue
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content   *string    `json:"content"`
					ToolCalls []callJSON `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(e.data), &ch); err != nil {
			t.Fatalf("%s: %v", e.data, err)
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != nil {
				text += *c.Delta.Content
			}
			for _, tc := range c.Delta.ToolCalls {
				if tc.Index == len(names) {
					names, args, ids = append(names, tc.Function.Name), append(args, ""), append(ids, tc.ID)
				} else if tc.Function.Name != "" || tc.ID != "" {
					t.Errorf("a later piece of call %d repeats its name or id: %+v", tc.Index, tc)
				}
				args[tc.Index] += tc.Function.Arguments
			}
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	for i := range names {
		calls = append(calls, names[i]+" "+args[i])
	}
	return text, ids, calls, finish
}

func TestToolLoopOpenAI(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "streamed"}[stream], func(t *testing.T) {
			s := newServer(t, loadLoop(t))
			// Round 1: the request offers tools, no result yet: the calls.
			text, ids, calls, finish := oaiToolAnswer(t, oaiCall(t, s, oaiToolBody(stream), nil), stream)
			want := []string{`read_file {"path":"README.md"}`, `grep {"pattern":"TODO"}`}
			if text != "Let me look." || !slices.Equal(calls, want) || finish != "tool_calls" ||
				len(ids) != 2 || ids[0] == ids[1] || !strings.HasPrefix(ids[0], "call_llmtest_") {
				t.Fatalf("round 1: text %q calls %q ids %q finish %q", text, calls, ids, finish)
			}
			// Round 2 carries both results: the rule passes, the answer is JSON.
			assistant := map[string]any{"role": "assistant", "content": nil, "tool_calls": []map[string]any{
				{"id": ids[0], "type": "function", "function": map[string]any{"name": "read_file", "arguments": `{"path":"README.md"}`}},
				{"id": ids[1], "type": "function", "function": map[string]any{"name": "grep", "arguments": `{"pattern":"TODO"}`}},
			}}
			body := oaiToolBody(stream, assistant,
				map[string]any{"role": "tool", "tool_call_id": ids[0], "content": "# README"},
				map[string]any{"role": "tool", "tool_call_id": ids[1], "content": "no match"})
			text, _, calls, finish = oaiToolAnswer(t, oaiCall(t, s, body, nil), stream)
			if text != `{"verdict":"pass"}` || calls != nil || finish != "stop" {
				t.Errorf("round 2: text %q calls %q finish %q", text, calls, finish)
			}

			recs := s.Requests()
			if len(recs) != 2 || !slices.Equal(recs[0].Tools, []string{"read_file", "grep"}) || recs[0].ToolResults != 0 || recs[0].Round() != 1 ||
				recs[1].ToolResults != 2 || recs[1].Round() != 2 || recs[1].SchemaName != "verdict" {
				t.Fatalf("records: %+v", recs)
			}
			m := recs[1].Messages
			if len(m) != 4 || len(m[1].ToolCalls) != 2 || m[1].ToolCalls[1].Name != "grep" ||
				string(m[1].ToolCalls[0].Arguments) != `{"path":"README.md"}` || m[2].Role != "tool" || m[2].ToolCallID != ids[0] || m[3].Text != "no match" ||
				recs[1].LastUser() != "review" {
				t.Errorf("round 2 messages: %+v", m)
			}
		})
	}
}

// antToolBody is an Anthropic request as sot's provider sends one: tools
// read_file and grep, then the answer tool, with tool_choice "any".
func antToolBody(stream bool, msgs ...map[string]any) map[string]any {
	b := antBody("m", "sys", "review")
	b["messages"] = append([]map[string]any{{"role": "user", "content": "review"}}, msgs...)
	b["tools"] = []map[string]any{
		{"name": "read_file", "description": "Read a file.", "input_schema": readFileTool},
		{"name": "grep", "description": "Search.", "input_schema": readFileTool},
		{"name": "verdict", "description": "When you are done, give your complete answer as the input of this tool.", "input_schema": json.RawMessage(verdictSchema)},
	}
	b["tool_choice"] = map[string]any{"type": "any"}
	if stream {
		b["stream"] = true
	}
	return b
}

type antBlockOut struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// antToolAnswer reads an Anthropic answer, whole or streamed, into its
// content blocks and stop reason.
func antToolAnswer(t *testing.T, r resp, stream bool) ([]antBlockOut, string) {
	t.Helper()
	if !stream {
		var out struct {
			Content    []antBlockOut `json:"content"`
			StopReason string        `json:"stop_reason"`
		}
		if err := json.Unmarshal(r.body, &out); err != nil {
			t.Fatalf("answer %s: %v", r.body, err)
		}
		return out.Content, out.StopReason
	}
	var blocks []antBlockOut
	var partial []string
	stop := ""
	for _, e := range parseSSE(t, r.body) {
		var ev struct {
			Index        int         `json:"index"`
			ContentBlock antBlockOut `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(e.data), &ev); err != nil {
			t.Fatalf("%s: %v", e.data, err)
		}
		switch e.name {
		case "content_block_start":
			if ev.Index != len(blocks) {
				t.Fatalf("block %d starts as block %d", len(blocks), ev.Index)
			}
			blocks, partial = append(blocks, ev.ContentBlock), append(partial, "")
		case "content_block_delta":
			blocks[ev.Index].Text += ev.Delta.Text
			partial[ev.Index] += ev.Delta.PartialJSON
		case "message_delta":
			stop = ev.Delta.StopReason
		}
	}
	for i := range blocks {
		if blocks[i].Type == "tool_use" {
			blocks[i].Input = json.RawMessage(partial[i])
		}
	}
	return blocks, stop
}

func TestToolLoopAnthropic(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "streamed"}[stream], func(t *testing.T) {
			s := newServer(t, loadLoop(t))
			blocks, stop := antToolAnswer(t, antCall(t, s, antToolBody(stream), nil), stream)
			if len(blocks) != 3 || blocks[0].Type != "text" || blocks[0].Text != "Let me look." ||
				blocks[1].Type != "tool_use" || blocks[1].Name != "read_file" || string(blocks[1].Input) != `{"path":"README.md"}` ||
				blocks[2].Name != "grep" || blocks[1].ID == blocks[2].ID || !strings.HasPrefix(blocks[1].ID, "toolu_llmtest_") || stop != "tool_use" {
				t.Fatalf("round 1: %+v stop %q", blocks, stop)
			}
			assistant := map[string]any{"role": "assistant", "content": []map[string]any{
				{"type": "text", "text": "Let me look."},
				{"type": "tool_use", "id": blocks[1].ID, "name": "read_file", "input": json.RawMessage(blocks[1].Input)},
				{"type": "tool_use", "id": blocks[2].ID, "name": "grep", "input": json.RawMessage(blocks[2].Input)},
			}}
			results := map[string]any{"role": "user", "content": []map[string]any{
				{"type": "tool_result", "tool_use_id": blocks[1].ID, "content": "# README"},
				{"type": "tool_result", "tool_use_id": blocks[2].ID, "content": []map[string]any{{"type": "text", "text": "no match"}}},
			}}
			blocks2, stop := antToolAnswer(t, antCall(t, s, antToolBody(stream, assistant, results), nil), stream)
			if len(blocks2) != 1 || blocks2[0].Type != "tool_use" || blocks2[0].Name != "verdict" || string(blocks2[0].Input) != `{"verdict":"pass"}` || stop != "tool_use" {
				t.Errorf("round 2: %+v stop %q", blocks2, stop)
			}

			recs := s.Requests()
			if len(recs) != 2 || !slices.Equal(recs[0].Tools, []string{"read_file", "grep"}) || recs[0].SchemaName != "verdict" ||
				string(recs[0].Schema) != verdictSchema || recs[0].ToolResults != 0 || recs[1].ToolResults != 2 || recs[1].Round() != 2 {
				t.Fatalf("records: %+v", recs)
			}
			// The results are recorded as tool turns, as OpenAI's are.
			m := recs[1].Messages
			if len(m) != 4 || m[1].Text != "Let me look." || len(m[1].ToolCalls) != 2 || m[1].ToolCalls[0].Name != "read_file" ||
				m[2].Role != "tool" || m[2].ToolCallID != blocks[1].ID || m[2].Text != "# README" || m[3].Text != "no match" || recs[1].LastUser() != "review" {
				t.Errorf("round 2 messages: %+v", m)
			}
		})
	}
}

func TestToolRules(t *testing.T) {
	call := func(name string) []ToolCall { return []ToolCall{{Name: name, Arguments: map[string]any{"path": name}}} }
	s := newServer(t, Config{Rules: []Rule{
		{Round: 2, ToolCalls: call("second")},
		{Round: 3, Reply: "third round"},
		{ToolCalls: call("first")},
	}})
	// Without tools a tool-call rule passes, whatever the round.
	if got := oaiCall(t, s, oaiBody("m", "", "hi"), nil).text(t); got != "ok" {
		t.Errorf("no tools: %q", got)
	}
	// Round 1 falls through to the unrestricted rule, round 2 gets its
	// own, round 3 the text.
	var msgs []map[string]any
	for round, want := range []string{"first", "second", ""} {
		r := oaiCall(t, s, oaiToolBody(false, msgs...), nil)
		text, ids, calls, _ := oaiToolAnswer(t, r, false)
		if want == "" {
			if text != "third round" || calls != nil {
				t.Errorf("round %d: %q %q", round+1, text, calls)
			}
			break
		}
		if len(calls) != 1 || !strings.HasPrefix(calls[0], want+" ") {
			t.Fatalf("round %d: %s", round+1, r.body)
		}
		msgs = append(msgs,
			map[string]any{"role": "assistant", "tool_calls": []map[string]any{{"id": ids[0], "type": "function", "function": map[string]any{"name": want, "arguments": "{}"}}}},
			map[string]any{"role": "tool", "tool_call_id": ids[0], "content": "x"})
	}

	// A computed reply with tool calls to a request without tools is the
	// script's mistake, and says so.
	s.SetConfig(Config{Rules: []Rule{{Respond: func(*Recorded) Reply { return Reply{ToolCalls: call("x")} }}}})
	r := oaiCall(t, s, oaiBody("m", "", "hi"), nil)
	if r.status != 500 || !strings.Contains(string(r.body), "offers no tools") {
		t.Errorf("tool calls without tools: %d %s", r.status, r.body)
	}
}

// TestToolWireChecks: the server refuses tool conversations the APIs
// refuse, so that a provider's mistakes fail its tests.
func TestToolWireChecks(t *testing.T) {
	s := newServer(t, Config{})
	oaiCallMsg := map[string]any{"role": "assistant", "tool_calls": []map[string]any{{"id": "call_1", "type": "function", "function": map[string]any{"name": "read_file", "arguments": "{}"}}}}
	for name, body := range map[string]map[string]any{
		"tool turn without a call": oaiToolBody(false, map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "x"}),
		"call without a tool turn": oaiToolBody(false, oaiCallMsg, map[string]any{"role": "user", "content": "go on"}),
		"result of another call":   oaiToolBody(false, oaiCallMsg, map[string]any{"role": "tool", "tool_call_id": "call_2", "content": "x"}),
		"call left at the end":     oaiToolBody(false, oaiCallMsg),
		"bad tool name":            {"model": "m", "messages": []map[string]any{{"role": "user", "content": "x"}}, "tools": []map[string]any{{"type": "function", "function": map[string]any{"name": "read file"}}}},
	} {
		if r := oaiCall(t, s, body, nil); r.status != 400 {
			t.Errorf("openai, %s: %d %s", name, r.status, r.body)
		}
	}

	antUse := map[string]any{"role": "assistant", "content": []map[string]any{{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": map[string]any{}}, {"type": "tool_use", "id": "toolu_2", "name": "grep", "input": map[string]any{}}}}
	result := func(id string) map[string]any {
		return map[string]any{"type": "tool_result", "tool_use_id": id, "content": "x"}
	}
	dup := antToolBody(false)
	dup["tools"] = append(dup["tools"].([]map[string]any), map[string]any{"name": "grep", "input_schema": readFileTool})
	for name, body := range map[string]map[string]any{
		"results split over two turns": antToolBody(false, antUse,
			map[string]any{"role": "user", "content": []map[string]any{result("toolu_1")}},
			map[string]any{"role": "user", "content": []map[string]any{result("toolu_2")}}),
		"text before the results": antToolBody(false, antUse,
			map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "here"}, result("toolu_1"), result("toolu_2")}}),
		"result of no call":    antToolBody(false, map[string]any{"role": "user", "content": []map[string]any{result("toolu_9")}}),
		"call left at the end": antToolBody(false, antUse),
		"duplicate tool names": dup,
	} {
		if r := antCall(t, s, body, nil); r.status != 400 {
			t.Errorf("anthropic, %s: %d %s", name, r.status, r.body)
		}
	}
	// Text after the results is fine, and is the last user turn.
	ok := antToolBody(false, antUse, map[string]any{"role": "user", "content": []map[string]any{result("toolu_1"), result("toolu_2"), {"type": "text", "text": "now answer"}}})
	if r := antCall(t, s, ok, nil); r.status != 200 {
		t.Fatalf("results then text: %d %s", r.status, r.body)
	}
	recs := s.Requests()
	if last := recs[len(recs)-1]; last.ToolResults != 2 || last.LastUser() != "now answer" || last.afterToolResult() {
		t.Errorf("record: %+v", last)
	}
}

func TestToolCallsConfig(t *testing.T) {
	cfg := loadLoop(t)
	if len(cfg.Rules[0].ToolCalls) != 2 || cfg.Rules[0].ToolCalls[0].Name != "read_file" || cfg.Rules[0].Reply != "Let me look." {
		t.Errorf("rules = %+v", cfg.Rules)
	}
	dir := t.TempDir()
	for _, tt := range []struct{ name, content, want string }{
		{"bad name", "rules:\n  - tool_calls: [{name: read file}]\n", "rules[0].tool_calls[0].name"},
		{"arguments not an object", "rules:\n  - tool_calls: [{name: read_file, arguments: [1, 2]}]\n", "rules[0].tool_calls[0].arguments: must be a JSON object"},
		{"json and tool calls", "rules:\n  - json: {a: 1}\n    tool_calls: [{name: x}]\n", "rules[0].tool_calls: a rule answers with tool_calls or with json, not both"},
		{"negative round", "rules:\n  - round: -1\n", "rules[0].round"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, "bad.yaml")
			if err := os.WriteFile(p, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadConfig(p); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

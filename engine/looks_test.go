package engine

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/anthropic"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/middleware"
	"github.com/sotlabs/sot/llm/openai"
)

// lookTools are the tools a looking task offers in these tests.
var lookTools = []llm.Tool{{Name: "read_file", Description: "Read a file of the project.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}

// lookRequest asks for a verdict, as a structured answer.
func lookRequest(model string) *llm.Request {
	return &llm.Request{Model: model, System: "You review.", Label: "review/x",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Review it."}},
		Schema:   &llm.Schema{Name: "verdict", JSON: json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string"}},"required":["verdict"],"additionalProperties":false}`)}}
}

// lookProvider is the provider name ("openai" or "anthropic") against
// srv, and a model it serves.
func lookProvider(t *testing.T, name string, srv *llmtest.Server) (llm.Provider, string) {
	t.Helper()
	if name == "anthropic" {
		p, err := anthropic.New(anthropic.Config{BaseURL: srv.AnthropicBaseURL(), APIKey: "sk-ant-looks-0123456789"})
		if err != nil {
			t.Fatal(err)
		}
		return p, "anthropic:claude-sonnet-4-5"
	}
	p, err := openai.New(openai.Config{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-looks-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	return p, "openai:gpt-4.1"
}

// fileLooks answers read_file from a map, and counts what it ran.
func fileLooks(files map[string]string, ran *[]string) *Looks {
	return &Looks{Tools: lookTools, Run: func(_ context.Context, c llm.ToolCall) (string, error) {
		var a struct{ Path string }
		if err := json.Unmarshal(c.Arguments, &a); err != nil {
			return "bad arguments: " + err.Error(), nil
		}
		*ran = append(*ran, a.Path)
		if text, ok := files[a.Path]; ok {
			return text, nil
		}
		return "no such file: " + a.Path, nil
	}}
}

// The model looks at a file in round 1 and answers in round 2, through
// both providers' native tool calling: the answer is round 2's, the tool
// result reached round 2's request, and usage adds up both rounds.
func TestConverseRunsToolRounds(t *testing.T) {
	cfg := llmtest.Config{Rules: []llmtest.Rule{
		{Reply: "Let me read it.", ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: map[string]any{"path": "main.go"}}}},
		{JSON: map[string]any{"verdict": "main.go divides by zero"}},
	}}
	for _, name := range []string{"openai", "anthropic"} {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.NewServer(cfg)
			defer srv.Close()
			p, model := lookProvider(t, name, srv)
			var ran, deltas []string
			req := lookRequest(model)
			req.OnDelta = func(s string) { deltas = append(deltas, s) }
			resp, err := Converse(context.Background(), p, req, fileLooks(map[string]string{"main.go": "x := 1 / 0"}, &ran))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(resp.JSON), "divides by zero") {
				t.Errorf("answer %s, want round 2's verdict", resp.JSON)
			}
			// The round of calls says its answer began (the engine lets the
			// calls that share its prompt prefix go then): its text does,
			// or, for calls without text, one empty delta.
			if len(deltas) < 2 || deltas[0] != "Let " || slices.Contains(deltas, "") {
				t.Errorf("deltas %q; want the text before the calls, then the answer's, and no empty delta", deltas)
			}
			if strings.Join(ran, ",") != "main.go" {
				t.Errorf("tools ran %v, want main.go once", ran)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			if len(reqs[0].Tools) != 1 || reqs[1].ToolResults != 1 {
				t.Errorf("round 1 offered %v, round 2 carried %d tool results; want read_file and 1", reqs[0].Tools, reqs[1].ToolResults)
			}
			last := reqs[1].Messages[len(reqs[1].Messages)-1]
			if !strings.Contains(last.Text, "1 / 0") {
				t.Errorf("round 2's last turn %+v does not carry the file", last)
			}
			if resp.Calls != 2 || len(resp.Rounds) != 1 || resp.Usage.InputTokens == 0 {
				t.Errorf("calls %d, rounds %v, usage %+v; want 2 calls, 1 earlier round, both rounds' tokens", resp.Calls, resp.Rounds, resp.Usage)
			}
		})
	}
}

// A model that keeps calling tools is told its looks are spent, gets one
// more round, and then fails with ErrLookedTooLong: nothing loops forever.
// Each round of calls without text says its answer began with one empty
// delta.
func TestConverseStopsAModelThatKeepsLooking(t *testing.T) {
	for _, name := range []string{"openai", "anthropic"} {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
				{Round: 1, ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: map[string]any{"path": "a.go"}}}},
				{Round: 2, ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: map[string]any{"path": "b.go"}}}},
				{Round: 3, ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: map[string]any{"path": "c.go"}}}},
				{Round: 4, ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: map[string]any{"path": "d.go"}}}},
			}})
			defer srv.Close()
			p, model := lookProvider(t, name, srv)
			var ran, deltas []string
			l := fileLooks(map[string]string{}, &ran)
			l.MaxRounds = 2
			req := lookRequest(model)
			req.OnDelta = func(s string) { deltas = append(deltas, s) }
			_, err := Converse(context.Background(), p, req, l)
			if !errors.Is(err, ErrLookedTooLong) {
				t.Fatalf("err = %v, want ErrLookedTooLong", err)
			}
			if strings.Join(ran, ",") != "a.go,b.go" {
				t.Errorf("tools ran %v, want the first two rounds' only", ran)
			}
			reqs := srv.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d requests, want 4 (2 rounds answered, 1 told its looks are spent, 1 more)", len(reqs))
			}
			last := reqs[3].Messages[len(reqs[3].Messages)-1]
			if !strings.Contains(last.Text, "looks for this review are spent") {
				t.Errorf("the round past the limit was answered %q, want the note that the looks are spent", last.Text)
			}
			if len(deltas) != 4 || strings.Join(deltas, "") != "" {
				t.Errorf("deltas %q, want one empty delta for each of the 4 rounds", deltas)
			}
		})
	}
}

// A resumed run replays every round from the journal: the tools run again
// (so the same requests are built) but no request reaches the model.
func TestConverseReplaysRoundsFromTheJournal(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{
		{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: map[string]any{"path": "main.go"}}}},
		{JSON: map[string]any{"verdict": "fine"}},
	}})
	defer srv.Close()
	backend, err := openai.New(openai.Config{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-looks-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	run := func() (*llm.Response, []string) {
		j, err := middleware.OpenJournal(path)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		var ran []string
		resp, err := Converse(context.Background(), j.Wrap(backend), lookRequest("openai:gpt-4.1"), fileLooks(map[string]string{"main.go": "package main"}, &ran))
		if err != nil {
			t.Fatal(err)
		}
		return resp, ran
	}
	first, _ := run()
	if srv.Count() != 2 {
		t.Fatalf("first run: %d requests, want 2", srv.Count())
	}
	again, ran := run()
	if srv.Count() != 2 {
		t.Errorf("the resumed run sent %d more requests, want none", srv.Count()-2)
	}
	if len(ran) != 1 || string(again.JSON) != string(first.JSON) {
		t.Errorf("resumed: tools ran %v, answer %s; want one look and the same answer %s", ran, again.JSON, first.JSON)
	}
	if again.Source != llm.SourceJournal || len(again.Rounds) != 1 || again.Rounds[0] != llm.SourceJournal {
		t.Errorf("resumed answer from %q, rounds %v; want every round from the journal", again.Source, again.Rounds)
	}
}

// An endpoint that refuses the tools on the first round (a model without
// tool calling answers 400) gets the request Without gives instead, and
// Without is told why; without Without, the refusal is the error.
func TestConverseSendsTheRequestWithoutToolsWhenRefused(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(rec *llmtest.Recorded) llmtest.Reply {
		if len(rec.Tools) > 0 {
			return llmtest.Reply{Fault: llmtest.Fault400}
		}
		return llmtest.Reply{JSON: map[string]any{"verdict": "answered alone"}}
	}}}})
	defer srv.Close()
	p, model := lookProvider(t, "openai", srv)
	var ran []string
	l := fileLooks(nil, &ran)
	if _, err := Converse(context.Background(), p, lookRequest(model), l); !errors.Is(err, llm.ErrBadRequest) {
		t.Fatalf("without Without, error %v; want the refusal", err)
	}
	var told error
	l.Without = func(refusal error) (*llm.Request, error) {
		told = refusal
		req := lookRequest(model)
		req.System = "You review, and cannot look."
		return req, nil
	}
	resp, err := Converse(context.Background(), p, lookRequest(model), l)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(resp.JSON), "answered alone") || !errors.Is(told, llm.ErrBadRequest) {
		t.Errorf("answer %s, Without told %v; want the single-shot answer, told of the 400", resp.JSON, told)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if len(last.Tools) != 0 || last.System != "You review, and cannot look." {
		t.Errorf("the request sent instead offered %v with system %q", last.Tools, last.System)
	}
}

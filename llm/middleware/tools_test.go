package middleware

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/llm/llmtest"
)

var lookTools = []llm.Tool{{Name: "grep", Description: "Search the project.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`)}}

// looking asks for a verdict with tools to look first.
func looking(n int) *llm.Request {
	r := structured(n)
	r.Tools = lookTools
	return r
}

// nextRound is req with resp's calls and their results appended.
func nextRound(req *llm.Request, resp *llm.Response) *llm.Request {
	n := req.Clone()
	n.Messages = append(n.Messages, llm.Message{Role: llm.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
	for _, c := range resp.ToolCalls {
		n.Messages = append(n.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: "no match"})
	}
	return n
}

// TestToolRoundsThroughTheStack: a round of tool calls passes the whole
// stack (journal, cache, schema check, masking, meter) as a round, not as
// a broken answer: it is not validated, its arguments are masked, it is
// metered, journaled and cached with its calls, and replayed with them.
func TestToolRoundsThroughTheStack(t *testing.T) {
	llm.RegisterSecret(testKey)
	p, srv := backend(t, llmtest.Config{Rules: []llmtest.Rule{
		// The model quotes a key it saw back in a call.
		{ToolCalls: []llmtest.ToolCall{{Name: "grep", Arguments: map[string]any{"pattern": "key " + testKey}}}},
		{JSON: map[string]any{"verdict": "yes", "score": 3}},
	}})
	dir := t.TempDir()
	cache, err := NewCache(filepath.Join(dir, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	stack := func(j *Journal, m *Meter) llm.Provider {
		return j.Wrap(cache.Wrap(CheckSchema(Redact(m.Wrap(p)))))
	}
	path := filepath.Join(dir, "run", "journal.jsonl")
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMeter(Budget{}, llm.PriceTable{}, nil)

	req := looking(1)
	round1 := complete(t, stack(j, m), req)
	if len(round1.ToolCalls) != 1 || round1.FinishReason != llm.FinishToolCalls || round1.JSON != nil || round1.Repairs != nil || round1.Calls != 1 {
		t.Fatalf("round 1: %+v", round1)
	}
	args := string(round1.ToolCalls[0].Arguments)
	assertMasked(t, "the call's arguments", args)
	if !json.Valid(round1.ToolCalls[0].Arguments) || !strings.HasPrefix(args, `{"pattern":"key `) {
		t.Errorf("masked arguments = %s", args)
	}
	req2 := nextRound(req, round1)
	round2 := complete(t, stack(j, m), req2)
	if round2.ToolCalls != nil || string(round2.JSON) != `{"score":3,"verdict":"yes"}` {
		t.Fatalf("round 2: %+v", round2)
	}
	// Both rounds are calls the run paid for.
	if tot := m.Totals(); tot.Calls != 2 || tot.Usage != round1.Usage.Add(round2.Usage) {
		t.Errorf("metered %+v, want 2 calls and %+v", tot, round1.Usage.Add(round2.Usage))
	}
	j.Close()
	if srv.Count() != 2 {
		t.Fatalf("%d requests", srv.Count())
	}

	// A resumed run replays both rounds from the journal, calls included.
	j2, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	m2 := NewMeter(Budget{}, llm.PriceTable{}, nil)
	again := complete(t, stack(j2, m2), looking(1))
	if again.Source != llm.SourceJournal || !reflect.DeepEqual(again.ToolCalls, round1.ToolCalls) || again.FinishReason != llm.FinishToolCalls {
		t.Errorf("replayed round 1: %+v, want the calls %+v", again, round1.ToolCalls)
	}
	again2 := complete(t, stack(j2, m2), nextRound(looking(1), again))
	if again2.Source != llm.SourceJournal || string(again2.JSON) != string(round2.JSON) {
		t.Errorf("replayed round 2: %+v", again2)
	}
	if calls, _ := j2.ReplayedUsage(); calls != 2 || srv.Count() != 2 || m2.Totals().Calls != 0 {
		t.Errorf("replayed %d paid calls, %d requests, metered %d", calls, srv.Count(), m2.Totals().Calls)
	}

	// Another run with the same cache is answered from it, calls included.
	j3 := CreateJournal(filepath.Join(dir, "other", "journal.jsonl"), nil)
	defer j3.Close()
	cached := complete(t, stack(j3, NewMeter(Budget{}, llm.PriceTable{}, nil)), looking(1))
	if cached.Source != llm.SourceCache || !reflect.DeepEqual(cached.ToolCalls, round1.ToolCalls) || srv.Count() != 2 {
		t.Errorf("cached round 1: %+v", cached)
	}
}

// TestSchemaRepairMayLookFirst: asked again after an answer that does not
// validate, a model may call tools first; its calls go back to the loop,
// with both calls counted.
func TestSchemaRepairMayLookFirst(t *testing.T) {
	p, _ := backend(t, llmtest.Config{Rules: []llmtest.Rule{
		{Times: 1, JSON: map[string]any{"verdict": "maybe", "score": -1}},
		{ToolCalls: []llmtest.ToolCall{{Name: "grep", Arguments: map[string]any{"pattern": "x"}}}},
	}})
	resp := complete(t, CheckSchema(p), looking(1))
	if len(resp.ToolCalls) != 1 || resp.Calls != 2 || resp.JSON != nil {
		t.Errorf("resp %+v", resp)
	}
}

// TestWorstCostCountsTools: tools and the calls and results of earlier
// rounds are input a call is paid for.
func TestWorstCostCountsTools(t *testing.T) {
	m := NewMeter(Budget{}, llm.PriceTable{"gpt-4.1": {Input: 2, Output: 8}}, nil)
	plain, _ := m.WorstCost(structured(1))
	offered, _ := m.WorstCost(looking(1))
	req := looking(1)
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "grep", Arguments: json.RawMessage(`{"pattern":"` + strings.Repeat("x", 1000) + `"}`)}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", Content: "no match"})
	looked, _ := m.WorstCost(req)
	perByte := 2 / 1e6
	if offered-plain < float64(len(lookTools[0].Parameters))*perByte || looked-offered < 1000*perByte {
		t.Errorf("worst costs: plain %g, with tools %g, after a round %g", plain, offered, looked)
	}
}

package debate

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/engine/run"
	"github.com/sotlabs/sot/llm/llmtest"
)

// unionSchemas are the names of the structured calls of a graph debate
// with generated observers.
var unionSchemas = []string{observerSchemaName, questionSchemaName, synthesisSchemaName, "argument_node", "argument_edge"}

// unionFields hold a short valid value for every field of every schema of
// the debate, and the prototype's own urgency, significance and
// has_tension. They are short so that the union fits the smallest answer
// the debate asks for (an edge's 300 tokens), which the server enforces.
var unionFields = map[string]any{
	// a generated observer
	"name":              "The Union Reader",
	"bias":              "Every answer holds everything.",
	"focus":             "All fields at once.",
	"blind_spots":       []any{"brevity", "scope", "order"},
	"example_questions": []any{"Why the carriage?", "Why the dash?"},
	"anti_examples":     []any{"What is it about?", "Is it good?"},
	// a branch question
	"question":       "What does the carriage carry?",
	"missing":        "No turn asks.",
	"why":            "Its bias.",
	"debate_summary": "They disagree about Death.",
	// a branch synthesis (and, with summary, an argument node)
	"perspectives": []any{"A journey."},
	"resolved":     []any{"The pace is slow."},
	"in_tension":   []any{"Death's kindness."},
	"summary":      "Left open.",
	// an argument node
	"type":       "impasse",
	"topic":      "The ride.",
	"resolution": "Left open.",
	"tags":       []any{"mortality"},
	"key_claims": []any{map[string]any{"claim": "The ride is a journey.", "turns": []any{1}}},
	// an edge
	"relation":    "none",
	"confidence":  0.5,
	"description": "",
	// the prototype's own
	"urgency":      "high",
	"significance": "It decides the ending.",
	"has_tension":  true,
}

// unionAnswer answers every structured call as seed 003's llm workflow
// does: one object holding the fields of every schema of the debate at
// once, each with a valid value. The call's own fields are the ones its
// schema's answer would have (so the debate reads as it does under a
// model that keeps to the schema); the others are unionFields.
func unionAnswer(rec *llmtest.Recorded) llmtest.Reply {
	var rep llmtest.Reply
	switch rec.SchemaName {
	case observerSchemaName:
		rep = generating(rec)
	case questionSchemaName:
		if m := youAre.FindStringSubmatch(rec.System); m != nil && generatedQuestions[m[1]] != "" {
			rep = llmtest.Reply{JSON: map[string]any{"question": generatedQuestions[m[1]], "missing": "No turn asks.",
				"why": "Its bias.", "debate_summary": "The debaters disagree about Death."}}
		} else {
			rep = responder(rec)
		}
	default:
		rep = graphResponder(rec)
	}
	own, ok := rep.JSON.(map[string]any)
	if !ok {
		panic("no structured answer for " + rec.SchemaName)
	}
	union := maps.Clone(unionFields)
	maps.Copy(union, own)
	return llmtest.Reply{JSON: union}
}

// Seed 003's llm workflow against sot, over HTTP: every structured answer
// of a graph debate over two passages with two generated observers (the
// observers, the branch questions, the syntheses, the argument nodes and
// the edges) is one object holding the union of all their fields. Each
// answer is mended on the first try, the requests keep the strict schema,
// the mending is journaled, and the debates complete whole.
func TestGraphDebateUnionAnswers(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(rec *llmtest.Recorded) llmtest.Reply {
		if rec.SchemaName != "" {
			return unionAnswer(rec)
		}
		return graphResponder(rec)
	}}}})
	t.Cleanup(srv.Close)
	top := testProject(t)
	path := filepath.Join(top, "g.json")
	o := graphOptions(t, top, srv.OpenAIBaseURL(), nil, path, 0)
	o.Observers = "generate:2"
	outs, err := DebateAll(t.Context(), graphPassages(t)[:2], o, GraphHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 {
		t.Fatalf("%d debates, want 2", len(outs))
	}
	for _, out := range outs {
		r := out.Result
		if err := out.Verdict(); err != nil || len(r.Missing) != 0 {
			t.Errorf("%s: verdict %v, missing %+v", out.Plan.OutputDir, err, r.Missing)
		}
		if len(r.Observers) != 2 || len(r.Branches) == 0 {
			t.Errorf("%s: %d observers, %d branches", out.Plan.OutputDir, len(r.Observers), len(r.Branches))
		}
		for _, b := range r.Branches {
			if b.Synthesis == nil || b.Synthesis.Summary == "" {
				t.Errorf("branch %d has no synthesis", b.N)
			}
		}
		journal, err := os.ReadFile(filepath.Join(out.Plan.OutputDir, run.JournalFile))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(journal, []byte(`"repairs":[`)) || !bytes.Contains(journal, []byte(`the key \"has_tension\"`)) {
			t.Errorf("%s: the journal does not say what was mended", out.Plan.OutputDir)
		}
	}
	g, err := graph.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Missing) != 0 || len(g.Nodes) < 4 {
		t.Errorf("%d nodes, missing %+v", len(g.Nodes), g.Missing)
	}

	seen := map[string]bool{}
	for _, rec := range srv.Requests() {
		if rec.SchemaName == "" {
			continue
		}
		seen[rec.SchemaName] = true
		var schema struct {
			Closed *bool `json:"additionalProperties"`
		}
		if err := json.Unmarshal(rec.Schema, &schema); err != nil || !rec.Strict || schema.Closed == nil || *schema.Closed {
			t.Errorf("%s: the request lost its strict schema (strict %v): %s", rec.SchemaName, rec.Strict, rec.Schema)
		}
		if strings.Contains(rec.LastUser(), "does not validate") {
			t.Errorf("%s: asked again although the answer could be mended: %s", rec.SchemaName, rec.LastUser())
		}
	}
	for _, name := range unionSchemas {
		if !seen[name] {
			t.Errorf("no %s call: the test does not cover its schema", name)
		}
	}
}

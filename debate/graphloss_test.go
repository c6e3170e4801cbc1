package debate

import (
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/llm/llmtest"
)

// A node whose classification fails is never lost silently: the debate is
// partial (exit 3) with the node named and why, the graph file records it
// as missing, sot graph show lists it, and the same command run again
// classifies it, adds it and joins the branch to it.
func TestGraphNodeLossIsReportedAndRepaired(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var down atomic.Bool
	down.Store(true)
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(rec *llmtest.Recorded) llmtest.Reply {
		// The main debate's classification fails while the provider is
		// down for it; a branch's goes through.
		if rec.SchemaName == "argument_node" && !strings.Contains(rec.LastUser(), "Branch question:") && down.Load() {
			return llmtest.Reply{Fault: llmtest.Fault500}
		}
		return graphResponder(rec)
	}}}})
	t.Cleanup(srv.Close)
	top := testProject(t)
	path := filepath.Join(top, "g.json")
	passages := graphPassages(t)[:1]
	o := graphOptions(t, top, srv.OpenAIBaseURL(), nil, path, 0)
	outs, err := DebateAll(t.Context(), passages, o, GraphHooks{})
	var pe *PartialError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *PartialError (exit 3)", err)
	}
	main := graph.NodeID(graphPassage(passages[0]).ID, 0)
	found := false
	for _, m := range outs[0].Result.Missing {
		if strings.Contains(m.What, main) && m.Error != "" {
			found = true
		}
	}
	if !found {
		t.Errorf("the missing parts %+v do not name node %s and why", outs[0].Result.Missing, main)
	}
	g, err := graph.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Missing) != 1 || g.Missing[0].ID != main || g.Stats().Passages[0].Missing == nil {
		t.Fatalf("the graph file's missing nodes: %+v", g.Missing)
	}
	if done, _ := o.Graph.Holds(passages[0]); done {
		t.Fatal("a passage with a missing node counts as held")
	}

	// The provider is back: the same command adds the node and the
	// branch's edge to it.
	down.Store(false)
	o = graphOptions(t, top, srv.OpenAIBaseURL(), nil, path, 0)
	if _, err := DebateAll(t.Context(), passages, o, GraphHooks{}); err != nil {
		t.Fatal(err)
	}
	g, err = graph.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	branch := graph.NodeID(graphPassage(passages[0]).ID, 1)
	if g.Node(main) == nil || len(g.Missing) != 0 || !g.Linked(branch, main) {
		t.Errorf("after the re-run: main %v, missing %+v, branch linked %v", g.Node(main) != nil, g.Missing, g.Linked(branch, main))
	}
}

// A model that invents turn references gets asked once more; if it still
// names none, the node is kept with its claims and no turns, and a note
// says so, rather than lost.
func TestInventedTurnsKeepTheNode(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: func(rec *llmtest.Recorded) llmtest.Reply {
		rep := graphResponder(rec)
		if rec.SchemaName == "argument_node" {
			m := rep.JSON.(map[string]any)
			m["key_claims"] = []map[string]any{{"claim": "It reads the carriage as a courtship.", "turns": []int{41, 99}}}
			m["type"] = "lemma" // also when asked again, where the passage is not in the last message
		}
		return rep
	}}}})
	t.Cleanup(srv.Close)
	top := testProject(t)
	path := filepath.Join(top, "g.json")
	passages := graphPassages(t)[:1]
	outs, err := DebateAll(t.Context(), passages, graphOptions(t, top, srv.OpenAIBaseURL(), nil, path, 0), GraphHooks{})
	if err != nil {
		t.Fatalf("%v: %+v", err, outs[0].Result.Missing)
	}
	g, _ := graph.Load(path)
	if len(g.Nodes) != 2 || len(g.Missing) != 0 {
		t.Fatalf("nodes %d, missing %+v", len(g.Nodes), g.Missing)
	}
	if c := g.Nodes[0].Claims; len(c) != 1 || len(c[0].Turns) != 0 {
		t.Errorf("claims %+v, want the claim kept without turns", c)
	}
	if !strings.Contains(strings.Join(outs[0].Result.Notes, "\n"), "kept without turns") {
		t.Errorf("notes %q do not say the claims lost their turns", outs[0].Result.Notes)
	}
}

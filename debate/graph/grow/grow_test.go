package grow

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/debate/graph"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm/llmtest"
)

// elaborate judges every pair an elaboration, confidently.
func elaborate(a, b string) map[string]any {
	return map[string]any{"relation": "elaborates", "confidence": 0.8, "description": "It carries the earlier reading further."}
}

// secondDebate is a debate of another passage.
func secondDebate() Debate {
	return Debate{Passage: graph.Passage{ID: graph.PassageID("frost.txt", "Nature's first green is gold"), Title: "frost.txt"},
		Main:     turns("impasse", 2),
		Branches: []BranchDebate{{Question: "Is gold a loss?", Turns: turns("synthesis", 2)}}}
}

// AddDebate: one step classifies the nodes, one judges the candidate
// pairs with the earlier passage's nodes, the graph is saved after each
// node and after the edges.
func TestAddDebate(t *testing.T) {
	x, srv := testExecutor(t, classifyResponder(elaborate))
	g := graph.New()
	ctx := context.Background()
	rep, err := AddDebate(ctx, x, g, testDebate(), testOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Pairs) != 0 || rep.JudgeCalls != 0 || rep.Steps != 1 || len(g.Nodes) != 6 {
		t.Fatalf("first passage: %+v", rep)
	}
	var saves int
	rep, err = AddDebate(ctx, x, g, secondDebate(), testOptions(), func(*graph.DebateDAG) error { saves++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if rep.ClassifyCalls != 2 || rep.Steps != 2 || len(rep.Pairs) != 2*DefaultMaxCandidates || rep.JudgeCalls != len(rep.Pairs) {
		t.Fatalf("second passage: %d classify calls, %d steps, %d pairs, %d judge calls", rep.ClassifyCalls, rep.Steps, len(rep.Pairs), rep.JudgeCalls)
	}
	if len(rep.Edges.Added) != len(rep.Pairs) || saves != 3 {
		t.Errorf("%d edges added, %d saves", len(rep.Edges.Added), saves)
	}
	if typical, bound := Calls(2, testOptions()); rep.ClassifyCalls+rep.JudgeCalls != typical || bound != 2*typical {
		t.Errorf("Calls(2) = %d, %d; the run made %d", typical, bound, rep.ClassifyCalls+rep.JudgeCalls)
	}
	if srv.Count() != 6+2+len(rep.Pairs) {
		t.Errorf("%d requests", srv.Count())
	}
	for _, e := range rep.Edges.Added {
		if !strings.HasPrefix(e.From, secondDebate().Passage.ID) || strings.HasPrefix(e.To, secondDebate().Passage.ID) {
			t.Errorf("edge %v is not from the new passage to an earlier one", e)
		}
	}
}

// A crash between nodes loses at most the node in progress: the graph
// saved after the first node is loaded again, and the same command
// classifies only the rest, every call it made before answered from the
// journal, none sent twice.
func TestAddDebateResumesAfterCrash(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "graph.json")
	journal := filepath.Join(dir, "journal.jsonl")
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: classifyResponder(elaborate)}}})
	defer srv.Close()
	ctx := context.Background()

	// A graph with the first passage, then the second passage's run dies
	// while saving its second node.
	base := graph.New()
	x0 := &engine.Local{Provider: testStack(t, srv, "")}
	if _, err := AddDebate(ctx, x0, base, testDebate(), testOptions(), nil); err != nil {
		t.Fatal(err)
	}
	if err := graph.Save(path, base); err != nil {
		t.Fatal(err)
	}
	before := srv.Count()
	crash := errors.New("killed")
	st := testStack(t, srv, journal)
	g, _ := graph.Load(path)
	saves := 0
	_, err := AddDebate(ctx, &engine.Local{Provider: st}, g, secondDebate(), testOptions(), func(g *graph.DebateDAG) error {
		if saves++; saves == 2 {
			return crash
		}
		return graph.Save(path, g)
	})
	if !errors.Is(err, crash) {
		t.Fatalf("got %v", err)
	}
	st.Close()
	firstRun := srv.Count() - before
	if firstRun != 2 {
		t.Fatalf("the crashed run made %d calls, want its 2 classifications", firstRun)
	}

	// Resumed: the graph on disk holds the main node; the branch's
	// classification comes from the journal; the judgements are new.
	g, err = graph.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 7 {
		t.Fatalf("%d nodes on disk after the crash, want 7", len(g.Nodes))
	}
	x := &recorder{inner: &engine.Local{Provider: testStack(t, srv, journal)}}
	rep, err := AddDebate(ctx, x, g, secondDebate(), testOptions(), func(g *graph.DebateDAG) error { return graph.Save(path, g) })
	if err != nil {
		t.Fatal(err)
	}
	if rep.ClassifyCalls != 1 || len(rep.Nodes.Added) != 1 {
		t.Fatalf("resumed: %+v", rep.Nodes)
	}
	for _, r := range srv.Requests()[before+firstRun:] {
		if r.SchemaName == classifySchemaName {
			t.Errorf("a classification was sent again: %.200s", fenced(r.LastUser()))
		}
	}
	if srv.Count()-before-firstRun != rep.JudgeCalls {
		t.Errorf("the resumed run sent %d calls, want its %d judgements", srv.Count()-before-firstRun, rep.JudgeCalls)
	}

	// The graph is the one an uninterrupted run makes.
	clean := graph.New()
	x1 := &engine.Local{Provider: testStack(t, srv, "")}
	if _, err := AddDebate(ctx, x1, clean, testDebate(), testOptions(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := AddDebate(ctx, x1, clean, secondDebate(), testOptions(), nil); err != nil {
		t.Fatal(err)
	}
	want, _ := clean.MarshalJSON()
	got, _ := graph.Load(path)
	b, _ := got.MarshalJSON()
	if !bytes.Equal(b, want) {
		t.Errorf("resumed graph differs from a clean run's:\n%s\nwant\n%s", b, want)
	}
}

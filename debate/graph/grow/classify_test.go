package grow

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/debate/graph"

	"github.com/sotlabs/sot/llm/llmtest"
)

// testDebate has a main debate and one branch per node type but the
// main's (exploration), each scripted to come back as that type.
func testDebate() Debate {
	d := Debate{Passage: graph.Passage{ID: graph.PassageID("poems/dickinson.txt", "Because I could not stop for Death"), Title: "dickinson.txt"},
		Text: "Because I could not stop for Death – He kindly stopped for me –",
		Main: turns("exploration", 4)}
	for _, k := range []string{"synthesis", "impasse", "lemma", "question", "clarification"} {
		d.Branches = append(d.Branches, BranchDebate{Question: "What does the " + k + " branch ask?", Turns: turns(k, 2)})
	}
	return d
}

// Every node type comes back from a scripted classification, one call a
// node in one step, and each branch joins its main debate's node.
func TestClassifyEachNodeType(t *testing.T) {
	x, srv := testExecutor(t, classifyResponder(nil))
	g := graph.New()
	d := testDebate()
	nodes, err := NodesFromDebate(g, d, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 6 {
		t.Fatalf("%d pending nodes, want 6", len(nodes))
	}
	calls, err := Classify(context.Background(), x, nodes)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 6 || len(x.steps) != 1 || srv.Count() != 6 {
		t.Fatalf("%d calls in %d steps (%d requests); want 6 in 1", calls, len(x.steps), srv.Count())
	}
	var saves int
	rep, err := Apply(g, nodes, func(*graph.DebateDAG) error { saves++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if saves != 6 || len(rep.Added) != 6 || len(rep.Failed) != 0 || len(rep.Edges) != 5 {
		t.Fatalf("saves %d, report %+v", saves, rep)
	}
	var got []graph.NodeType
	for _, n := range g.Nodes {
		got = append(got, n.Type)
	}
	if want := []graph.NodeType{graph.Exploration, graph.Synthesis, graph.Impasse, graph.Lemma, graph.Question, graph.Clarification}; !slices.Equal(got, want) {
		t.Errorf("types %v, want %v", got, want)
	}
	main := g.Nodes[0]
	if main.ID != d.Passage.ID+"/main" || main.Branch != "" || len(main.Turns) != 4 || main.Turns[3].N != 4 {
		t.Errorf("main node %+v", main)
	}
	if !slices.Equal(main.Tags, []string{"mortality", "exploration-tag"}) || len(main.Claims) != 2 || !slices.Equal(main.Claims[1].Turns, []int{2}) {
		t.Errorf("main node's tags %v, claims %+v", main.Tags, main.Claims)
	}
	for i, n := range g.Nodes[1:] {
		e := rep.Edges[i]
		if e.From != n.ID || e.To != main.ID || e.Type != graph.BranchesFrom || e.Confidence != 1 || !strings.Contains(e.Description, n.Branch) {
			t.Errorf("edge %d: %+v", i, e)
		}
	}
	// Each request fences the debate: the turns never stand outside the fence.
	for _, r := range srv.Requests() {
		user := r.LastUser()
		if !strings.Contains(user, "<<<BEGIN MATERIAL "+testNonce+">>>") {
			t.Fatalf("no fence: %s", user)
		}
		for _, l := range strings.Split(user, "\n") {
			if strings.Contains(l, "SCRIPT:") && !strings.HasPrefix(l, "│") {
				t.Errorf("debate text outside the fence: %q", l)
			}
		}
		if r.SchemaName != classifySchemaName || r.Schema == nil {
			t.Errorf("request without the schema: %q", r.SchemaName)
		}
	}
}

// Turn references to turns the node does not have are dropped and
// reported; a claim left with none is dropped; an answer whose claims all
// name invented turns is asked for once more, with the problem.
func TestClassifyTurnReferences(t *testing.T) {
	x, srv := testExecutor(t, classifyResponder(nil))
	g := graph.New()
	d := Debate{Passage: graph.Passage{ID: "p-1", Title: "p.txt"}, Main: turns("badrefs", 3),
		Branches: []BranchDebate{{N: 2, Question: "Why retry?", Turns: turns("retry", 2)}}}
	nodes, err := NodesFromDebate(g, d, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Classify(context.Background(), x, nodes); err != nil {
		t.Fatal(err)
	}
	if len(x.steps) != 2 || !slices.Equal(x.steps[1], []string{"graph/classify/p-1/branch-2/again"}) {
		t.Fatalf("steps %v", x.steps)
	}
	again := srv.Requests()[2]
	if len(again.Messages) != 3 || !strings.Contains(again.LastUser(), "no key claim names a turn of the debate") {
		t.Errorf("the second request: %+v", again.Messages)
	}
	rep, err := Apply(g, nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	main := g.Node("p-1/main")
	if main == nil || len(main.Claims) != 1 || !slices.Equal(main.Claims[0].Turns, []int{2}) {
		t.Fatalf("main %+v", main)
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, want := range []string{"key claim 1 refers to turn(s) 7, 9, which the debate does not have (it has turns 1 to 3)", "key claim 2 (\"A claim that names no turn of the debate.\") is dropped"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	b := g.Node("p-1/branch-2")
	if b == nil || b.Type != graph.Clarification || nodes[1].Attempts() != 2 {
		t.Fatalf("branch %+v, attempts %d", b, nodes[1].Attempts())
	}
}

// An answer that does not fit twice fails the node, which Apply leaves
// out and reports; the branch then joins no main node, and says so.
func TestClassifyFailsTwice(t *testing.T) {
	x, _ := testExecutor(t, func(rec *llmtest.Recorded) llmtest.Reply {
		if strings.Contains(fenced(rec.Messages[0].Text), "SCRIPT:bad") {
			c := classification("lemma", []int{1})
			c["topic"] = "  "
			return llmtest.Reply{JSON: c}
		}
		return llmtest.Reply{JSON: classification("lemma", []int{1})}
	})
	g := graph.New()
	d := Debate{Passage: graph.Passage{ID: "p-2"}, Main: turns("bad", 2), Branches: []BranchDebate{{Question: "Q?", Turns: turns("ok", 1)}}}
	nodes, err := NodesFromDebate(g, d, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	calls, err := Classify(context.Background(), x, nodes)
	if err != nil || calls != 3 {
		t.Fatalf("calls %d, %v", calls, err)
	}
	var ae *AnswerError
	if !errors.As(nodes[0].Err(), &ae) || ae.Reason != "the topic is empty" {
		t.Fatalf("err %v", nodes[0].Err())
	}
	rep, err := Apply(g, nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failed) != 1 || rep.Failed[0].ID != "p-2/main" || len(rep.Added) != 1 || len(g.Edges) != 0 {
		t.Fatalf("report %+v", rep)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "joins it by no edge") {
		t.Errorf("notes %v", rep.Notes)
	}
	// Run again (after a crash, say), only the failed node is pending.
	again, err := NodesFromDebate(g, d, testOptions())
	if err != nil || len(again) != 1 || again[0].Node.ID != "p-2/main" {
		t.Fatalf("pending again: %v, %v", again, err)
	}
}

func TestNodesFromDebateChecks(t *testing.T) {
	g := graph.New()
	o := testOptions()
	o.Nonce = ""
	if _, err := NodesFromDebate(g, testDebate(), o); err == nil {
		t.Error("no nonce accepted")
	}
	d := testDebate()
	d.Passage.ID = ""
	if _, err := NodesFromDebate(g, d, testOptions()); err == nil {
		t.Error("no passage id accepted")
	}
	d = testDebate()
	d.Branches[1].N = 1
	if _, err := NodesFromDebate(g, d, testOptions()); err == nil {
		t.Error("a branch number given twice accepted")
	}
	// A branch without turns makes no node; the numbers of the others stay.
	d = testDebate()
	d.Branches[0].Turns = nil
	nodes, err := NodesFromDebate(g, d, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range nodes {
		ids = append(ids, strings.TrimPrefix(n.Node.ID, d.Passage.ID))
	}
	if want := []string{"/main", "/branch-2", "/branch-3", "/branch-4", "/branch-5"}; !slices.Equal(ids, want) {
		t.Errorf("ids %v", ids)
	}
	// The request holds nothing that changes between runs but the nonce.
	a, _ := NodesFromDebate(graph.New(), testDebate(), testOptions())
	o2 := testOptions()
	o2.Now = nil
	b, _ := NodesFromDebate(graph.New(), testDebate(), o2)
	if mustJSONString(t, a[0].Request()) != mustJSONString(t, b[0].Request()) {
		t.Error("the request changes with the clock")
	}
}

func TestPassageID(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"poems/Dickinson – Death.txt", "dickinson-death-"},
		{"stdin", "stdin-"},
		{"", "passage-"},
		{"---", "passage-"},
	} {
		id := graph.PassageID(tt.name, "text")
		if !strings.HasPrefix(id, tt.want) || len(id) != len(tt.want)+8 {
			t.Errorf("PassageID(%q) = %q", tt.name, id)
		}
	}
	if graph.PassageID("a.txt", "one") == graph.PassageID("a.txt", "two") {
		t.Error("two texts share an id")
	}
}

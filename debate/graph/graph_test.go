package graph

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/safedir"
)

// node makes a classified node of passage p.
func node(id, p string, typ NodeType, tags ...string) *ArgumentNode {
	return &ArgumentNode{ID: id, Type: typ, Topic: "Topic of " + id, Resolution: "Resolution of " + id + ".", Summary: "Summary of " + id,
		Passage: Passage{ID: p, Title: p + ".txt"}, Tags: tags, Created: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Turns:  []Turn{{N: 1, Speaker: "d1", Text: "One."}, {N: 2, Speaker: "d2", Text: "Two."}},
		Claims: []Claim{{Text: "A claim of " + id, Turns: []int{1, 2}}}}
}

func mustAdd(t testing.TB, g *DebateDAG, nodes ...*ArgumentNode) {
	t.Helper()
	for _, n := range nodes {
		if err := g.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
}

func mustEdge(t testing.TB, g *DebateDAG, from, to string, typ EdgeType) {
	t.Helper()
	if err := g.AddEdge(Edge{From: from, To: to, Type: typ, Description: from + " " + string(typ) + " " + to, Confidence: 0.8}); err != nil {
		t.Fatal(err)
	}
}

// An edge that would close a cycle is refused with the cycle named, in
// the edges' direction; the graph is left as it was.
func TestAddEdgeRefusesCycle(t *testing.T) {
	g := New()
	mustAdd(t, g, node("a", "p1", Synthesis), node("b", "p2", Lemma), node("c", "p3", Impasse), node("d", "p3", Question))
	mustEdge(t, g, "b", "a", Elaborates)
	mustEdge(t, g, "c", "b", Contradicts)
	mustEdge(t, g, "d", "c", BranchesFrom)

	err := g.AddEdge(Edge{From: "a", To: "d", Type: Supports, Confidence: 0.9})
	var ce *CycleError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a *CycleError", err)
	}
	if want := []string{"a", "d", "c", "b", "a"}; !slices.Equal(ce.Cycle, want) {
		t.Errorf("cycle %v, want %v", ce.Cycle, want)
	}
	if want := "edge a -supports-> d would close the cycle a → d → c → b → a"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if len(g.Edges) != 3 {
		t.Errorf("%d edges after the refusal", len(g.Edges))
	}

	// A node's edge to itself is the shortest cycle.
	err = g.AddEdge(Edge{From: "b", To: "b", Type: Analogy, Confidence: 1})
	if !errors.As(err, &ce) || !slices.Equal(ce.Cycle, []string{"b", "b"}) {
		t.Errorf("self-loop: %v", err)
	}
	// Two edges between the same nodes in the same direction are no cycle;
	// the same edge twice is refused as a duplicate.
	if err := g.AddEdge(Edge{From: "c", To: "a", Type: Requires, Confidence: 0.7}); err != nil {
		t.Errorf("a second path: %v", err)
	}
	if err := g.AddEdge(Edge{From: "c", To: "a", Type: Requires, Confidence: 0.7}); !errors.Is(err, ErrDuplicateEdge) {
		t.Errorf("duplicate: %v", err)
	}
	for _, e := range []Edge{
		{From: "a", To: "zz", Type: Supports},
		{From: "b", To: "a", Type: "refutes"},
		{From: "c", To: "a", Type: Analogy, Confidence: 1.5},
	} {
		if err := g.AddEdge(e); err == nil || errors.As(err, &ce) {
			t.Errorf("%v: %v", e, err)
		}
	}
}

// AddNode refuses a node the graph cannot hold, with an error that names
// the node and what is wrong with it, and a refused node leaves the graph
// as it was: the same nodes, the same file, and its id still free.
func TestAddNodeChecks(t *testing.T) {
	edit := func(id string, change func(*ArgumentNode)) *ArgumentNode {
		n := node(id, "p2", Lemma)
		change(n)
		return n
	}
	tests := []struct {
		name string
		n    *ArgumentNode
		err  string
	}{
		{"an id the graph holds already", node("a", "p2", Lemma),
			`graph: node "a" is in the graph already`},
		{"no id", node("", "p2", Lemma),
			"graph: a node has no id"},
		{"an id of spaces", node("  ", "p2", Lemma),
			"graph: a node has no id"},
		{"no node", nil,
			"graph: a nil node"},
		{"a type that is not one", node("b", "p2", "verdict"),
			`graph: node "b" has the type "verdict"; the types are synthesis, impasse, lemma, question, exploration, clarification`},
		{"no type", node("b", "p2", ""),
			`graph: node "b" has the type ""; the types are synthesis, impasse, lemma, question, exploration, clarification`},
		{"a claim citing a turn the node does not have", edit("b", func(n *ArgumentNode) { n.Claims[0].Turns = []int{1, 3} }),
			`graph: key claim 1 of node "b" refers to turn 3, which the node does not have`},
		{"the second claim citing a turn of no node", edit("b", func(n *ArgumentNode) {
			n.Claims = append(n.Claims, Claim{Text: "Another", Turns: []int{0}})
		}), `graph: key claim 2 of node "b" refers to turn 0, which the node does not have`},
		{"a claim citing a turn when the node has none", edit("b", func(n *ArgumentNode) { n.Turns = nil }),
			`graph: key claim 1 of node "b" refers to turn 1, which the node does not have`},
		{"two turns numbered alike", edit("b", func(n *ArgumentNode) { n.Turns[1].N = 1 }),
			`graph: node "b" numbers a turn 1; turns are numbered from 1, each once`},
		{"a turn numbered 0", edit("b", func(n *ArgumentNode) { n.Turns[0].N = 0 }),
			`graph: node "b" numbers a turn 0; turns are numbered from 1, each once`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New()
			a := node("a", "p1", Synthesis)
			mustAdd(t, g, a)
			before, err := g.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			err = g.AddNode(tt.n)
			if err == nil {
				t.Fatalf("accepted; want %q", tt.err)
			}
			if err.Error() != tt.err {
				t.Errorf("error %q, want %q", err, tt.err)
			}
			if len(g.Nodes) != 1 || g.Nodes[0] != a || g.Node("a") != a || a.Topic != "Topic of a" {
				t.Errorf("the graph changed: %d nodes, first %+v", len(g.Nodes), g.Nodes[0])
			}
			if after, _ := g.MarshalJSON(); !bytes.Equal(after, before) {
				t.Errorf("the graph's file changed:\n%s\nwas\n%s", after, before)
			}
			// The refused node's id is still free: a sound node takes it.
			if tt.n != nil && strings.TrimSpace(tt.n.ID) != "" && tt.n.ID != "a" {
				if g.Node(tt.n.ID) != nil {
					t.Errorf("the refused node %q can be found", tt.n.ID)
				}
				sound := node(tt.n.ID, "p2", Lemma)
				if err := g.AddNode(sound); err != nil || len(g.Nodes) != 2 || g.Node(tt.n.ID) != sound {
					t.Errorf("a sound node %q after the refusal: %v, %d nodes", tt.n.ID, err, len(g.Nodes))
				}
			}
		})
	}
}

// Order puts every node after the nodes its edges point to, and the node
// added first first among those that may come next.
func TestOrder(t *testing.T) {
	g := New()
	mustAdd(t, g, node("x", "p1", Lemma), node("a", "p2", Synthesis), node("b", "p2", Lemma), node("c", "p3", Impasse))
	mustEdge(t, g, "x", "c", Elaborates) // x was added first but builds on c
	mustEdge(t, g, "b", "a", BranchesFrom)
	var got []string
	for _, n := range g.Order() {
		got = append(got, n.ID)
	}
	if want := []string{"a", "b", "c", "x"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func testGraph(t testing.TB) *DebateDAG {
	g := New()
	mustAdd(t, g, node("p1/main", "p1", Exploration, "mortality", "journey"), node("p1/branch-1", "p1", Synthesis, "mortality"),
		node("p2/main", "p2", Impasse, "journey", "time"), node("p2/branch-1", "p2", Question, "time"))
	g.Nodes[1].Branch = "Is Death a suitor?"
	g.Nodes[3].Branch = "What does the hour mean?"
	mustEdge(t, g, "p1/branch-1", "p1/main", BranchesFrom)
	mustEdge(t, g, "p2/branch-1", "p2/main", BranchesFrom)
	mustEdge(t, g, "p2/main", "p1/main", Contradicts)
	mustEdge(t, g, "p2/branch-1", "p1/branch-1", Elaborates)
	return g
}

// The file is canonical: the same graph gives the same bytes, whatever
// order its edges were added in, and Parse gives the graph back.
func TestJSONRoundTrip(t *testing.T) {
	g := testGraph(t)
	b1, err := g.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(g.Edges)
	b2, _ := g.MarshalJSON()
	if !bytes.Equal(b1, b2) {
		t.Error("the edges' order in memory changes the file")
	}
	h, err := Parse(b1)
	if err != nil {
		t.Fatal(err)
	}
	b3, _ := h.MarshalJSON()
	if !bytes.Equal(b1, b3) {
		t.Errorf("the round trip changes the file:\n%s\n%s", b1, b3)
	}
	if !bytes.HasPrefix(b1, []byte("{\n  \"format\": \"sot-argument-graph\",\n  \"version\": 1,\n")) {
		t.Errorf("head:\n%.80s", b1)
	}
	// An empty graph has empty lists, not nulls.
	e, _ := New().MarshalJSON()
	if !strings.Contains(string(e), `"nodes": []`) || !strings.Contains(string(e), `"edges": []`) {
		t.Errorf("empty graph: %s", e)
	}
}

func TestParseErrors(t *testing.T) {
	good, _ := testGraph(t).MarshalJSON()
	cycle := strings.Replace(string(good), `"from": "p2/main",
      "to": "p1/main"`, `"from": "p1/main",
      "to": "p2/branch-1"`, 1)
	for _, tt := range []struct{ name, data, want string }{
		{"empty", "  \n", "the file is empty"},
		{"syntax", "{\n  \"format\": \"sot-argument-graph\",\n  \"version\": 1,\n  \"nodes\": [}\n", "4:13: not valid JSON"},
		{"truncated", string(good[:200]), "the JSON ends too early"},
		{"not a graph", `{"nodes": []}`, `it has no "format"`},
		{"another format", `{"format": "x"}`, `its format is "x"`},
		{"newer", `{"format": "sot-argument-graph", "version": 2, "future": true}`, "version 2, written by a newer sot"},
		{"unknown member", `{"format": "sot-argument-graph", "version": 1, "nodes": [], "edges": [], "extra": 1}`, `unknown field "extra"`},
		{"wrong type", `{"format": "sot-argument-graph", "version": 1, "nodes": 3}`, "1:58: nodes should be a JSON array, not a JSON number"},
		{"bad node type", strings.Replace(string(good), `"type": "question"`, `"type": "verdict"`, 1), `node 4: node "p2/branch-1" has the type "verdict"`},
		{"cycle", cycle, "edge 3: edge p2/branch-1 -elaborates-> p1/branch-1 would close the cycle p2/branch-1 → p1/branch-1 → p1/main → p2/branch-1"},
		{"two values", string(good) + "{}", "more than one JSON value"},
	} {
		_, err := Parse([]byte(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
}

// Save replaces the file atomically and never through a symlink; Load
// refuses a symlink too, and a missing file is fs.ErrNotExist (LoadOrNew
// starts a graph).
func TestLoadSave(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "graph.json")
	g := testGraph(t)
	if err := Save(path, g); err != nil {
		t.Fatal(err)
	}
	h, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Nodes) != 4 || len(h.Edges) != 4 {
		t.Fatalf("loaded %d nodes, %d edges", len(h.Nodes), len(h.Edges))
	}
	mustAdd(t, h, node("p3/main", "p3", Lemma))
	if err := Save(path, h); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("%d files beside the graph: a temporary file was left", len(entries))
	}

	_, err = Load(filepath.Join(dir, "missing.json"))
	if !errors.Is(err, fs.ErrNotExist) || !engine.IsUserError(err) {
		t.Errorf("missing: %v", err)
	}
	if g, err := LoadOrNew(filepath.Join(dir, "missing.json")); err != nil || len(g.Nodes) != 0 {
		t.Errorf("LoadOrNew: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{"), 0o644)
	if _, err := Load(filepath.Join(dir, "bad.json")); !engine.IsUserError(err) || !strings.Contains(err.Error(), "bad.json: ") {
		t.Errorf("bad: %v", err)
	}

	target := filepath.Join(dir, "target.json")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	var se *safedir.SymlinkError
	if err := Save(link, g); !errors.As(err, &se) || !engine.IsUserError(err) {
		t.Errorf("save through a symlink: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
	if _, err := Load(link); !errors.As(err, &se) {
		t.Errorf("load through a symlink: %v", err)
	}
	linkDir := filepath.Join(dir, "linkdir")
	os.Symlink(filepath.Join(dir, "sub"), linkDir)
	if err := Save(filepath.Join(linkDir, "graph.json"), g); !errors.As(err, &se) {
		t.Errorf("save into a symlinked directory: %v", err)
	}
	if err := Save(dir+string(filepath.Separator), g); err == nil {
		t.Error("saved to a directory name")
	}
}

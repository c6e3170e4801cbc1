package graph_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/sotlabs/sot/debate/graph"
)

// Two passages' nodes, a branch, a judged edge between the passages, and
// an edge that would close a cycle, refused; then the edges the graph
// holds. (Package debate/graph/export writes the graph as Mermaid, DOT or
// Argdown.)
// (sot debate --graph makes the nodes and judges the edges with the
// model: package debate/graph/grow, whose AddDebate does all of it.)
func Example() {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	dickinson := graph.Passage{ID: graph.PassageID("dickinson.txt", "Because I could not stop for Death"), Title: "dickinson.txt"}
	frost := graph.Passage{ID: graph.PassageID("frost.txt", "Nature's first green is gold"), Title: "frost.txt"}
	turns := []graph.Turn{{N: 1, Speaker: "literalist", Text: "A carriage ride."}, {N: 2, Speaker: "symbolist", Text: "A life's passage."}}
	node := func(p graph.Passage, branch int, typ graph.NodeType, topic string, tags ...string) *graph.ArgumentNode {
		n := &graph.ArgumentNode{ID: graph.NodeID(p.ID, branch), Type: typ, Topic: topic, Resolution: topic + ", the debate found.",
			Summary: topic, Passage: p, Tags: tags, Created: at, Turns: turns,
			Claims: []graph.Claim{{Text: "Both readings hold.", Turns: []int{1, 2}}}}
		if branch > 0 {
			n.Branch = "Is Death a suitor?"
		}
		return n
	}

	g := graph.New()
	for _, n := range []*graph.ArgumentNode{
		node(dickinson, 0, graph.Exploration, "Death's carriage: courtship or abduction", "mortality", "journey"),
		node(dickinson, 1, graph.Synthesis, "Death as a suitor", "mortality", "courtship"),
		node(frost, 0, graph.Impasse, "Gold's loss: decline or renewal", "loss", "journey"),
	} {
		if err := g.AddNode(n); err != nil {
			fmt.Println(err)
		}
	}
	main, branch, other := g.Nodes[0].ID, g.Nodes[1].ID, g.Nodes[2].ID
	for _, e := range []graph.Edge{
		{From: branch, To: main, Type: graph.BranchesFrom, Confidence: 1},
		{From: other, To: main, Type: graph.Contradicts, Confidence: 0.72, Description: "Decline against a calm passage."},
		{From: main, To: other, Type: graph.Supports, Confidence: 0.9},
	} {
		var cycle *graph.CycleError
		if err := g.AddEdge(e); errors.As(err, &cycle) {
			fmt.Println("refused:", cycle.Cycle)
		}
	}
	for _, e := range g.SortedEdges() {
		fmt.Println(e)
	}
	// Output:
	// refused: [dickinson-cdd594d9/main frost-b84e9096/main dickinson-cdd594d9/main]
	// dickinson-cdd594d9/branch-1 -branches_from-> dickinson-cdd594d9/main
	// frost-b84e9096/main -contradicts-> dickinson-cdd594d9/main
}

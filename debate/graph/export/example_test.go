package export_test

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/debate/graph/export"
)

// A graph of two passages' nodes, a branch and a judged edge between the
// passages (an edge that would close a cycle is refused), written out as
// a Mermaid flowchart.
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
	if err := export.Export(os.Stdout, g, export.FormatMermaid); err != nil {
		fmt.Println(err)
	}
	// Output:
	// refused: [dickinson-cdd594d9/main frost-b84e9096/main dickinson-cdd594d9/main]
	// %% sot argument graph: 3 nodes, 2 edges
	// flowchart BT
	//   subgraph p_dickinson_cdd594d9["dickinson.txt"]
	//     n1["exploration<br/>Death's carriage: courtship or abduction"]:::exploration
	//     n2["synthesis<br/>Death as a suitor"]:::synthesis
	//   end
	//   subgraph p_frost_b84e9096["frost.txt"]
	//     n3["impasse<br/>Gold's loss: decline or renewal"]:::impasse
	//   end
	//   n2 -->|branches from| n1
	//   n3 -.->|contradicts| n1
	//   classDef synthesis fill:#b7e4c7,stroke:#2d6a4f,color:#111
	//   classDef impasse fill:#f4b6b6,stroke:#9b2226,color:#111
	//   classDef lemma fill:#bcd4f6,stroke:#1d4e89,color:#111
	//   classDef question fill:#ffe8a3,stroke:#b08900,color:#111
	//   classDef exploration fill:#dccdf2,stroke:#5a3d8a,color:#111
	//   classDef clarification fill:#d9dee4,stroke:#495057,color:#111
}

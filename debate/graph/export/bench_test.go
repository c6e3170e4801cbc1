package export

import (
	"fmt"
	"io"
	"testing"

	"github.com/sotlabs/sot/debate/graph"
)

// sizedGraph is a graph of about n nodes in the shape sot debate --graph
// grows: passages of a main debate and two branches, each branch joined
// to its main node, each main node elaborating the one before.
func sizedGraph(tb testing.TB, n int) *graph.DebateDAG {
	g := graph.New()
	edge := func(from, to string, typ graph.EdgeType) {
		if err := g.AddEdge(graph.Edge{From: from, To: to, Type: typ, Confidence: 0.9}); err != nil {
			tb.Fatal(err)
		}
	}
	for p := 1; len(g.Nodes) < n; p++ {
		id := fmt.Sprintf("passage-%06d", p)
		for b := 0; b <= 2; b++ {
			mustAdd(tb, g, testNode(id, b))
			if b > 0 {
				edge(graph.NodeID(id, b), graph.NodeID(id, 0), graph.BranchesFrom)
			}
		}
		if p > 1 {
			edge(graph.NodeID(id, 0), graph.NodeID(fmt.Sprintf("passage-%06d", p-1), 0), graph.Elaborates)
		}
	}
	return g
}

// BenchmarkExport writes a graph in every format. The time per node
// (ns/node) should stay flat as the graph grows, also when its nodes
// share a topic (alike), which Argdown numbers apart.
//
//	go test ./debate/graph/export -run '^$' -bench Export -benchtime 3x
func BenchmarkExport(b *testing.B) {
	for _, shape := range []string{"sot", "alike"} {
		for _, n := range []int{1000, 10000, 20000} {
			g := sizedGraph(b, n)
			if shape == "alike" {
				for _, node := range g.Nodes {
					node.Topic = "How the passage ties mortality to the journey"
				}
			}
			b.Run(fmt.Sprintf("shape=%s/nodes=%d", shape, n), func(b *testing.B) {
				for b.Loop() {
					for _, f := range Formats {
						if err := Export(io.Discard, g, f); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(g.Nodes)), "ns/node")
			})
		}
	}
}

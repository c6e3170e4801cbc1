package graph

import (
	"fmt"
	"io"
	"testing"
)

// sizedGraph is a graph of about n nodes: passages of a main debate and two
// branches, each branch joined to its main node, each main node
// elaborating the one before, and every third contradicting the one three
// before: the shape sot debate --graph grows.
func sizedGraph(tb testing.TB, n int) *DebateDAG {
	g := New()
	for p := 1; len(g.Nodes) < n; p++ {
		for b := 0; b <= 2; b++ {
			node := benchNode(p, b)
			node.Passage.ID = fmt.Sprintf("passage-%06d", p)
			node.ID = NodeID(node.Passage.ID, b)
			mustAdd(tb, g, node)
			if b > 0 {
				mustEdge(tb, g, node.ID, NodeID(node.Passage.ID, 0), BranchesFrom)
			}
		}
		main := NodeID(fmt.Sprintf("passage-%06d", p), 0)
		if p > 1 {
			mustEdge(tb, g, main, NodeID(fmt.Sprintf("passage-%06d", p-1), 0), Elaborates)
		}
		if p > 3 && p%3 == 0 {
			mustEdge(tb, g, main, NodeID(fmt.Sprintf("passage-%06d", p-3), 0), Contradicts)
		}
	}
	return g
}

// BenchmarkShow is what sot graph show and export do with a graph file:
// parse and check it, count it, order it, and write it out. The time per
// node should stay flat as the graph grows (it did not: 17 s at 10,000
// nodes and 78 s at 20,000 before edges were indexed).
//
//	go test ./debate/graph -run '^$' -bench Show -benchtime 3x
func BenchmarkShow(b *testing.B) {
	for _, n := range []int{1000, 10000, 20000} {
		g := sizedGraph(b, n)
		data, err := g.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			for b.Loop() {
				h, err := Parse(data)
				if err != nil {
					b.Fatal(err)
				}
				_ = h.Stats()
				_ = h.Order()
				if err := Export(io.Discard, h, FormatMarkdown); err != nil {
					b.Fatal(err)
				}
				if err := Export(io.Discard, h, FormatMermaid); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(g.Nodes)), "ns/node")
		})
	}
}

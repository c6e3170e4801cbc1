package graph

import (
	"encoding/json"
	"fmt"
	"slices"
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

// reordered is g's file with its nodes in the reverse order: every edge
// then points from an earlier node to a later one, as in a file that was
// edited, merged or written by another tool. Reading it checks each edge
// for a cycle it might close.
func reordered(tb testing.TB, g *DebateDAG) []byte {
	data, err := g.MarshalJSON()
	if err != nil {
		tb.Fatal(err)
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		tb.Fatal(err)
	}
	slices.Reverse(f.Nodes)
	if data, err = json.Marshal(f); err != nil {
		tb.Fatal(err)
	}
	return data
}

// BenchmarkShow is what sot graph show and export do with a graph file:
// parse and check it (masking its secrets), count it, order it, and write
// it out as its file and its narrative (package debate/graph/export
// benchmarks the other formats). The time per node (ns/node) should stay
// flat as the graph grows: it did not (17 s at 10,000 nodes and 78 s at
// 20,000 before edges were indexed), nor for a file whose edges point
// forward (reordered), each of whose edges was searched for a cycle, nor
// for one whose nodes share a topic (alike).
//
//	go test ./debate/graph -run '^$' -bench Show -benchtime 3x
func BenchmarkShow(b *testing.B) {
	for _, shape := range []string{"sot", "reordered", "alike"} {
		for _, n := range []int{1000, 10000, 20000} {
			g := sizedGraph(b, n)
			if shape == "alike" {
				for _, node := range g.Nodes {
					node.Topic = "How the passage ties mortality to the journey"
				}
			}
			data, err := g.MarshalJSON()
			if err != nil {
				b.Fatal(err)
			}
			if shape == "reordered" {
				data = reordered(b, g)
			}
			b.Run(fmt.Sprintf("shape=%s/nodes=%d", shape, n), func(b *testing.B) {
				for b.Loop() {
					h, err := Parse(data)
					if err != nil {
						b.Fatal(err)
					}
					_ = h.Stats()
					_ = h.Order()
					if _, err := h.MarshalJSON(); err != nil {
						b.Fatal(err)
					}
					_ = Linearize(h)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(g.Nodes)), "ns/node")
			})
		}
	}
}

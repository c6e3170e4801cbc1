package graphcmd

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/debate/graph"
)

// benchFile writes a graph of about n nodes to a file in dir: passages
// of a main debate and two branches, each branch joined to its main node,
// each main node elaborating the one before and every third contradicting
// the one three before (the shape sot debate --graph grows), each node
// with a resolution of about sixty words, key claims and turns.
func benchFile(b *testing.B, dir string, n int) string {
	g := graph.New()
	add := func(e graph.Edge) {
		if err := g.AddEdge(e); err != nil {
			b.Fatal(err)
		}
	}
	for p := 1; len(g.Nodes) < n; p++ {
		pid := fmt.Sprintf("passage-%06d", p)
		for k := 0; k <= 2; k++ {
			nd := node(pid, k, fmt.Sprintf("How passage %d ties time to loss, reading %d", p, k), fmt.Sprintf("Passage %d read through loss, partly settled.", p))
			nd.Resolution = strings.Repeat(fmt.Sprintf("The debaters read passage %d through time and loss, and left open whether the speaker accepts it. ", p), 3)
			if err := g.AddNode(nd); err != nil {
				b.Fatal(err)
			}
			if k > 0 {
				add(graph.Edge{From: nd.ID, To: graph.NodeID(pid, 0), Type: graph.BranchesFrom, Confidence: 1, Description: "branch on: " + nd.Branch})
			}
		}
		if p > 1 {
			add(graph.Edge{From: graph.NodeID(pid, 0), To: graph.NodeID(fmt.Sprintf("passage-%06d", p-1), 0), Type: graph.Elaborates, Confidence: 0.8, Description: "It carries the reading on."})
		}
		if p > 3 && p%3 == 0 {
			add(graph.Edge{From: graph.NodeID(pid, 0), To: graph.NodeID(fmt.Sprintf("passage-%06d", p-3), 0), Type: graph.Contradicts, Confidence: 0.7, Description: "It reads the loss the other way."})
		}
	}
	path := filepath.Join(dir, fmt.Sprintf("graph-%d.json", n))
	if err := graph.Save(path, g); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkShowCommand is sot graph show, and show --json, on a graph
// file of 1,000, 10,000 and 20,000 nodes: read, masked, checked, counted,
// ordered and printed. The time per node (ns/node) stays flat as the
// graph grows.
//
//	go test ./cli/graphcmd -run '^$' -bench ShowCommand -benchtime 3x
func BenchmarkShowCommand(b *testing.B) {
	dir := b.TempDir()
	for _, n := range []int{1000, 10000, 20000} {
		path := benchFile(b, dir, n)
		for _, asJSON := range []bool{false, true} {
			b.Run(fmt.Sprintf("json=%v/nodes=%d", asJSON, n), func(b *testing.B) {
				o := &ShowOptions{IO: &cmdutil.IOStreams{Out: io.Discard, ErrOut: io.Discard}, File: path, JSON: asJSON}
				for b.Loop() {
					if err := Show(o); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
			})
		}
	}
}

// Package graph is the argument graph of sot debate (seed 003, issue 16):
// its one job is to keep what earlier debates settled, as typed nodes and
// edges in a DAG that grows passage after passage, and to hand a new
// debate the part of it that matters.
//
// A finished debate becomes nodes: its main debate is one node, and each
// branch is another, joined to the main one by a branches_from edge. Nodes
// of different passages are joined by typed edges (contradicts,
// elaborates, supports, requires, applies_to, analogy). AddNode checks a
// node's type and turn references; AddEdge refuses any edge that would
// close a cycle with a *CycleError that names it. MarkMissing records a
// node that could not be made, so that the passage is known to be partial.
// This package makes no model call: package debate/graph/grow classifies
// the nodes and judges the edges, and adds them through AddNode and
// AddEdge.
//
// Linearize tells the whole graph as one Markdown narrative in topological
// order, with working links between its sections. RelevantContext gives a
// new passage's debaters all of it while it fits a token budget, and past
// the budget the nodes most relevant to the passage by BM25 (the embedded
// SQLite index sot ask uses, package index), saying how many it left
// out. MarshalJSON writes the graph as canonical JSON, the file format,
// which Load and Save read and write atomically, never through a symlink.
// Package debate/graph/export renders the graph in other tools' formats
// (Mermaid, Graphviz DOT, Argdown).
//
// Node ids come from the passage and the branch (NodeID, PassageID), so
// a debate run again after a crash makes the same ids, and a grower skips
// the nodes a graph saved before the crash already holds.
//
// A graph file is material like any other: it may be hand-edited, or come
// with a repository. Its secrets (internal/secrets) are masked where text
// enters a graph: when a file is read (Parse, Load) and when a node or an
// edge is added (AddNode, AddEdge), so the debaters' context, the
// prompts of package grow, the retrieval index, the saved
// file and every export see masked text; the file is written masked
// whatever was put in the graph. Its text is data in the narrative and in
// every export: one line where the format wants one, what a terminal would
// act on (ESC and the other controls, bidirectional controls) escaped as
// visible text (internal/termsafe), and each format's own syntax escaped
// (Mermaid's %% directives among it).
package graph

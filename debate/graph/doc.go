// Package graph is the argument graph of sot debate (seed 003, issue 16):
// its one job is to keep what earlier debates settled, as typed nodes and
// edges in a DAG that grows passage after passage, and to hand a new
// debate the part of it that matters.
//
// A finished debate becomes nodes: its main debate is one node, and each
// branch is another, joined to the main one by a branches_from edge. One
// structured call per node (ClassifyTasks, Classify) gives the node its
// type (synthesis, impasse, lemma, question, exploration or clarification),
// topic, resolution, one-line summary, theme tags and key claims, each
// claim linked to the turns that made it; turn references the model
// invents are dropped and reported, and an answer that does not fit is
// asked for once more.
//
// Nodes of different passages are then joined by judged edges
// (contradicts, elaborates, supports, requires, applies_to, analogy). The
// candidate pairs are picked locally, by shared tags and word overlap
// (lexical.Jaccard), at most MaxCandidates for each new node, so the number
// of judgement calls is bounded; each pair gets one structured call, and
// all of a step's calls go in one Execute. A judgement below the confidence
// threshold adds nothing. AddEdge refuses any edge that would close a cycle
// with a *CycleError that names it.
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
// Every model call is an engine.Task the caller runs through an
// engine.Executor, so calls are journaled and a resumed run re-sends none:
// node ids come from the passage and the branch (NodeID), the prompts hold
// nothing that changes between runs, and NodesFromDebate skips the nodes a
// graph saved before a crash already holds. Text that comes from a debate
// is untrusted and reaches a prompt only inside a prompt.Fence.
//
// A graph file is material like any other: it may be hand-edited, or come
// with a repository. Its secrets (internal/secrets) are masked where text
// enters a graph: when a file is read (Parse, Load) and when a node or an
// edge is added (AddNode, AddEdge), so the debaters' context, the
// classification and judgement prompts, the retrieval index, the saved
// file and every export see masked text; the file is written masked
// whatever was put in the graph. Its text is data in the narrative and in
// every export: one line where the format wants one, what a terminal would
// act on (ESC and the other controls, bidirectional controls) escaped as
// visible text (internal/termsafe), and each format's own syntax escaped
// (Mermaid's %% directives among it).
package graph

// Package grow grows the argument graph of package debate/graph by the
// model calls that make its nodes and judge its edges.
//
// A finished debate becomes nodes (NodesFromDebate): its main debate and
// each branch. One structured call per node (ClassifyTasks, Classify)
// gives the node its type (synthesis, impasse, lemma, question,
// exploration or clarification), topic, resolution, one-line summary,
// theme tags and key claims, each claim linked to the turns that made it;
// turn references the model invents are dropped and reported, and an
// answer that does not fit is asked for once more. Apply adds the
// classified nodes to the graph, each branch with its branches_from edge,
// and marks the nodes that failed missing.
//
// Nodes of different passages are then joined by judged edges. The
// candidate pairs are picked locally, by shared tags and word overlap
// (CandidatePairs, lexical.Jaccard), at most MaxCandidates for each new
// node, so the number of judgement calls is bounded; each pair gets one
// structured call, and all of a step's calls go in one Execute. A
// judgement below the confidence threshold adds nothing, and the graph
// refuses an edge that would close a cycle. AddDebate does all of it.
//
// Every model call is an engine.Task the caller runs through an
// engine.Executor, so calls are journaled and a resumed run re-sends none:
// the prompts hold nothing that changes between runs, and NodesFromDebate
// skips the nodes a graph saved before a crash already holds. Text that
// comes from a debate is untrusted and reaches a prompt only inside a
// prompt.Fence, masked (internal/secrets); the graph masks what it takes.
package grow

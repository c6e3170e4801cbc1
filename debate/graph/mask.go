package graph

import (
	"slices"
	"strings"

	"github.com/sotlabs/sot/internal/secrets"
)

// A graph file is material like any other: hand-edited, or planted in a
// repository, it may hold a key in what it says of a debate. Every text of
// the graph is masked (internal/secrets) where it enters a graph: when a
// file is read (Parse, Load) and when a node or edge is added (AddNode,
// AddEdge). So everything downstream (the debaters' context, the
// classification and judgement prompts, the retrieval index, the saved
// file, every export) sees masked text. Masking before the exports escape
// the text matters: escaped, a key is no longer found (Markdown writes
// ghp_ as ghp\_), yet a reader, or a model, reads it all the same.

// maskBatch is about the most bytes masked as one text.
const maskBatch = 64 << 10

// maskTexts masks the secrets in the texts ps point to. The texts are
// searched together, joined by line breaks, in batches of about maskBatch
// bytes: one search of a node's texts costs about what one of its texts
// alone does. Each text starts a line of the joined text, as it starts its
// own, so every secret found in a text alone is found in the batch; a
// secret found across two texts is masked in both.
func maskTexts(ps []*string) {
	for len(ps) > 0 {
		n, size := 0, 0
		for n < len(ps) && (n == 0 || size+len(*ps[n]) < maskBatch) {
			size += len(*ps[n]) + 1
			n++
		}
		maskJoined(ps[:n])
		ps = ps[n:]
	}
}

func maskJoined(ps []*string) {
	texts := make([]string, len(ps))
	for i, p := range ps {
		texts[i] = *p
	}
	joined := strings.Join(texts, "\n")
	spans := secrets.Find(joined, "")
	if len(spans) == 0 {
		return
	}
	start := 0
	for i, t := range texts {
		end := start + len(t)
		var mine []secrets.Span
		for _, s := range spans {
			if s.End > start && s.Start < end {
				mine = append(mine, secrets.Span{Start: max(s.Start, start) - start, End: min(s.End, end) - start, Kind: s.Kind})
			}
		}
		if len(mine) > 0 {
			*ps[i] = secrets.Apply(t, mine)
		}
		start = end + 1
	}
}

// texts returns pointers to every text of the node but its id: what
// maskSecrets masks.
func (n *ArgumentNode) texts() []*string {
	ps := []*string{&n.Topic, &n.Resolution, &n.Summary, &n.Branch, &n.Passage.ID, &n.Passage.Title}
	for i := range n.Tags {
		ps = append(ps, &n.Tags[i])
	}
	for i := range n.Claims {
		ps = append(ps, &n.Claims[i].Text)
	}
	for i := range n.Turns {
		t := &n.Turns[i]
		ps = append(ps, &t.Speaker, &t.Name, &t.Text)
	}
	return ps
}

// maskSecrets masks the secrets in every text of the node (its id is
// masked by Parse, for a file's nodes; sot makes the ids of its own from
// passage names it slugs). It runs once per node: AddNode runs it, and
// MarshalJSON for a node put in Nodes by hand; a text changed after that
// is not masked again.
func (n *ArgumentNode) maskSecrets() {
	if n.masked {
		return
	}
	n.masked = true
	maskTexts(n.texts())
}

// maskFile masks what a graph file holds before its nodes and edges are
// added: the ids of nodes, edges and missing nodes, the edges'
// descriptions and the missing nodes' reasons (AddNode masks the rest). A
// node's id is masked the same way wherever the file names it, so edges
// still join the nodes they name.
func maskFile(f *file) {
	var raw []string           // the nodes' ids, each once
	ids := map[string]string{} // a node's id → its masked form
	for _, n := range f.Nodes {
		if n != nil {
			if _, ok := ids[n.ID]; !ok {
				ids[n.ID] = ""
				raw = append(raw, n.ID)
			}
		}
	}
	masked := slices.Clone(raw)
	ps := make([]*string, len(masked))
	for i := range masked {
		ps[i] = &masked[i]
	}
	maskTexts(ps)
	for i, id := range raw {
		ids[id] = masked[i]
	}
	for _, n := range f.Nodes {
		if n != nil {
			n.ID = ids[n.ID]
		}
	}
	ps = ps[:0]
	for i := range f.Edges {
		e := &f.Edges[i]
		for _, id := range []*string{&e.From, &e.To} {
			if m, ok := ids[*id]; ok {
				*id = m
			} else {
				ps = append(ps, id) // no node's: Parse refuses the edge
			}
		}
		ps = append(ps, &e.Description)
	}
	for i := range f.Missing {
		ps = append(ps, &f.Missing[i].ID, &f.Missing[i].Reason)
	}
	maskTexts(ps)
}

// maskEdges returns the edges with their descriptions masked.
func maskEdges(es []Edge) []Edge {
	ps := make([]*string, len(es))
	for i := range es {
		ps[i] = &es[i].Description
	}
	maskTexts(ps)
	return es
}

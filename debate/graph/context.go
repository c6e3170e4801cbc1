package graph

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/sotlabs/sot/index"
	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/internal/tokens"
)

// DefaultContextBudget is the token budget of RelevantContext when none
// is given: the seed's advice is the whole graph in context while it fits,
// and a debater's prompt holds the passage and the debate besides.
const DefaultContextBudget = 12000

// ContextOptions tune RelevantContext.
type ContextOptions struct {
	// Budget is the most tokens (o200k_base, internal/tokens) the context
	// may have (0: DefaultContextBudget).
	Budget int
	// IndexPath is the SQLite file that indexes the nodes for retrieval:
	// a file of the graph's own, never the corpus index of sot ask, whose
	// sources it would replace. Kept from one call to the next, it is
	// brought up to date incrementally. "" uses a temporary file.
	IndexPath string
}

// Context modes.
const (
	ContextEmpty     = "empty"     // the graph has no node
	ContextWhole     = "whole"     // the whole linearized graph fits the budget
	ContextRetrieval = "retrieval" // the nodes most relevant by BM25 that fit
)

// Context is what the debaters of a new passage get from the graph.
type Context struct {
	// Text is Markdown: the linearized graph, or the part of it retrieval
	// chose. It is untrusted text (it comes from earlier debates) and goes
	// into a prompt inside a fence.
	Text string `json:"-"`
	// Mode is ContextEmpty, ContextWhole or ContextRetrieval.
	Mode   string `json:"mode"`
	Tokens int    `json:"tokens"`
	Budget int    `json:"budget"`
	// Nodes are the ids of the nodes the text holds, in its order.
	Nodes []string `json:"nodes"`
	// Total is how many nodes the graph holds; Omitted how many the text
	// leaves out.
	Total   int `json:"total"`
	Omitted int `json:"omitted"`
	// GraphTokens is the size of the whole linearized graph.
	GraphTokens int `json:"graph_tokens"`
	// Query is the search retrieval ran ("" for the whole graph).
	Query string `json:"query,omitempty"`
}

// Note is one line for a report: how much of the graph the context holds.
func (c *Context) Note() string {
	switch c.Mode {
	case ContextEmpty:
		return "the argument graph is empty: no context from earlier debates"
	case ContextWhole:
		return fmt.Sprintf("the whole argument graph (%s, %d tokens) is in context", count(c.Total, "node"), c.Tokens)
	}
	return fmt.Sprintf("the argument graph (%d tokens) is over the budget of %d: the %d node(s) most relevant to the passage by BM25 are in context (%d tokens), %d left out",
		c.GraphTokens, c.Budget, len(c.Nodes), c.Tokens, c.Omitted)
}

// RelevantContext is the seed's find_relevant_context: what the debaters
// of a new passage get from the graph. While the whole linearized graph
// (Linearize) fits the budget, it is all of it. Beyond the budget, the
// nodes are indexed (topic, resolution, summary, tags and key claims) in
// the embedded SQLite FTS5 index of sot ask and searched by BM25 with the
// passage's words; the best nodes are taken in rank order while the
// narrative of those taken still fits, and Omitted says how many nodes
// were left out.
func RelevantContext(ctx context.Context, g *DebateDAG, passage string, o ContextOptions) (*Context, error) {
	budget := o.Budget
	if budget <= 0 {
		budget = DefaultContextBudget
	}
	c := &Context{Budget: budget, Total: len(g.Nodes), Nodes: []string{}}
	if len(g.Nodes) == 0 {
		c.Mode = ContextEmpty
		return c, nil
	}
	whole := Linearize(g)
	c.GraphTokens = tokens.Count(whole)
	if c.GraphTokens <= budget {
		// The graph is material: what it says reaches the prompt masked.
		c.Mode, c.Text = ContextWhole, secrets.Mask(whole)
		c.Tokens = tokens.Count(c.Text)
		for _, n := range g.Order() {
			c.Nodes = append(c.Nodes, n.ID)
		}
		return c, nil
	}

	c.Mode = ContextRetrieval
	c.Query = searchQuery(passage, g)
	hits, err := search(ctx, g, c.Query, o.IndexPath)
	if err != nil {
		return nil, err
	}

	// Take the hits in rank order while the narrative of those taken fits;
	// a node too large for what is left is passed over for the next, up
	// to maxMisses of them in a row.
	keep := map[string]bool{}
	text := ""
	misses := 0
	for _, h := range hits {
		id := h.Node.ID
		keep[id] = true
		t := render(g, keep, retrievalIntro(len(g.Nodes), len(keep)))
		if !tokens.Within(budget, t) {
			delete(keep, id)
			if misses++; misses == maxMisses {
				break
			}
			continue
		}
		misses = 0
		text = t
	}
	if len(keep) == 0 {
		text = render(g, keep, retrievalIntro(len(g.Nodes), 0))
		if !tokens.Within(budget, text) {
			text = ""
		}
	}
	c.Text = secrets.Mask(text)
	c.Tokens = tokens.Count(c.Text)
	for _, n := range g.Order() {
		if keep[n.ID] {
			c.Nodes = append(c.Nodes, n.ID)
		}
	}
	c.Omitted = len(g.Nodes) - len(c.Nodes)
	return c, nil
}

// Hit is a node Search found, and its relevance: 1 for the best match,
// less for the others.
type Hit struct {
	Node      *ArgumentNode
	Relevance float64
}

// Search returns the nodes of g most relevant to text, best first, at
// most limit of them (all when limit is 0): the retrieval of
// RelevantContext, by BM25 over each node's topic, resolution, summary,
// tags and key claims, in a temporary index.
func Search(ctx context.Context, g *DebateDAG, text string, limit int) ([]Hit, error) {
	hits, err := search(ctx, g, searchQuery(text, g), "")
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, err
}

// search ranks g's nodes for query in the index at path (a temporary one
// when path is "").
func search(ctx context.Context, g *DebateDAG, query, path string) ([]Hit, error) {
	if len(g.Nodes) == 0 {
		return nil, nil
	}
	if path == "" {
		dir, err := os.MkdirTemp("", "sot-graph-index-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "graph.db")
	}
	ix, err := index.Open(path)
	if err != nil {
		return nil, fmt.Errorf("graph: the retrieval index: %w", err)
	}
	defer ix.Close()
	docs := make([]index.Doc, len(g.Nodes))
	for i, n := range g.Nodes {
		docs[i] = index.Doc{ID: n.ID, Path: n.Passage.ID, Type: string(n.Type), Title: n.Topic, Text: indexText(n)}
	}
	if _, err := ix.Sync(ctx, docs, index.SyncOptions{Prune: true}); err != nil {
		return nil, fmt.Errorf("graph: the retrieval index: %w", err)
	}
	found, err := ix.Search(ctx, query, index.SearchOptions{Limit: len(g.Nodes), RecencyWeight: -1})
	if err != nil {
		return nil, fmt.Errorf("graph: retrieval: %w", err)
	}
	var hits []Hit
	for _, h := range found {
		if n := g.Node(h.Doc.ID); n != nil {
			hits = append(hits, Hit{Node: n, Relevance: h.Relevance})
		}
	}
	return hits, nil
}

// maxMisses is how many nodes in a row retrieval passes over, as too
// large for the budget left, before it stops looking.
const maxMisses = 16

func retrievalIntro(total, kept int) string {
	return fmt.Sprintf("The graph holds %s, too many to give in full. Below are the %d most relevant to this passage, in the graph's order; %d are left out.",
		count(total, "node"), kept, total-kept)
}

// indexText is what retrieval searches a node by, besides its topic (the
// indexed title): resolution, summary, tags and key claims.
func indexText(n *ArgumentNode) string {
	parts := []string{n.Resolution, n.Summary, strings.Join(n.Tags, " ")}
	for _, c := range n.Claims {
		parts = append(parts, c.Text)
	}
	if n.Branch != "" {
		parts = append(parts, n.Branch)
	}
	return strings.Join(parts, "\n")
}

// searchQuery is the search for a passage: its words (index.Terms keeps
// at most index.MaxTerms), the words the graph's nodes use first, then by
// how often the passage uses them, then by where they first appear. A
// long passage's first words alone would make a poor query.
func searchQuery(passage string, g *DebateDAG) string {
	vocab := map[string]bool{}
	for _, n := range g.Nodes {
		for _, w := range index.Terms(strings.Join([]string{n.Topic, indexText(n)}, " ")) {
			vocab[w] = true
		}
		// index.Terms stops at MaxTerms; the rest of a long node counts too.
		for _, w := range strings.FieldsFunc(strings.ToLower(indexText(n)), notWord) {
			vocab[w] = true
		}
	}
	type term struct {
		w           string
		known       bool
		freq, first int
	}
	var terms []*term
	at := map[string]*term{}
	for i, w := range strings.FieldsFunc(strings.ToLower(passage), notWord) {
		if t, ok := at[w]; ok {
			t.freq++
			continue
		}
		if len(index.Terms(w)) == 0 { // a stopword
			continue
		}
		t := &term{w: w, known: vocab[w], freq: 1, first: i}
		at[w] = t
		terms = append(terms, t)
	}
	slices.SortStableFunc(terms, func(a, b *term) int {
		switch {
		case a.known != b.known:
			if a.known {
				return -1
			}
			return 1
		case a.freq != b.freq:
			return b.freq - a.freq
		}
		return a.first - b.first
	})
	words := make([]string, 0, index.MaxTerms)
	for _, t := range terms[:min(len(terms), index.MaxTerms)] {
		words = append(words, t.w)
	}
	return strings.Join(words, " ")
}

func notWord(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
}

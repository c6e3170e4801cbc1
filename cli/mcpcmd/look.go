package mcpcmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sotlabs/sot/ask"
	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/index"
	"github.com/sotlabs/sot/internal/lazyre"
	"github.com/sotlabs/sot/internal/plainfile"
	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/review"
)

// The tools that read what runs left (the argument graph, the corpus
// index) or record a decision on a finished review. None calls a model.

// GraphQuery is the input of graph_query.
type GraphQuery struct {
	Graph string `json:"graph" jsonschema:"the argument graph's JSON file (sot debate --graph wrote it), relative to the project root"`
	Text  string `json:"text" jsonschema:"the text to find the most relevant nodes for: a passage, a question, a claim"`
	Limit int    `json:"limit,omitempty" jsonschema:"the most nodes returned (default 10, at most 100)"`
}

// GraphNode is one node graph_query found.
type GraphNode struct {
	ID         string   `json:"id"`
	Type       string   `json:"type"`
	Topic      string   `json:"topic"`
	Resolution string   `json:"resolution"`
	Summary    string   `json:"summary"`
	Tags       []string `json:"tags"`
	Passage    string   `json:"passage"`
	Branch     string   `json:"branch_question,omitempty"`
	Relevance  float64  `json:"relevance"`
}

// GraphNodes is graph_query's result.
type GraphNodes struct {
	Nodes []GraphNode `json:"nodes"`
	Total int         `json:"total"`
}

// SourcesQuery is the input of sources_search.
type SourcesQuery struct {
	Query string `json:"query" jsonschema:"plain words to search the corpus index for (BM25 over titles and texts, a small bonus for recent sources)"`
	Limit int    `json:"limit,omitempty" jsonschema:"the most sources returned (default 10, at most 100)"`
}

// Source is one source sources_search found.
type Source struct {
	ID        string  `json:"id"`
	Path      string  `json:"path"`
	Title     string  `json:"title"`
	Type      string  `json:"type"`
	Date      string  `json:"date,omitempty"`
	Relevance float64 `json:"relevance"`
	Score     float64 `json:"score"`
	Excerpt   string  `json:"excerpt"`
}

// Sources is sources_search's result.
type Sources struct {
	Sources []Source `json:"sources"`
	// Note says why there is nothing to find, when the index is empty.
	Note string `json:"note,omitempty"`
}

// ResolveArgs is the input of resolve.
type ResolveArgs struct {
	RunID   string `json:"run_id" jsonschema:"a review's run id: one the review tool returned, or the id of a review run from the command line (r0123456789)"`
	Finding string `json:"finding" jsonschema:"the finding's id in REVIEW-SYNTHESIS.md, such as S1"`
	Status  string `json:"status" jsonschema:"accepted, dismissed or deferred"`
	Reason  string `json:"reason,omitempty" jsonschema:"why: required to dismiss"`
}

// Resolved is resolve's result.
type Resolved struct {
	RunID   string `json:"run_id"`
	Finding string `json:"finding"`
	Claim   string `json:"claim"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	// File is where the decision is recorded, relative to the project.
	File string `json:"file"`
}

func (s *Server) addLookTools() {
	mcp.AddTool(s.Server, &mcp.Tool{Name: "graph_query", Title: "Search an argument graph",
		Description: "Return the nodes of an argument graph (the file sot debate --graph grows) most relevant to a text, best first, by BM25 over each node's topic, resolution, summary, tags and key claims. Calls no model."},
		func(ctx context.Context, req *mcp.CallToolRequest, in GraphQuery) (*mcp.CallToolResult, GraphNodes, error) {
			out, err := s.queryGraph(ctx, in)
			return nil, out, err
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "sources_search", Title: "Search the corpus index",
		Description: "Search the project's corpus index (the sources sot ask reads) by BM25 over titles and texts, with a small bonus for recent sources; returns each source's id, path, title, type, date and an excerpt. Calls no model."},
		func(ctx context.Context, req *mcp.CallToolRequest, in SourcesQuery) (*mcp.CallToolResult, Sources, error) {
			out, err := s.searchSources(ctx, in)
			return nil, out, err
		})
	mcp.AddTool(s.Server, &mcp.Tool{Name: "resolve", Title: "Record a decision on a finding",
		Description: "Record accepted, dismissed (with a reason) or deferred on one finding of a finished review, as sot review --resolve does; the review's outputs show it, and a later decision on the same finding replaces it."},
		func(ctx context.Context, req *mcp.CallToolRequest, in ResolveArgs) (*mcp.CallToolResult, Resolved, error) {
			out, err := s.resolve(in)
			return nil, out, err
		})
}

func limitOf(n int) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("limit must not be negative")
	case n == 0:
		return 10, nil
	case n > 100:
		return 100, nil
	}
	return n, nil
}

// queryGraph reads the graph file inside the project (never through a
// symlink that leads out of it) and searches it.
func (s *Server) queryGraph(ctx context.Context, in GraphQuery) (GraphNodes, error) {
	limit, err := limitOf(in.Limit)
	if err != nil {
		return GraphNodes{}, err
	}
	a := &argv{cfg: s.cfg, top: s.top}
	rel := a.path("graph", in.Graph)
	if a.err != nil {
		return GraphNodes{}, a.err
	}
	if rel == "" {
		return GraphNodes{}, fmt.Errorf("graph is required: the JSON file sot debate --graph wrote")
	}
	root, err := os.OpenRoot(s.top)
	if err != nil {
		return GraphNodes{}, err
	}
	defer root.Close()
	b, err := plainfile.ReadIn(root, filepath.Clean(rel))
	if err != nil {
		return GraphNodes{}, fmt.Errorf("read the graph %s: %w", rel, err)
	}
	g, err := graph.Parse(b)
	if err != nil {
		return GraphNodes{}, fmt.Errorf("the graph %s: %w", rel, err)
	}
	hits, err := graph.Search(ctx, g, in.Text, limit)
	if err != nil {
		return GraphNodes{}, err
	}
	out := GraphNodes{Nodes: []GraphNode{}, Total: len(g.Nodes)}
	for _, h := range hits {
		n := h.Node
		tags := make([]string, len(n.Tags))
		for i, t := range n.Tags {
			tags[i] = secrets.Mask(t)
		}
		// The graph is material: what leaves the machine is masked.
		out.Nodes = append(out.Nodes, GraphNode{ID: n.ID, Type: string(n.Type), Topic: secrets.Mask(n.Topic), Resolution: secrets.Mask(n.Resolution),
			Summary: secrets.Mask(n.Summary), Tags: tags, Passage: secrets.Mask(n.Passage.Title), Branch: secrets.Mask(n.Branch), Relevance: h.Relevance})
	}
	return out, nil
}

// searchSources searches the corpus index of the project.
func (s *Server) searchSources(ctx context.Context, in SourcesQuery) (Sources, error) {
	limit, err := limitOf(in.Limit)
	if err != nil {
		return Sources{}, err
	}
	ix, err := ask.OpenIndex(s.top)
	if err != nil {
		return Sources{}, err
	}
	defer ix.Close()
	hits, err := ix.Search(ctx, in.Query, index.SearchOptions{Limit: limit})
	if err != nil {
		return Sources{}, err
	}
	out := Sources{Sources: []Source{}}
	for _, h := range hits {
		d := h.Doc
		src := Source{ID: d.ID, Path: d.Path, Title: secrets.Mask(d.Title), Type: d.Type, Relevance: h.Relevance, Score: h.Score(), Excerpt: excerpt(secrets.Mask(d.Text), 400)}
		if !d.Date.IsZero() {
			src.Date = d.Date.Format(time.DateOnly)
		}
		out.Sources = append(out.Sources, src)
	}
	if len(hits) == 0 {
		if docs, err := ix.List(ctx); err == nil && len(docs) == 0 {
			out.Note = "the corpus index is empty: ask a question (the ask tool) or run sot sources add to index the corpus"
		}
	}
	return out, nil
}

// excerpt is the start of text, at most n bytes, cut at a rune boundary.
func excerpt(text string, n int) string {
	if len(text) <= n {
		return text
	}
	for n > 0 && text[n]&0xC0 == 0x80 {
		n--
	}
	return text[:n] + "…"
}

// cliRunID is a review's run id from the command line.
var cliRunID = lazyre.New(`^r[0-9a-f]{10}$`)

// resolve records a decision on a finding of a finished review.
func (s *Server) resolve(in ResolveArgs) (Resolved, error) {
	var dir string
	switch {
	case cliRunID.Re().MatchString(in.RunID):
		dir = filepath.Join(".sot", "reviews", in.RunID)
	default:
		j, _, err := s.Jobs.Get(in.RunID)
		if err != nil {
			return Resolved{}, err
		}
		if j.Scenario != "review" {
			return Resolved{}, fmt.Errorf("run %s is %s, not a review: only a review's findings are resolved", in.RunID, j.Scenario)
		}
		dir = j.Dir
	}
	r, err := review.LoadRun(filepath.Join(s.top, dir))
	if err != nil {
		return Resolved{}, err
	}
	rec, err := r.Record(in.Finding, in.Status, in.Reason, "mcp", s.version)
	if err != nil {
		return Resolved{}, err
	}
	return Resolved{RunID: in.RunID, Finding: rec.Item, Claim: secrets.Mask(rec.Claim), Status: rec.Status, Reason: rec.Reason, File: filepath.Join(dir, "resolutions.jsonl")}, nil
}

package graph

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/tokens"
)

var (
	anchorRe = regexp.MustCompile(`<a id="([^"]+)"></a>`)
	linkRe   = regexp.MustCompile(`\]\(#([^)]+)\)`)
)

// checkLinks fails unless every intra-document link of md points at
// exactly one anchor, and no anchor is there twice. It returns the
// anchors in document order.
func checkLinks(t *testing.T, md string) []string {
	t.Helper()
	var anchors []string
	seen := map[string]int{}
	for _, m := range anchorRe.FindAllStringSubmatch(md, -1) {
		anchors = append(anchors, m[1])
		seen[m[1]]++
	}
	for a, n := range seen {
		if n != 1 {
			t.Errorf("anchor %q is there %d times", a, n)
		}
	}
	links := linkRe.FindAllStringSubmatch(md, -1)
	if len(links) == 0 {
		t.Error("no link")
	}
	for _, m := range links {
		if seen[m[1]] != 1 {
			t.Errorf("link to #%s, which no anchor has", m[1])
		}
	}
	return anchors
}

// The narrative: a section per node in topological order, each after the
// sections it builds on; every link lands on an anchor; text from the
// debates opens no heading, link or anchor of its own.
func TestLinearize(t *testing.T) {
	g := fixture(t)
	// A topic that tries to forge an anchor and a heading.
	g.Nodes[1].Topic = `Death as a suitor <a id="node-frost-5e6f7a8b-main"></a>` + "\n## Forged"
	md := Linearize(g)
	anchors := checkLinks(t, md)
	var want []string
	ids := Anchors(g)
	for _, n := range g.Order() {
		want = append(want, ids[n.ID])
	}
	if !slices.Equal(anchors, want) {
		t.Errorf("sections %v, want the graph's order %v", anchors, want)
	}
	place := map[string]int{}
	for i, a := range anchors {
		place[a] = i
	}
	for _, e := range g.Edges {
		if place[ids[e.From]] < place[ids[e.To]] {
			t.Errorf("%s comes before %s, which it builds on", e.From, e.To)
		}
	}
	var headings []string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "#") {
			headings = append(headings, l)
		}
	}
	if len(headings) != 2+len(g.Nodes) { // the title, Contents, a section per node
		t.Errorf("%d headings:\n%s", len(headings), strings.Join(headings, "\n"))
	}
	// Each link's text numbers the section it lands on.
	for _, m := range regexp.MustCompile(`\[(\d+)\. [^\n]*?\]\(#([^)]+)\)`).FindAllStringSubmatch(md, -1) {
		if !strings.Contains(md, "<a id=\""+m[2]+"\"></a>\n\n## "+m[1]+". ") {
			t.Errorf("link %q lands on a section of another number", m[0])
		}
	}
	if empty := Linearize(New()); strings.Contains(empty, "Contents") || !strings.Contains(empty, "0 nodes from 0 passages") {
		t.Errorf("empty graph:\n%s", empty)
	}
}

func TestAnchorsUnique(t *testing.T) {
	g := New()
	mustAdd(t, g, node("a/b", "p", Lemma), node("a-b", "p", Lemma), node("A.B", "p", Lemma))
	a := Anchors(g)
	if a["a/b"] != "node-a-b" || a["a-b"] != "node-a-b-2" || a["A.B"] != "node-a-b-3" {
		t.Errorf("anchors %v", a)
	}
}

// ozyPassage is a new passage about ruin and power: retrieval should
// choose the Ozymandias nodes first.
const ozyPassage = `I met a traveller from an antique land. The ruin of power: a shattered visage, the sneer of cold command,
and the sculptor's art that mocked the passions. Nothing beside remains of the king's works.`

// While the linearized graph fits the budget, the context is all of it;
// one token under, retrieval picks the nodes most relevant to the passage
// by BM25, as many as fit, and says how many it left out.
func TestRelevantContextSwitchesAtBudget(t *testing.T) {
	ctx := context.Background()
	g := fixture(t)
	whole := Linearize(g)
	n := tokens.Count(whole)

	c, err := RelevantContext(ctx, g, ozyPassage, ContextOptions{Budget: n})
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != ContextWhole || c.Text != whole || c.Tokens != n || c.Omitted != 0 || len(c.Nodes) != len(g.Nodes) {
		t.Fatalf("at the budget: %+v", c)
	}
	if !strings.Contains(c.Note(), "the whole argument graph (6 nodes") {
		t.Errorf("note %q", c.Note())
	}

	c, err = RelevantContext(ctx, g, ozyPassage, ContextOptions{Budget: n - 1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != ContextRetrieval || c.Tokens > n-1 || c.Tokens != tokens.Count(c.Text) || c.GraphTokens != n {
		t.Fatalf("one under the budget: mode %s, %d tokens", c.Mode, c.Tokens)
	}
	if c.Omitted == 0 || c.Omitted != len(g.Nodes)-len(c.Nodes) || !strings.Contains(c.Text, "are left out") {
		t.Errorf("omitted %d of %d, nodes %v", c.Omitted, c.Total, c.Nodes)
	}

	// A tight budget keeps the two Ozymandias nodes, the most relevant.
	c, err = RelevantContext(ctx, g, ozyPassage, ContextOptions{Budget: n / 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ozymandias-9c0d1e2f/main", "ozymandias-9c0d1e2f/branch-1"} {
		if !slices.Contains(c.Nodes, id) {
			t.Errorf("retrieval left out %s: kept %v (query %q)", id, c.Nodes, c.Query)
		}
	}
	if c.Omitted == 0 || c.Tokens > n/2 {
		t.Errorf("%d tokens, %d omitted", c.Tokens, c.Omitted)
	}
	if !strings.Contains(c.Note(), "left out") {
		t.Errorf("note %q", c.Note())
	}
	checkLinks(t, c.Text)
	if strings.Count(c.Text, "<a id=") != len(c.Nodes) || !strings.Contains(c.Text, "(a node left out here)") {
		t.Errorf("the retrieved narrative:\n%s", c.Text)
	}

	// A budget too small for any node keeps none, and says so.
	c, err = RelevantContext(ctx, g, ozyPassage, ContextOptions{Budget: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 0 || c.Omitted != len(g.Nodes) || c.Tokens > 10 {
		t.Errorf("tiny budget: %+v", c)
	}
	if c, _ := RelevantContext(ctx, New(), ozyPassage, ContextOptions{}); c.Mode != ContextEmpty || c.Budget != DefaultContextBudget {
		t.Errorf("empty graph: %+v", c)
	}
}

// A given index file is the graph's own: created, then kept up to date.
func TestRelevantContextIndexFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "graph-index.db")
	g := fixture(t)
	o := ContextOptions{Budget: 400, IndexPath: path}
	a, err := RelevantContext(ctx, g, ozyPassage, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	g.Nodes = g.Nodes[:4] // the Ozymandias nodes go: the index drops them
	g.Edges = slices.DeleteFunc(g.Edges, func(e Edge) bool { return strings.HasPrefix(e.From, "ozymandias") })
	b, err := RelevantContext(ctx, g, ozyPassage, o)
	if err != nil {
		t.Fatal(err)
	}
	if a.Mode != ContextRetrieval || b.Mode != ContextRetrieval || slices.ContainsFunc(b.Nodes, func(id string) bool { return strings.HasPrefix(id, "ozymandias") }) {
		t.Errorf("first %v, then %v", a.Nodes, b.Nodes)
	}
}

func TestSearchQuery(t *testing.T) {
	g := fixture(t)
	q := searchQuery("The the the sneer sneer of a zebra; ruin ruin ruin, and gold.", g)
	if q != "ruin sneer gold zebra" {
		t.Errorf("query %q", q)
	}
}

package graph

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

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

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden compares got with testdata/golden/name, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./debate/graph -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./debate/graph -run %s -update rewrites it):\n%s", name, t.Name(), got)
	}
}

// fixture is a small graph of three passages whose text holds characters
// every format must escape.
func fixture(t testing.TB) *DebateDAG {
	t.Helper()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	dick := Passage{ID: "dickinson-1a2b3c4d", Title: "dickinson.txt"}
	frost := Passage{ID: "frost-5e6f7a8b", Title: "frost.txt"}
	ozy := Passage{ID: "ozymandias-9c0d1e2f", Title: `"Ozymandias" <Shelley> [1818]`}
	two := []Turn{{N: 1, Round: 1, Speaker: "literalist", Name: "The Literalist", Text: "The carriage is a carriage."},
		{N: 2, Round: 1, Speaker: "symbolist", Name: "The Symbolist", Text: "The carriage is the passage of a life."}}
	nodes := []*ArgumentNode{
		{ID: dick.ID + "/main", Type: Exploration, Passage: dick, Created: at, Turns: two,
			Topic:      "Whether Death's carriage ride is courtship or abduction",
			Resolution: "The debaters read the ride three ways and settled none. The Literalist kept to the carriage; the Symbolist read a life's passage.",
			Summary:    "Three readings of the carriage, none settled.",
			Tags:       []string{"mortality", "journey", "courtship"},
			Claims:     []Claim{{Text: "The ride is civil, not violent.", Turns: []int{1}}, {Text: "The carriage stands for a life's passage.", Turns: []int{2}}}},
		{ID: dick.ID + "/branch-1", Type: Synthesis, Passage: dick, Branch: "Is Death a suitor?", Created: at, Turns: two,
			Topic:      "Death as a suitor",
			Resolution: "Both agreed Death's civility is a suitor's, and that the poem keeps the threat under manners.",
			Summary:    "Death courts; the manners hide the threat.",
			Tags:       []string{"mortality", "courtship"},
			Claims:     []Claim{{Text: "Civility is courtship's register.", Turns: []int{1, 2}}}},
		{ID: frost.ID + "/main", Type: Impasse, Passage: frost, Created: at, Turns: two,
			Topic:      "Whether the loss of gold is decline or renewal",
			Resolution: "# Not a heading. One side held that nothing gold can stay means decline; the other, a cycle of renewal. They could not settle it.",
			Summary:    "Decline against renewal, unsettled.",
			Tags:       []string{"time", "loss", "journey"},
			Claims:     []Claim{{Text: "Gold's loss is decline.", Turns: []int{1}}, {Text: "Loss is the cycle's turn to renewal.", Turns: []int{2}}}},
		{ID: frost.ID + "/branch-1", Type: Lemma, Passage: frost, Branch: "What does \"Eden\" add?", Created: at, Turns: two,
			Topic:      "Eden as the pattern of every loss",
			Resolution: "Eden's fall makes each loss in the poem a repetition of the first.",
			Summary:    "Eden patterns the losses.",
			Tags:       []string{"loss", "eden"},
			Claims:     []Claim{{Text: "The fall is the template.", Turns: []int{2}}}},
		{ID: ozy.ID + "/main", Type: Question, Passage: ozy, Created: at, Turns: two,
			Topic:      `Is "Look on my Works" <b>boast</b> or [warning](http://x)?`,
			Resolution: "1. The debate left open whether the inscription mocks the king or the reader | a *pipe* and _stars_ // not a comment.",
			Summary:    "Boast or warning: an open question.",
			Tags:       []string{"time", "power", "ruin"},
			Claims:     []Claim{{Text: "The sneer outlives the sculptor's subject.", Turns: []int{1, 2}}}},
		{ID: ozy.ID + "/branch-1", Type: Clarification, Passage: ozy, Branch: "What does \"mocked\" mean?", Created: at, Turns: two,
			Topic:      "\"Mocked\" means both imitated and derided",
			Resolution: "The sculptor's hand mocked the passions: it copied them and scorned them at once.",
			Summary:    "Mocked: copied and scorned.",
			Tags:       []string{"ruin", "art"},
			Claims:     []Claim{{Text: "Mock carries both senses here.", Turns: []int{2}}}},
	}
	g := New()
	mustAdd(t, g, nodes...)
	add := func(from, to string, typ EdgeType, conf float64, desc string) {
		t.Helper()
		if err := g.AddEdge(Edge{From: from, To: to, Type: typ, Confidence: conf, Description: desc}); err != nil {
			t.Fatal(err)
		}
	}
	add(dick.ID+"/branch-1", dick.ID+"/main", BranchesFrom, 1, "branch on: Is Death a suitor?")
	add(frost.ID+"/branch-1", frost.ID+"/main", BranchesFrom, 1, `branch on: What does "Eden" add?`)
	add(ozy.ID+"/branch-1", ozy.ID+"/main", BranchesFrom, 1, `branch on: What does "mocked" mean?`)
	add(frost.ID+"/main", dick.ID+"/main", Contradicts, 0.72, "Frost's decline against Dickinson's calm passage.")
	add(frost.ID+"/branch-1", dick.ID+"/branch-1", Analogy, 0.64, "Both find an old pattern under a present scene.")
	add(ozy.ID+"/main", frost.ID+"/main", Supports, 0.81, `The ruin is "decline" made stone.`)
	add(ozy.ID+"/branch-1", frost.ID+"/branch-1", Elaborates, 0.66, "Another word that holds two times.")
	add(ozy.ID+"/main", dick.ID+"/main", Requires, 0.61, "Reading the sneer needs the journey's frame.")
	add(ozy.ID+"/branch-1", dick.ID+"/branch-1", AppliesTo, 0.7, "Courtship's double register, applied to art.")
	return g
}

// The fixture's file and narrative are pinned byte for byte (package
// debate/graph/export pins its other formats, rendered from this same
// graph.json).
func TestGoldens(t *testing.T) {
	g := fixture(t)
	data, err := g.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "graph.json", data)
	golden(t, "graph.md", []byte(Linearize(g)))
}

// The file parses back into the same graph.
func TestJSONParsesBack(t *testing.T) {
	g := fixture(t)
	data, err := g.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	h, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Error("the file does not parse back into the same graph")
	}
}

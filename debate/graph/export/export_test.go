package export

import (
	"bytes"
	"flag"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/internal/browsertest"
)

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
		t.Fatalf("%v (run go test ./debate/graph/export -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./debate/graph/export -run %s -update rewrites it):\n%s", name, t.Name(), got)
	}
}

// fixture is package graph's test graph, read from the file its tests
// pin (../testdata/golden/graph.json): three passages whose text holds
// characters every format must escape.
func fixture(t testing.TB) *graph.DebateDAG {
	t.Helper()
	g, err := graph.Load(filepath.Join("..", "testdata", "golden", "graph.json"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Mermaid, DOT and Argdown are pinned byte for byte; JSON and Markdown
// are the graph's own file and narrative, as package graph writes them.
func TestExportGoldens(t *testing.T) {
	g := fixture(t)
	for _, f := range []struct{ format, file string }{
		{FormatMermaid, "graph.mmd"}, {FormatDOT, "graph.dot"}, {FormatArgdown, "graph.argdown"},
	} {
		var b bytes.Buffer
		if err := Export(&b, g, f.format); err != nil {
			t.Fatal(err)
		}
		golden(t, f.file, b.Bytes())
	}
	data, err := g.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for format, want := range map[string][]byte{FormatJSON: data, FormatMarkdown: []byte(graph.Linearize(g))} {
		var b bytes.Buffer
		if err := Export(&b, g, format); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("the %s export is not what package graph writes:\n%s", format, b.Bytes())
		}
	}
	var b bytes.Buffer
	if err := Export(&b, g, "svg"); err == nil || !strings.Contains(err.Error(), `"svg" is not an export format; use one of json, mermaid, dot, markdown, argdown`) {
		t.Errorf("unknown format: %v", err)
	}
}

// Graphviz renders the DOT export; each node id is a node of the drawing.
func TestExportDOTRenders(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		if browsertest.Required("SOT_REQUIRE_DOT") {
			t.Fatal("graphviz's dot is not on PATH, and SOT_REQUIRE_DOT is set (.ci/run installs it: apt-get install graphviz)")
		}
		t.Skip("graphviz's dot is not on PATH (CI installs it: apt-get install graphviz); the DOT export is checked by its golden file only")
	}
	g := fixture(t)
	cmd := exec.Command(dot, "-Tsvg")
	cmd.Stdin = strings.NewReader(DOT(g))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("dot -Tsvg: %v\n%s", err, errOut.String())
	}
	if errOut.Len() > 0 {
		t.Errorf("dot warns:\n%s", errOut.String())
	}
	svg := html.UnescapeString(out.String())
	if !strings.HasPrefix(strings.TrimSpace(svg), "<?xml") || !strings.Contains(svg, "</svg>") {
		t.Fatalf("not an SVG:\n%.300s", svg)
	}
	for _, n := range g.Nodes {
		if !strings.Contains(svg, "<title>"+n.ID+"</title>") {
			t.Errorf("the drawing has no node %s", n.ID)
		}
	}
	// The legend's edges only order it, unseen.
	if got := strings.Count(svg, `class="edge"`); got != len(g.Edges) {
		t.Errorf("%d edges drawn, want %d", got, len(g.Edges))
	}
}

var (
	mermaidNode = regexp.MustCompile(`^    (n\d+)\["([^"]*)"\]:::(\w+)$`)
	mermaidEdge = regexp.MustCompile(`^  (n\d+) (-->|-\.->)\|([a-z ]+)\| (n\d+)$`)
	mermaidSub  = regexp.MustCompile(`^  subgraph (p_\w+)\["([^"]*)"\]$`)
	mermaidDef  = regexp.MustCompile(`^  classDef (\w+) fill:#[0-9a-f]{6},stroke:#[0-9a-f]{6},color:#111$`)
)

// The Mermaid export, read line by line: every line is a node, an edge, a
// subgraph's start or end or a class; every edge joins declared nodes;
// every node's class is defined; no label holds a raw quote.
func TestExportMermaidStructure(t *testing.T) {
	g := fixture(t)
	lines := strings.Split(strings.TrimSuffix(Mermaid(g), "\n"), "\n")
	if !strings.HasPrefix(lines[0], "%% ") || lines[1] != "flowchart BT" {
		t.Fatalf("head %q", lines[:2])
	}
	declared, classes, defined := map[string]bool{}, map[string]bool{}, map[string]bool{}
	depth, edges := 0, 0
	for _, l := range lines[2:] {
		switch {
		case mermaidSub.MatchString(l):
			depth++
		case l == "  end":
			depth--
		case mermaidNode.MatchString(l):
			m := mermaidNode.FindStringSubmatch(l)
			if depth != 1 || declared[m[1]] {
				t.Errorf("node outside a subgraph or twice: %q", l)
			}
			declared[m[1]], classes[m[3]] = true, true
		case mermaidEdge.MatchString(l):
			m := mermaidEdge.FindStringSubmatch(l)
			if !declared[m[1]] || !declared[m[4]] {
				t.Errorf("edge to an undeclared node: %q", l)
			}
			edges++
		case mermaidDef.MatchString(l):
			defined[mermaidDef.FindStringSubmatch(l)[1]] = true
		default:
			t.Errorf("line not in the grammar: %q", l)
		}
	}
	if depth != 0 || len(declared) != len(g.Nodes) || edges != len(g.Edges) {
		t.Errorf("depth %d, %d nodes, %d edges", depth, len(declared), edges)
	}
	for c := range classes {
		if !defined[c] {
			t.Errorf("class %s is not defined", c)
		}
	}
}

var (
	argText      = `(?:[^\[\]<>#*_/@{}\\]|\\.)+`
	argStatement = regexp.MustCompile(`^\[([^\[\]]+)\]: ` + argText + `((?: #\([a-z0-9-]+\))+)$`)
	argRelation  = regexp.MustCompile(`^  (\+>|><) \[([^\[\]]+)\]$`)
	argComment   = regexp.MustCompile(`^(  )?// [^\n]*$`)
	argHeading   = regexp.MustCompile(`^(#|##) (Passage|Branch): ` + argText + `$`)
)

// The Argdown export, read line by line: front matter, then headings,
// statements (unique titles, text whose syntax characters are escaped,
// type and tags as tags), relations to defined statements, and comments.
// (Argdown's own parser, @argdown/core 1.7, reads the golden file into the
// same statements, texts, tags, sections and relations; it is not run
// here, as it needs Node.js.)
func TestExportArgdownStructure(t *testing.T) {
	g := fixture(t)
	text := Argdown(g)
	if !strings.HasPrefix(text, "===\ntitle: Argument graph\n===\n\n") {
		t.Fatalf("front matter:\n%.60s", text)
	}
	titles := map[string]bool{}
	var refs []string
	relations := 0
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n")[4:] {
		switch {
		case l == "", argComment.MatchString(l), argHeading.MatchString(l):
		case argStatement.MatchString(l):
			m := argStatement.FindStringSubmatch(l)
			if titles[m[1]] {
				t.Errorf("title %q twice", m[1])
			}
			titles[m[1]] = true
		case argRelation.MatchString(l):
			refs = append(refs, argRelation.FindStringSubmatch(l)[2])
			relations++
		default:
			t.Errorf("line not in the grammar: %q", l)
		}
	}
	for _, r := range refs {
		if !titles[r] {
			t.Errorf("relation to an undefined statement %q", r)
		}
	}
	if len(titles) != len(g.Nodes) {
		t.Errorf("%d statements for %d nodes", len(titles), len(g.Nodes))
	}
	supports := slices.IndexFunc(g.Edges, func(e graph.Edge) bool { return e.Type == graph.Supports || e.Type == graph.Contradicts })
	if supports < 0 || relations != 2 {
		t.Errorf("%d relations, want the fixture's support and contradiction", relations)
	}
}

// Package export renders an argument graph (package debate/graph) in the
// formats other tools read: Mermaid, Graphviz DOT and Argdown, and, through
// Export, the graph's own JSON file and linearized Markdown as well. It
// only reads the graph; node text is data in every format, escaped as the
// format needs.
package export

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/termsafe"
)

// Export formats.
const (
	FormatJSON     = "json"     // the canonical file (MarshalJSON)
	FormatMermaid  = "mermaid"  // a Mermaid flowchart (.mmd)
	FormatDOT      = "dot"      // Graphviz DOT
	FormatMarkdown = "markdown" // the linearized narrative (graph.Linearize)
	FormatArgdown  = "argdown"  // Argdown, for argument-mapping tools
)

// Formats are the export formats, in the order help lists them.
var Formats = []string{FormatJSON, FormatMermaid, FormatDOT, FormatMarkdown, FormatArgdown}

// Export writes g in format (one of Formats) to w. An unknown format is an
// *engine.UserError.
func Export(w io.Writer, g *graph.DebateDAG, format string) error {
	var out []byte
	switch format {
	case FormatJSON:
		b, err := g.MarshalJSON()
		if err != nil {
			return err
		}
		out = b
	case FormatMermaid:
		out = []byte(Mermaid(g))
	case FormatDOT:
		out = []byte(DOT(g))
	case FormatMarkdown:
		out = []byte(graph.Linearize(g))
	case FormatArgdown:
		out = []byte(Argdown(g))
	default:
		return &engine.UserError{Field: "format", Msg: fmt.Sprintf("%q is not an export format; use one of %s", format, strings.Join(Formats, ", "))}
	}
	_, err := w.Write(out)
	return err
}

// Colours by node type: a fill and a darker stroke.
var colours = map[graph.NodeType][2]string{
	graph.Synthesis:     {"#b7e4c7", "#2d6a4f"},
	graph.Impasse:       {"#f4b6b6", "#9b2226"},
	graph.Lemma:         {"#bcd4f6", "#1d4e89"},
	graph.Question:      {"#ffe8a3", "#b08900"},
	graph.Exploration:   {"#dccdf2", "#5a3d8a"},
	graph.Clarification: {"#d9dee4", "#495057"},
}

// Edge colours in DOT.
var edgeColours = map[graph.EdgeType]string{
	graph.BranchesFrom: "#6c757d",
	graph.Contradicts:  "#c1121f",
	graph.Elaborates:   "#1d4e89",
	graph.Supports:     "#2d6a4f",
	graph.Requires:     "#7f5539",
	graph.AppliesTo:    "#5a3d8a",
	graph.Analogy:      "#b08900",
}

// label is a node's short label: its topic cut at max characters.
func label(n *graph.ArgumentNode, max int) string {
	s := oneLine(n.Topic)
	if s == "" {
		s = n.ID
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)[:max]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > max/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:.") + "…"
}

// Mermaid draws the graph as a Mermaid flowchart, from the bottom up: a
// node above the nodes that build on it. Nodes are n1, n2, ... in the
// order they were added, each labelled with its type and topic and
// coloured by type (a classDef per type); edges are labelled with their
// type, a contradiction drawn dotted. Labels are one line each, with what
// a terminal would act on escaped (termsafe.Line), and quotes, angle
// brackets, ampersands, backticks, # and % (%% starts a directive, such as
// %%{init: ...}%%, or a comment) written as Mermaid's entity codes, so
// node text is only ever text.
func Mermaid(g *graph.DebateDAG) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%%%% sot argument graph: %s, %s\nflowchart BT\n", count(len(g.Nodes), "node"), count(len(g.Edges), "edge"))
	ids := map[string]string{}
	for i, n := range g.Nodes {
		ids[n.ID] = fmt.Sprintf("n%d", i+1)
	}
	groups := byPassage(g.Nodes)
	for _, p := range g.Passages() {
		fmt.Fprintf(&b, "  subgraph %s[\"%s\"]\n", mermaidID(p.ID), mermaidText(passageName(p)))
		for _, n := range groups[p.ID] {
			fmt.Fprintf(&b, "    %s[\"%s<br/>%s\"]:::%s\n", ids[n.ID], n.Type, mermaidText(label(n, 60)), n.Type)
		}
		b.WriteString("  end\n")
	}
	for _, e := range g.SortedEdges() {
		arrow := "-->"
		if e.Type == graph.Contradicts {
			arrow = "-.->"
		}
		fmt.Fprintf(&b, "  %s %s|%s| %s\n", ids[e.From], arrow, e.Type.Verb(), ids[e.To])
	}
	for _, t := range graph.NodeTypes {
		c := colours[t]
		fmt.Fprintf(&b, "  classDef %s fill:%s,stroke:%s,color:#111\n", t, c[0], c[1])
	}
	return b.String()
}

// mermaidID is a subgraph id: letters, digits and underscores.
func mermaidID(s string) string {
	return "p_" + strings.ReplaceAll(graph.Slug(s), "-", "_")
}

// mermaidText escapes text for a quoted Mermaid label.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range oneLine(s) {
		switch r {
		case '"':
			b.WriteString("#quot;")
		case '#':
			b.WriteString("#35;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case '&':
			b.WriteString("#amp;")
		case '`':
			b.WriteString("#96;")
		case '%':
			// "%%" starts a directive (%%{init: ...}%%) or a comment.
			b.WriteString("#37;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func passageName(p graph.Passage) string {
	if p.Title != "" {
		return p.Title
	}
	return p.ID
}

// DOT writes the graph in Graphviz's DOT language, from the bottom up:
// nodes by their ids, boxed and filled with their type's colour, grouped
// in a cluster per passage; edges labelled and coloured by type, a
// branch's edge dashed and a contradiction bold. A legend cluster shows
// the colours. Every id and label is a quoted string, escaped.
func DOT(g *graph.DebateDAG) string {
	var b strings.Builder
	b.WriteString("digraph \"argument graph\" {\n")
	b.WriteString("  graph [rankdir=BT, fontname=\"Helvetica\", labelloc=t, label=" + dotString(fmt.Sprintf("Argument graph: %s, %s", count(len(g.Nodes), "node"), count(len(g.Edges), "edge"))) + "];\n")
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=11];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=9];\n")
	groups := byPassage(g.Nodes)
	for i, p := range g.Passages() {
		fmt.Fprintf(&b, "  subgraph \"cluster_%d\" {\n    label=%s;\n    style=dashed;\n    color=\"#adb5bd\";\n", i+1, dotString(oneLine(passageName(p))))
		for _, n := range groups[p.ID] {
			c := colours[n.Type]
			fmt.Fprintf(&b, "    %s [label=%s, fillcolor=%s, color=%s, tooltip=%s];\n",
				dotString(n.ID), dotString(string(n.Type)+"\n"+wrap(label(n, 90), 30)), dotString(c[0]), dotString(c[1]), dotString(oneLine(n.Summary)))
		}
		b.WriteString("  }\n")
	}
	for _, e := range g.SortedEdges() {
		attrs := fmt.Sprintf("label=%s, color=%s, fontcolor=%s", dotString(e.Type.Verb()), dotString(edgeColours[e.Type]), dotString(edgeColours[e.Type]))
		switch e.Type {
		case graph.BranchesFrom:
			attrs += ", style=dashed"
		case graph.Contradicts:
			attrs += ", style=bold"
		}
		if e.Description != "" {
			attrs += ", tooltip=" + dotString(fmt.Sprintf("%s (%.2f)", oneLine(e.Description), e.Confidence))
		}
		fmt.Fprintf(&b, "  %s -> %s [%s];\n", dotString(e.From), dotString(e.To), attrs)
	}
	b.WriteString("  subgraph \"cluster_legend\" {\n    label=\"node types\";\n    style=solid;\n    color=\"#adb5bd\";\n")
	for i, t := range graph.NodeTypes {
		c := colours[t]
		fmt.Fprintf(&b, "    \"legend_%d\" [label=%s, fillcolor=%s, color=%s];\n", i+1, dotString(string(t)), dotString(c[0]), dotString(c[1]))
	}
	for i := 1; i < len(graph.NodeTypes); i++ { // from the bottom up: the first type on top
		fmt.Fprintf(&b, "    \"legend_%d\" -> \"legend_%d\" [style=invis];\n", i+1, i)
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// dotString quotes s as a DOT string: what a terminal would act on
// escaped (termsafe.Text), backslashes and quotes escaped, a line break as
// DOT's centred line break. So no id or label can end its string, use one
// of DOT's escapes (\N, \G, \l), or drive a terminal the file is shown on.
func dotString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range termsafe.Text(s) {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// wrap breaks s into lines of about width characters at spaces.
func wrap(s string, width int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width {
			lines = append(lines, line)
			line = w
			continue
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// Argdown writes the graph in Argdown (argdown.org): a section for each
// passage, and in it a subsection for each branch, with one statement per
// node, titled by its topic, holding its resolution and tagged with its
// type and theme tags. Relations Argdown has are written as such under the
// statement of the later node: supports as +>, contradicts as ><.
// Relations Argdown has no notation for (elaborates, requires, applies to,
// analogy) are comments under the statement, as is each description;
// branches are the subsections. Titles are made unique, and the characters
// Argdown reads as syntax inside text are replaced.
func Argdown(g *graph.DebateDAG) string {
	titles := argdownTitles(g)
	var b strings.Builder
	b.WriteString("===\ntitle: Argument graph\n===\n\n")
	fmt.Fprintf(&b, "// sot argument graph: %s from %s, %s.\n", count(len(g.Nodes), "node"), count(len(g.Passages()), "passage"), count(len(g.Edges), "edge"))
	b.WriteString("// Relations Argdown has no notation for are comments under the later node.\n")
	leaving := edgesFrom(g.SortedEdges())
	statement := func(n *graph.ArgumentNode) {
		tags := []string{argdownTag(string(n.Type))}
		for _, t := range n.Tags {
			tags = append(tags, argdownTag(t))
		}
		text := argdownText(n.Resolution)
		if text == "" {
			text = argdownText(n.Summary)
		}
		fmt.Fprintf(&b, "\n[%s]: %s %s\n", titles[n.ID], text, strings.Join(tags, " "))
		for _, e := range leaving[n.ID] {
			if e.Type == graph.BranchesFrom {
				continue
			}
			to := titles[e.To]
			switch e.Type {
			case graph.Supports:
				fmt.Fprintf(&b, "  +> [%s]\n", to)
			case graph.Contradicts:
				fmt.Fprintf(&b, "  >< [%s]\n", to)
			default:
				fmt.Fprintf(&b, "  // %s %s [%s]\n", argdownComment(n.ID), e.Type.Verb(), argdownComment(to))
			}
			if e.Description != "" {
				fmt.Fprintf(&b, "  // %s (confidence %.2f)\n", argdownComment(e.Description), e.Confidence)
			}
		}
	}
	ordered := byPassage(g.Order())
	for _, p := range g.Passages() {
		fmt.Fprintf(&b, "\n# Passage: %s\n", argdownText(passageName(p)))
		for _, n := range ordered[p.ID] {
			if !n.IsBranch() {
				statement(n)
			}
		}
		for _, n := range ordered[p.ID] {
			if n.IsBranch() {
				fmt.Fprintf(&b, "\n## Branch: %s\n", argdownText(n.Branch))
				statement(n)
			}
		}
	}
	return b.String()
}

// argdownTitles gives each node a statement title: its topic, cut short,
// with brackets (which would end the title) made parentheses, and a
// number added when two come out the same (Argdown would take them for
// one statement).
func argdownTitles(g *graph.DebateDAG) map[string]string {
	out := map[string]string{}
	used := map[string]bool{}
	next := map[string]int{} // base, in lowercase → the number to try next
	brackets := strings.NewReplacer("[", "(", "]", ")")
	for _, n := range g.Nodes {
		base := strings.TrimSpace(brackets.Replace(label(n, 70)))
		t := base
		if lower := strings.ToLower(base); used[lower] {
			k := max(next[lower], 2)
			for t = fmt.Sprintf("%s (%d)", base, k); used[strings.ToLower(t)]; t = fmt.Sprintf("%s (%d)", base, k) {
				k++
			}
			next[lower] = k + 1
		}
		used[strings.ToLower(t)] = true
		out[n.ID] = t
	}
	return out
}

// argdownText makes untrusted text one line that Argdown reads as plain
// text: every character that Argdown syntax starts with (references,
// tags, mentions, emphasis, comments, inline data) is escaped with a
// backslash.
func argdownText(s string) string {
	var b strings.Builder
	for _, r := range oneLine(s) {
		if strings.ContainsRune(`\[]<>#*_/@{}`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// argdownComment makes text safe inside a // comment: one line.
func argdownComment(s string) string { return strings.ReplaceAll(oneLine(s), "*/", "* /") }

// argdownTag is a tag in Argdown's bracketed form.
func argdownTag(t string) string { return "#(" + tagDrop.Replace(oneLine(t)) + ")" }

// tagDrop drops what would end a bracketed tag or start another.
var tagDrop = strings.NewReplacer("(", "", ")", "", "#", "")

// oneLine and count repeat two one-line helpers of package graph, which
// its narrative and prompts use too.

// oneLine is s on one line: runs of white space made one space, and what
// a terminal would act on escaped (termsafe.Line).
func oneLine(s string) string { return termsafe.Line(strings.Join(strings.Fields(s), " ")) }

// count is n and noun, with an s unless n is one.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// byPassage groups nodes by their passage's id, each group in the order
// of nodes.
func byPassage(nodes []*graph.ArgumentNode) map[string][]*graph.ArgumentNode {
	out := map[string][]*graph.ArgumentNode{}
	for _, n := range nodes {
		out[n.Passage.ID] = append(out[n.Passage.ID], n)
	}
	return out
}

// edgesFrom groups edges by their From node's id, each group in the order
// of edges.
func edgesFrom(edges []graph.Edge) map[string][]graph.Edge {
	out := map[string][]graph.Edge{}
	for _, e := range edges {
		out[e.From] = append(out[e.From], e)
	}
	return out
}

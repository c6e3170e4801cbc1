package graph

import (
	"fmt"
	"strings"

	"github.com/sotlabs/sot/internal/markdown"
)

// Linearize tells the whole graph as one Markdown narrative: a contents
// list, then a section for each node in topological order (Order), so
// that every section comes after the nodes it builds on. A section gives
// the node's type, passage and branch question, its summary, resolution,
// key claims with their turns, tags, and its relations both ways, each a
// link to the other node's section. Links point at HTML anchors
// (<a id="node-...">) the document itself holds, one per node, so they
// work in any renderer that keeps raw HTML, GitHub's among them. Text from
// the debates is escaped so that it cannot open a section, a link or an
// anchor of its own.
func Linearize(g *DebateDAG) string {
	intro := fmt.Sprintf("The graph holds %s from %s, joined by %s. Each section follows the sections it builds on.",
		count(len(g.Nodes), "node"), count(len(g.Passages()), "passage"), count(len(g.Edges), "edge"))
	return render(g, nil, intro)
}

// render writes the narrative of the nodes keep holds (every node when
// keep is nil), after intro.
func render(g *DebateDAG, keep map[string]bool, intro string) string {
	anchors := Anchors(g)
	var order []*ArgumentNode
	for _, n := range g.Order() {
		if keep == nil || keep[n.ID] {
			order = append(order, n)
		}
	}
	num := map[string]int{}
	for i, n := range order {
		num[n.ID] = i + 1
	}
	kept := func(id string) bool { _, ok := num[id]; return ok }
	link := func(id string) string {
		n := g.Node(id)
		if n == nil {
			return mdText(id)
		}
		if !kept(id) {
			return "*" + mdText(n.Topic) + "* (a node left out here)"
		}
		return fmt.Sprintf("[%d. %s](#%s)", num[id], mdText(n.Topic), anchors[id])
	}

	edges := g.SortedEdges()
	touching := map[string][]Edge{} // node id → its edges, either end, in edge order
	for _, e := range edges {
		touching[e.From] = append(touching[e.From], e)
		touching[e.To] = append(touching[e.To], e)
	}
	var b strings.Builder
	b.WriteString("# Argument graph\n\n" + intro + "\n")
	if len(order) == 0 {
		return b.String()
	}
	b.WriteString("\n## Contents\n\n")
	for i, n := range order {
		fmt.Fprintf(&b, "%d. [%s](#%s): %s, %s\n", i+1, mdText(n.Topic), anchors[n.ID], n.Type, where(n))
	}
	for i, n := range order {
		fmt.Fprintf(&b, "\n<a id=\"%s\"></a>\n\n## %d. %s\n\n", anchors[n.ID], i+1, mdText(n.Topic))
		fmt.Fprintf(&b, "**%s** · %s\n\n", titleCase(string(n.Type)), where(n))
		if n.Summary != "" {
			b.WriteString("*" + mdText(n.Summary) + "*\n\n")
		}
		if n.Resolution != "" {
			b.WriteString(mdLine(n.Resolution) + "\n")
		}
		if len(n.Claims) > 0 {
			b.WriteString("\nKey claims:\n\n")
			for _, c := range n.Claims {
				fmt.Fprintf(&b, "- %s (%s)\n", mdText(c.Text), turnList(c.Turns))
			}
		}
		if len(n.Tags) > 0 {
			tags := make([]string, len(n.Tags))
			for k, t := range n.Tags {
				tags[k] = markdown.Code(t)
			}
			b.WriteString("\nTags: " + strings.Join(tags, ", ") + "\n")
		}
		var rel []string
		for _, e := range touching[n.ID] {
			if e.From == n.ID {
				rel = append(rel, fmt.Sprintf("This %s %s%s", e.Type.Verb(), link(e.To), edgeNote(e)))
			} else {
				rel = append(rel, fmt.Sprintf("%s %s this%s", link(e.From), e.Type.Verb(), edgeNote(e)))
			}
		}
		if len(rel) > 0 {
			b.WriteString("\nRelations:\n\n")
			for _, r := range rel {
				b.WriteString("- " + r + "\n")
			}
		}
	}
	return b.String()
}

// edgeNote is an edge's confidence and description, after its link.
func edgeNote(e Edge) string {
	if e.Type == BranchesFrom {
		return ""
	}
	s := fmt.Sprintf(" (confidence %.2f)", e.Confidence)
	if e.Description != "" {
		s += ": " + mdText(e.Description)
	}
	return s
}

// where says which passage and which debate a node comes from.
func where(n *ArgumentNode) string {
	s := "passage *" + mdText(n.Passage.Title) + "*"
	if n.Passage.Title == "" {
		s = "passage " + markdown.Code(n.Passage.ID)
	}
	if n.Branch != "" {
		return s + ", branch: " + mdText(n.Branch)
	}
	return s + ", main debate"
}

// Anchors returns the id of each node's section in the linearized
// Markdown: "node-" and the node id in lowercase letters, digits and
// hyphens, made unique by a number when two ids come out the same.
func Anchors(g *DebateDAG) map[string]string {
	out := make(map[string]string, len(g.Nodes))
	used := map[string]bool{}
	next := map[string]int{} // base → the number to try next
	for _, n := range g.Nodes {
		base := "node-" + Slug(n.ID)
		a := base
		if used[a] {
			k := max(next[base], 2)
			for a = fmt.Sprintf("%s-%d", base, k); used[a]; a = fmt.Sprintf("%s-%d", base, k) {
				k++
			}
			next[base] = k + 1
		}
		used[a] = true
		out[n.ID] = a
	}
	return out
}

func turnList(ts []int) string {
	if len(ts) == 1 {
		return fmt.Sprintf("turn %d", ts[0])
	}
	return "turns " + ints(ts)
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// mdText makes untrusted text one line of inline Markdown: white space
// collapsed, and the characters that open emphasis, code, links, raw HTML
// or strikethrough escaped.
func mdText(s string) string {
	s = markdown.OneLine(s)
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>~|", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdLine is mdText for text that starts a line: a start that Markdown
// would read as a heading, a quote, a list item or a rule is escaped too.
func mdLine(s string) string {
	s = mdText(s)
	if s == "" {
		return s
	}
	if strings.ContainsRune("#>-+=", rune(s[0])) {
		return "\\" + s
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') {
		return s[:i] + "\\" + s[i:]
	}
	return s
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

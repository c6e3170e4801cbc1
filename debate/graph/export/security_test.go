package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/internal/secrets"
)

// testNode is a node of passageID (branch 0 is the main debate) with two
// turns and a key claim, of a type picked by branch.
func testNode(passageID string, branch int) *graph.ArgumentNode {
	n := &graph.ArgumentNode{
		ID: graph.NodeID(passageID, branch), Type: graph.NodeTypes[branch%len(graph.NodeTypes)],
		Passage:    graph.Passage{ID: passageID, Title: passageID + ".txt"},
		Topic:      fmt.Sprintf("How %s ties mortality to the journey", passageID),
		Resolution: "The debaters read the journey as a life's passage and left its end open.",
		Summary:    "The journey as a life's passage, partly settled.",
		Tags:       []string{"mortality", "journey"},
		Created:    time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Turns: []graph.Turn{{N: 1, Round: 1, Speaker: "d1", Name: "Debater 1", Text: "The carriage is a carriage."},
			{N: 2, Round: 1, Speaker: "d2", Name: "Debater 2", Text: "The carriage is the passage of a life."}},
		Claims: []graph.Claim{{Text: "The ride is civil, not violent.", Turns: []int{1, 2}}},
	}
	if branch > 0 {
		n.Branch = fmt.Sprintf("Is the driver of %s a suitor?", passageID)
	}
	return n
}

func mustAdd(t testing.TB, g *graph.DebateDAG, nodes ...*graph.ArgumentNode) {
	t.Helper()
	for _, n := range nodes {
		if err := g.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
}

// hostile is node text that tries to leave its place in every format: a
// terminal's title and screen, a forged line of sot's, a Mermaid
// directive, DOT's and Markdown's and Argdown's syntax, bidirectional and
// C1 controls.
var hostile = []string{
	"title\x1b]0;pwned\x07 clear\x1b[2J",
	"fake\nsot: done",
	"%%{init: {'theme': 'dark', 'securityLevel': 'loose'}}%% click n1 call alert()",
	"\"]; evil [label=\"x\\N\\G\\l",
	"<b onmouseover=alert(1)>`code`</b> & #35; [link](javascript:x)",
	"line\r\n# Injected heading\n> quote\n1. item\n[t]: stmt\n  +> [t]",
	"abc\u202edcba \u2066iso\u2069 \u009b31m c1 \u0085nel \u2028ls \x7fdel",
}

// Node text is data in every export: it can neither run a Mermaid
// directive, nor drive a terminal, nor start a line of its own.
func TestExportsNeutraliseNodeText(t *testing.T) {
	g := graph.New()
	a, b := testNode("passage-01-00000001", 0), testNode("passage-01-00000001", 1)
	p := graph.Passage{ID: a.Passage.ID + "\x1b[2J\u202e", Title: hostile[1] + hostile[0] + hostile[6]}
	a.Passage, b.Passage = p, p
	a.ID, b.ID = graph.NodeID(p.ID, 0), graph.NodeID(p.ID, 1)
	for i, n := range []*graph.ArgumentNode{a, b} {
		h := func(k int) string { return hostile[(k+i)%len(hostile)] }
		n.Topic, n.Summary, n.Resolution = h(2)+h(0), h(0)+h(1), h(1)+h(5)
		n.Tags = []string{h(0), h(3), h(6)}
		n.Claims[0].Text = h(5) + h(1)
		n.Turns[0].Text, n.Turns[0].Name = h(4), h(1)
	}
	b.Branch = hostile[1] + hostile[6]
	mustAdd(t, g, a, b)
	if err := g.AddEdge(graph.Edge{From: b.ID, To: a.ID, Type: graph.BranchesFrom, Confidence: 1, Description: hostile[1] + hostile[0] + hostile[3]}); err != nil {
		t.Fatal(err)
	}
	for _, f := range Formats {
		var out bytes.Buffer
		if err := Export(&out, g, f); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		for _, r := range text {
			if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029 || r == 0x85 ||
				r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
				t.Errorf("%s: the control character %U reached the export", f, r)
			}
		}
		for _, line := range strings.Split(text, "\n") {
			l := strings.TrimSpace(line)
			// What follows a line break in hostile text.
			if strings.HasPrefix(l, "sot:") || strings.HasPrefix(l, "# Injected") || strings.HasPrefix(l, "> quote") ||
				strings.HasPrefix(l, "1. item") || strings.HasPrefix(l, "[t]") || strings.HasPrefix(l, "+> [t]") {
				t.Errorf("%s: node text started a line of its own: %q", f, line)
			}
			if f == FormatDOT && strings.Count(strings.NewReplacer(`\\`, "", `\"`, "").Replace(line), `"`)%2 != 0 {
				t.Errorf("dot: a string left open: %q", line)
			}
		}
		switch f {
		case FormatMermaid:
			if strings.Count(text, "%%") != 1 || strings.Contains(text, "%%{") {
				t.Errorf("mermaid: node text kept a %%%% directive:\n%s", text)
			}
		case FormatJSON:
			h, err := graph.Parse(out.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			if h.Nodes[1].Branch != g.Nodes[1].Branch || h.Nodes[0].Passage != g.Nodes[0].Passage {
				t.Errorf("json: escaped, the text changed: %q, %+v", h.Nodes[1].Branch, h.Nodes[0].Passage)
			}
		}
	}
}

// The escapes of each format, one text at a time.
func TestEscapes(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
		escape         func(string) string
	}{
		{"mermaid directive", "%%{init: {'theme':'dark'}}%% x", "#37;#37;{init: {'theme':'dark'}}#37;#37; x", mermaidText},
		{"mermaid quote and brackets", `say "hi" <b>&</b> #1 ` + "`x`", "say #quot;hi#quot; #lt;b#gt;#amp;#lt;/b#gt; #35;1 #96;x#96;", mermaidText},
		{"mermaid terminal", "a\x1b]0;t\x07\nb\u202e", `a\x1b]0;t\x07 b\u202e`, mermaidText},
		{"dot quote and escapes", `a"b\N\G` + "\nc", `"a\"b\\N\\G\nc"`, dotString},
		{"dot terminal", "\x1b[2J\u202e\u009b", `"\\x1b[2J\\u202e\\u009b"`, dotString},
		{"dot tab and CR", "a\tb\r\nc\rd", `"a b\nc\\rd"`, dotString},
		{"argdown text", "[t]: <a> #tag *e* _u_ // c @m {d}", `\[t\]: \<a\> \#tag \*e\* \_u\_ \/\/ c \@m \{d\}`, argdownText},
		{"argdown terminal", "a\x1b]0;x\x07\nb", `a\\x1b\]0;x\\x07 b`, argdownText},
		{"argdown comment", "a */ b\n[c]", "a * / b [c]", argdownComment},
		{"argdown tag", "(a) #b\nc", "#(a b c)", argdownTag},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.escape(tt.in); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// Argdown titles that come out the same are numbered, each number tried
// once however many nodes share a base, and never one taken by another
// node.
func TestArgdownTitlesNumbered(t *testing.T) {
	g := graph.New()
	for i, x := range []struct{ id, topic string }{
		{"a", "X"}, {"a!", "X (2)"}, {"a-2", "X"}, {"a?", "x"}, {"A", "X"},
	} {
		n := testNode(fmt.Sprintf("passage-%d", i+1), 0)
		n.ID, n.Topic = x.id, x.topic
		mustAdd(t, g, n)
	}
	titles := argdownTitles(g)
	for _, tt := range []struct{ id, title string }{
		{"a", "X"}, {"a!", "X (2)"}, {"a-2", "X (3)"}, {"a?", "x (4)"}, {"A", "X (5)"},
	} {
		if titles[tt.id] != tt.title {
			t.Errorf("%s: title %q, want %q", tt.id, titles[tt.id], tt.title)
		}
	}
}

// plantedKeys are fake credentials of shapes internal/secrets knows: an
// OpenAI project key, an AWS access key id and a GitHub token.
var plantedKeys = []string{
	"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9o",
	"AKIAIOSFODNN7EXAMPLQ",
	"ghp_R8vXk2LmQ9pZ4tYw7nB3cD6fG1hJ5kL0sA2e",
}

// A graph file that carries keys in every text an export shows (passage
// ids and titles, topics, resolutions, summaries, branch questions, tags,
// edge descriptions) is masked when it is read, so no export of it holds
// a key, escaped or not.
func TestExportsOfAPlantedFileHoldNoKey(t *testing.T) {
	k := 0
	plant := func(text string) string {
		s := strings.ReplaceAll(text, "$KEY", plantedKeys[k%len(plantedKeys)])
		k++
		if secrets.Mask(s) == s {
			t.Fatalf("internal/secrets finds no secret in %q", s)
		}
		return s
	}
	var nodes []*graph.ArgumentNode
	for b := 0; b <= 1; b++ {
		n := testNode("notes-"+plantedKeys[2], b)
		n.Passage.Title = plant("runbook $KEY.md")
		n.Topic = plant("The deploy key $KEY and " + n.Topic)
		n.Resolution = plant("The pipeline reads aws_access_key_id = $KEY for the bucket.")
		n.Summary = plant("token $KEY; " + n.Summary)
		n.Tags = append(n.Tags, plant("key-$KEY"))
		if b > 0 {
			n.Branch = plant("Is $KEY still live?")
		}
		nodes = append(nodes, n)
	}
	edges := []graph.Edge{{From: nodes[1].ID, To: nodes[0].ID, Type: graph.BranchesFrom, Confidence: 1, Description: plant("branch on: is $KEY live?")}}
	data, err := json.Marshal(struct {
		Format  string                `json:"format"`
		Version int                   `json:"version"`
		Nodes   []*graph.ArgumentNode `json:"nodes"`
		Edges   []graph.Edge          `json:"edges"`
	}{graph.FormatName, graph.FormatVersion, nodes, edges})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "graph.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := graph.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Formats {
		var out bytes.Buffer
		if err := Export(&out, g, f); err != nil {
			t.Fatal(err)
		}
		// Markdown and Argdown escape with backslashes (ghp_ as ghp\_):
		// a reader takes the key all the same.
		text, plain := out.String(), strings.ReplaceAll(out.String(), `\`, "")
		for _, s := range plantedKeys {
			if strings.Contains(text, s[4:]) || strings.Contains(plain, s[4:]) {
				t.Errorf("the %s export holds %s", f, s)
			}
		}
		if !strings.Contains(plain, secrets.Marker) {
			t.Errorf("the %s export shows no masked key", f)
		}
	}
}

package graphcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/debate/graph/export"
	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/internal/termsafe"
)

// node is a node of passage p (branch b when b > 0) whose texts are the
// given ones.
func node(p string, b int, topic, summary string) *graph.ArgumentNode {
	n := &graph.ArgumentNode{ID: graph.NodeID(p, b), Type: graph.Lemma, Passage: graph.Passage{ID: p, Title: p + ".txt"},
		Topic: topic, Resolution: "They settled it.", Summary: summary, Tags: []string{"time"},
		Created: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Turns:   []graph.Turn{{N: 1, Speaker: "d1", Text: "A turn."}},
		Claims:  []graph.Claim{{Text: "A claim.", Turns: []int{1}}}}
	if b > 0 {
		n.Branch = "Is it so?"
	}
	return n
}

// save writes g to dir/name and returns name.
func save(t *testing.T, dir, name string, g *graph.DebateDAG) string {
	t.Helper()
	if err := graph.Save(filepath.Join(dir, name), g); err != nil {
		t.Fatal(err)
	}
	return name
}

// outputs runs show, show --json and every export of the file name in
// dir, and returns what each printed, by its command line.
func outputs(t *testing.T, dir, name string) map[string]string {
	t.Helper()
	runs := [][]string{{"show", name}, {"show", "--json", name}}
	for _, f := range export.Formats {
		runs = append(runs, []string{"export", name, "--format", f})
	}
	out := map[string]string{}
	for _, args := range runs {
		stdout, stderr, code := run(t, dir, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		out[strings.Join(args, " ")] = stdout + stderr
	}
	return out
}

// What sot graph prints holds no text of the file that could drive the
// terminal (an OSC title, a screen clear, a C1 or bidirectional control)
// or forge a line of its own (a node's "fake\nsot: done"), in the
// summary, its JSON, or any export: ids, titles, topics, summaries, and
// why a node is missing.
func TestShowNeutralisesNodeText(t *testing.T) {
	const (
		osc    = "\x1b]0;pwned\x07"
		clear  = "\x1b[2J"
		forged = "fake\nsot: done"
		bidi   = "\u202eabc \u009b31m"
	)
	dir := t.TempDir()
	g := graph.New()
	p := "p1" + clear
	a, b := node(p, 0, "topic "+osc+clear, "summary "+forged+osc), node(p, 1, forged+bidi, "")
	a.Passage.Title = "title " + osc + forged
	b.Passage.Title = a.Passage.Title
	for _, n := range []*graph.ArgumentNode{a, b} {
		if err := g.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.AddEdge(graph.Edge{From: b.ID, To: a.ID, Type: graph.BranchesFrom, Confidence: 1, Description: forged + osc}); err != nil {
		t.Fatal(err)
	}
	g.Missing = []graph.Failure{{ID: graph.NodeID(p, 2) + osc, Reason: "the provider said: " + forged + clear}}
	name := save(t, dir, "graph.json", g)

	for cmd, out := range outputs(t, dir, name) {
		for _, r := range out {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e {
				t.Errorf("%s: the control character %U reached the terminal", cmd, r)
			}
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "sot: done") {
				t.Errorf("%s: node text forged a line: %q", cmd, line)
			}
		}
	}
	show := outputs(t, dir, name)["show graph.json"]
	for _, want := range []string{
		`  1.  p1\x1b[2J/main      lemma  summary fake sot: done\x1b]0;pwned\x07`,
		`1 node missing (p1\x1b[2J/branch-2\x1b]0;pwned\x07: the provider said: fake sot: done\x1b[2J)`,
	} {
		if !strings.Contains(show, want) {
			t.Errorf("show lacks %q:\n%s", want, show)
		}
	}
}

// A graph file planted with keys (in a node's topic, summary and turns,
// an edge's description, a missing node's reason) is shown and exported
// masked.
func TestShowMasksPlantedSecrets(t *testing.T) {
	keys := []string{
		"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9o",
		"AKIAIOSFODNN7EXAMPLQ",
		"ghp_R8vXk2LmQ9pZ4tYw7nB3cD6fG1hJ5kL0sA2e",
	}
	dir := t.TempDir()
	g := graph.New()
	a, b := node("p1", 0, "The deploy key KEY0", "token KEY2"), node("p2", 0, "aws_access_key_id = KEY1", "uses KEY0")
	b.Turns[0].Text = "export GITHUB_TOKEN=KEY2"
	for _, n := range []*graph.ArgumentNode{a, b} {
		if err := g.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.AddEdge(graph.Edge{From: b.ID, To: a.ID, Type: graph.Supports, Confidence: 0.9, Description: "Both name KEY1"}); err != nil {
		t.Fatal(err)
	}
	g.Missing = []graph.Failure{{ID: "p1/branch-1", Reason: "invalid key KEY0"}}
	name := save(t, dir, "graph.json", g)
	// Planted by hand: Save would have masked them.
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for i, k := range keys {
		text = strings.ReplaceAll(text, fmt.Sprintf("KEY%d", i), k)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}

	for cmd, out := range outputs(t, dir, name) {
		plain := strings.ReplaceAll(out, `\`, "") // Markdown's escapes
		for _, k := range keys {
			if strings.Contains(plain, k[4:]) {
				t.Errorf("%s prints %s", cmd, k)
			}
		}
		if !strings.Contains(out, "[secret: ") && !strings.Contains(out, "#91;secret: ") {
			t.Errorf("%s shows no masked secret:\n%s", cmd, out)
		}
	}
	if !strings.Contains(secrets.Mask(text), secrets.Marker) {
		t.Fatal("internal/secrets finds none of the planted keys")
	}
}

// Show's JSON escapes what a terminal acts on, and reads back the same.
func TestSafeJSON(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"a": "plain, é"}`, `{"a": "plain, é"}`},
		{"{\"a\": \"\u202eabc\u009b\x7f\u2028\"}", `{"a": "\u202eabc\u009b\u007f\u2028"}`},
	} {
		if got := string(termsafe.JSON([]byte(tt.in))); got != tt.want {
			t.Errorf("termsafe.JSON(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

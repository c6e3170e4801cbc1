package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/internal/termsafe"
)

// Fake credentials of shapes internal/secrets knows: an OpenAI project
// key, an AWS access key id and a GitHub token.
var plantedSecrets = []string{
	"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9o",
	"AKIAIOSFODNN7EXAMPLQ",
	"ghp_R8vXk2LmQ9pZ4tYw7nB3cD6fG1hJ5kL0sA2e",
}

// leaked returns the first planted secret whose hidden part (all but the
// four characters a mask keeps) text holds, also once the backslashes of
// Markdown's and Argdown's escapes are taken out (Markdown writes ghp_ as
// ghp\_: the model reads the key all the same); "" when none.
func leaked(text string) string {
	plain := strings.ReplaceAll(text, `\`, "")
	for _, s := range plantedSecrets {
		if strings.Contains(text, s[4:]) || strings.Contains(plain, s[4:]) {
			return s
		}
	}
	return ""
}

// plant returns text with secret i in it, and checks that internal/secrets
// finds it there, so that a test of masking cannot pass for want of a
// secret to mask.
func plant(t testing.TB, text string, i int) string {
	t.Helper()
	s := strings.ReplaceAll(text, "$KEY", plantedSecrets[i%len(plantedSecrets)])
	if secrets.Mask(s) == s {
		t.Fatalf("internal/secrets finds no secret in %q", s)
	}
	return s
}

// plantedPassage is the id of a passage whose id itself holds a key.
var plantedPassage = "notes-" + plantedSecrets[2]

// plantedFile is a graph file as a repository might carry it, or as
// someone edited it: keys in every text of its nodes (topic, resolution,
// summary, branch question, passage id and title, tags, key claims, the
// turns' speakers, names and texts), in edge descriptions, in a missing
// node's reason. It is written as JSON directly, so nothing masks it on
// the way.
func plantedFile(t testing.TB) []byte {
	t.Helper()
	var nodes []*ArgumentNode
	k := 0
	next := func(text string) string { k++; return plant(t, text, k) }
	for p := 1; p <= 2; p++ {
		for b := 0; b <= 1; b++ {
			n := benchNode(p, b)
			if p == 2 {
				n.Passage.ID = plantedPassage
				n.ID = NodeID(n.Passage.ID, b)
			}
			n.Topic = next("The deploy key $KEY and " + n.Topic)
			n.Resolution += next(" The pipeline reads aws_access_key_id = $KEY for the bucket.")
			n.Summary = next("token $KEY; " + n.Summary)
			if b > 0 {
				n.Branch = next("Is $KEY still live?")
			}
			n.Passage.Title = next("runbook $KEY.md")
			n.Tags = append(n.Tags, "mortality", next("key-$KEY"))
			n.Claims[0].Text = next("$KEY is the key the job uses.")
			n.Turns[0].Speaker = next("$KEY")
			n.Turns[0].Name = next("Debater $KEY")
			n.Turns[1].Text += next("\nexport GITHUB_TOKEN=$KEY\nexport OPENAI_API_KEY=$KEY")
			nodes = append(nodes, n)
		}
	}
	edges := []Edge{
		{From: NodeID("passage-01-00000001", 1), To: NodeID("passage-01-00000001", 0), Type: BranchesFrom, Confidence: 1, Description: next("branch on: is $KEY live?")},
		{From: NodeID(plantedPassage, 1), To: NodeID(plantedPassage, 0), Type: BranchesFrom, Confidence: 1, Description: "branch on it"},
		{From: NodeID(plantedPassage, 0), To: NodeID("passage-01-00000001", 0), Type: Elaborates, Confidence: 0.8, Description: next("Both name $KEY.")},
	}
	missing := []Failure{{ID: NodeID(plantedPassage, 2), Reason: next("the provider said: invalid key $KEY")}}
	data, err := json.MarshalIndent(file{Format: FormatName, Version: FormatVersion, Nodes: nodes, Edges: edges, Missing: missing}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range plantedSecrets {
		if !bytes.Contains(data, []byte(s)) {
			t.Fatalf("the planted file lacks %s", s)
		}
	}
	return data
}

// writePlanted writes plantedFile to a new directory and returns its path.
func writePlanted(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.json")
	if err := os.WriteFile(path, plantedFile(t), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A graph file is material: read, it holds no key anywhere (its nodes,
// edges and missing nodes, as a plain encoding shows them), its edges
// still join the nodes whose ids were masked, and neither the debaters'
// context (the whole graph, and retrieval), nor the retrieval index on
// disk, nor the file and narrative written from it hold one, escaped or
// not (package debate/graph/export checks its formats).
func TestPlantedGraphIsMaskedWhenRead(t *testing.T) {
	g, err := Load(writePlanted(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 4 || len(g.Edges) != 3 || len(g.Missing) != 1 {
		t.Fatalf("%d nodes, %d edges, %d missing", len(g.Nodes), len(g.Edges), len(g.Missing))
	}
	plain, err := json.Marshal(struct {
		Nodes   []*ArgumentNode
		Edges   []Edge
		Missing []Failure
	}{g.Nodes, g.Edges, g.Missing})
	if err != nil {
		t.Fatal(err)
	}
	if s := leaked(string(plain)); s != "" {
		t.Errorf("the graph as read holds %s:\n%s", s, plain)
	}
	if got := len(g.Stats().Passages[1].Missing); got != 1 {
		t.Errorf("the masked passage has %d missing nodes, want 1", got)
	}

	budget := 0 // the whole graph, then retrieval under half of it
	for _, mode := range []string{ContextWhole, ContextRetrieval} {
		index := filepath.Join(t.TempDir(), "graph.db")
		c, err := RelevantContext(context.Background(), g, "The deploy key and the road toward death", ContextOptions{Budget: budget, IndexPath: index})
		if err != nil {
			t.Fatal(err)
		}
		if c.Mode != mode || len(c.Nodes) == 0 || !strings.Contains(c.Text, secrets.Marker) {
			t.Fatalf("%s (budget %d): the context is %s, and shows no masked node:\n%s", mode, budget, c.Mode, c.Text)
		}
		if s := leaked(c.Text); s != "" {
			t.Errorf("%s: the debaters' context holds %s", mode, s)
		}
		if db, err := os.ReadFile(index); err == nil {
			if s := leaked(string(db)); s != "" {
				t.Errorf("%s: the retrieval index on disk holds %s", mode, s)
			}
		} else if mode == ContextRetrieval {
			t.Fatal(err)
		}
		budget = c.GraphTokens / 2
	}

	data, err := g.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if s := leaked(string(data)); s != "" {
		t.Errorf("the graph's file holds %s", s)
	}
	if s := leaked(Linearize(g)); s != "" {
		t.Errorf("the linearized narrative holds %s", s)
	}
}

// What AddNode and AddEdge take is masked before it is stored, and a
// node put in Nodes by hand is masked when the graph is written.
func TestAddMasks(t *testing.T) {
	g := New()
	a, b := benchNode(1, 0), benchNode(2, 0)
	a.Summary = plant(t, "token $KEY", 2)
	a.Turns[0].Text = plant(t, "GITHUB_TOKEN=$KEY\nand more", 2)
	mustAdd(t, g, a)
	if s := leaked(a.Summary + a.Turns[0].Text); s != "" || !strings.HasSuffix(a.Turns[0].Text, "\nand more") {
		t.Errorf("AddNode stored %q, %q", a.Summary, a.Turns[0].Text)
	}
	b.Resolution = plant(t, "aws_access_key_id = $KEY", 1)
	g.Nodes = append(g.Nodes, b) // by hand
	if err := g.AddEdge(Edge{From: b.ID, To: a.ID, Type: Supports, Confidence: 0.9, Description: plant(t, "Both use $KEY.", 0)}); err != nil {
		t.Fatal(err)
	}
	if s := leaked(g.Edges[0].Description); s != "" {
		t.Errorf("AddEdge stored %q", g.Edges[0].Description)
	}
	g.Edges = append(g.Edges, Edge{From: b.ID, To: a.ID, Type: Analogy, Confidence: 0.9, Description: plant(t, "Also $KEY.", 0)}) // by hand
	data, err := g.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if s := leaked(string(data)); s != "" {
		t.Errorf("the graph was written with %s", s)
	}
}

// maskTexts searches a node's texts as one, and masks exactly what
// masking each text alone masks: secrets at a text's start and end, texts
// of several lines, empty texts, and texts past a batch.
func TestMaskTextsMasksAsEachAlone(t *testing.T) {
	big := strings.Repeat("The carriage held but just ourselves. ", maskBatch/38+1)
	for _, tt := range []struct {
		name  string
		texts []string
	}{
		{"none", []string{"a", "", "b"}},
		{"starts and ends", []string{plantedSecrets[2], "x " + plantedSecrets[2], plantedSecrets[1] + " x", plantedSecrets[0]}},
		{"lines", []string{"export GITHUB_TOKEN=" + plantedSecrets[2] + "\naws_access_key_id = " + plantedSecrets[1] + "\n", "\n" + plantedSecrets[0] + "\n"}},
		{"next to each other", []string{"token", plantedSecrets[2], "=", plantedSecrets[0]}},
		{"empty between", []string{"", plantedSecrets[1], "", ""}},
		{"past a batch", []string{big, "key " + plantedSecrets[0], big + plantedSecrets[2], "x", big, plantedSecrets[1]}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := append([]string(nil), tt.texts...)
			ps := make([]*string, len(got))
			for i := range got {
				ps[i] = &got[i]
			}
			maskTexts(ps)
			for i, text := range tt.texts {
				if want := secrets.Mask(text); got[i] != want {
					t.Errorf("text %d: got %.80q, want %.80q", i+1, got[i], want)
				}
			}
		})
	}
}

// The narrative's Markdown escapes, one text at a time (package
// debate/graph/export tests the escapes of its formats).
func TestEscapes(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
		escape         func(string) string
	}{
		{"markdown inline", "*a* _b_ `c` [d](e) <f> ~g~ |h| \\", `\*a\* \_b\_ \` + "`" + `c\` + "`" + ` \[d\](e) \<f\> \~g\~ \|h\| \\`, mdText},
		{"markdown terminal", "x\x1b[2J\nsot: done", `x\\x1b\[2J sot: done`, mdText},
		{"markdown line start", "# h", `\# h`, mdLine},
		{"markdown list start", "12. x", `12\. x`, mdLine},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.escape(tt.in); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// safeJSON escapes what a terminal acts on and JSON leaves as it is, and
// nothing else; the JSON reads back the same.
func TestSafeJSON(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`"plain, é, 中"`, `"plain, é, 中"`},
		{"\"\u202eabc\u2066\"", `"\u202eabc\u2066"`},
		{"\"c1 \u009b31m \u0085 del \x7f\"", `"c1 \u009b31m \u0085 del \u007f"`},
	} {
		got := termsafe.JSON([]byte(tt.in))
		if string(got) != tt.want {
			t.Errorf("termsafe.JSON(%q) = %s, want %s", tt.in, got, tt.want)
		}
		var a, b string
		if err := errors.Join(json.Unmarshal([]byte(tt.in), &a), json.Unmarshal(got, &b)); err != nil || a != b {
			t.Errorf("%q reads back as %q (%v)", tt.in, b, err)
		}
	}
}

// Parse checks a file's edges for cycles once, not once an edge, and
// refuses a file with the error AddEdge gives the first edge it refuses.
func TestParseRefusesEdgesAsAddEdge(t *testing.T) {
	ids := []string{"a/main", "b/main", "c/main", "d/main"}
	e := func(from, to int, typ EdgeType) Edge {
		return Edge{From: ids[from], To: ids[to], Type: typ, Confidence: 0.9}
	}
	for _, tt := range []struct {
		name  string
		edges []Edge
	}{
		{"backward", []Edge{e(1, 0, Supports), e(2, 1, Supports), e(3, 0, Requires)}},
		{"forward", []Edge{e(0, 1, Supports), e(1, 2, Supports), e(0, 3, Requires), e(2, 3, Analogy)}},
		{"cycle", []Edge{e(0, 1, Supports), e(1, 2, Supports), e(3, 0, Analogy), e(2, 0, Elaborates), e(2, 3, Supports)}},
		{"self", []Edge{e(0, 1, Supports), e(2, 2, Supports)}},
		{"cycle before a duplicate", []Edge{e(0, 1, Supports), e(1, 0, Supports), e(0, 1, Supports)}},
		{"duplicate before a cycle", []Edge{e(0, 1, Supports), e(0, 1, Supports), e(1, 0, Supports)}},
		{"cycle before an unknown node", []Edge{e(0, 1, Supports), e(1, 2, Supports), e(2, 0, Supports), {From: "x", To: ids[0], Type: Supports}}},
		{"bad type after a cycle", []Edge{e(0, 1, Supports), e(1, 0, Supports), {From: ids[2], To: ids[0], Type: "causes"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// What AddEdge, one edge at a time, says.
			ref := New()
			var f file
			for i, id := range ids {
				n := benchNode(i+1, 0)
				n.ID, n.Passage.ID = id, strings.TrimSuffix(id, "/main")
				mustAdd(t, ref, n)
				c := *n
				c.masked = false
				f.Nodes = append(f.Nodes, &c)
			}
			var want error
			for i, e := range tt.edges {
				if err := ref.AddEdge(e); err != nil {
					want = fmt.Errorf("edge %d: %s", i+1, strings.TrimPrefix(err.Error(), "graph: "))
					break
				}
			}
			f.Format, f.Version, f.Edges = FormatName, FormatVersion, tt.edges
			data, err := json.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			g, err := Parse(data)
			switch {
			case want == nil && err != nil:
				t.Fatalf("Parse: %v; AddEdge took every edge", err)
			case want != nil && (err == nil || err.Error() != want.Error()):
				t.Fatalf("Parse: %v\nAddEdge: %v", err, want)
			case want == nil && len(g.Edges) != len(tt.edges):
				t.Errorf("%d edges, want %d", len(g.Edges), len(tt.edges))
			}
		})
	}
}

// Anchors that come out the same are numbered, each number tried once
// however many nodes share a base, and never one taken by another node.
// (Package debate/graph/export checks its Argdown titles the same way.)
func TestUniqueNamesNumbered(t *testing.T) {
	g := New()
	for i, id := range []string{"a", "a!", "a-2", "a?", "A"} {
		n := benchNode(i+1, 0)
		n.ID = id
		mustAdd(t, g, n)
	}
	anchors := Anchors(g)
	for _, tt := range []struct{ id, anchor string }{
		{"a", "node-a"},
		{"a!", "node-a-2"},
		{"a-2", "node-a-2-2"},
		{"a?", "node-a-3"},
		{"A", "node-a-4"},
	} {
		if anchors[tt.id] != tt.anchor {
			t.Errorf("%s: anchor %q, want %q", tt.id, anchors[tt.id], tt.anchor)
		}
	}
}

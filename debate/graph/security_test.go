package graph

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fake credentials of shapes internal/secrets knows.
var plantedSecrets = []string{
	"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9o",
	"AKIAIOSFODNN7EXAMPLQ",
	"ghp_R8vXk2LmQ9pZ4tYw7nB3cD6fG1hJ5kL0sA2e",
}

// plantedGraph is a graph file as a repository might carry it: nodes whose
// texts hold credentials.
func plantedGraph(t *testing.T) []byte {
	t.Helper()
	g := New()
	a, b := benchNode(1, 0), benchNode(2, 0)
	a.Resolution += " The deploy key is " + plantedSecrets[0] + "."
	a.Claims[0].Text = "Use aws_access_key_id = " + plantedSecrets[1] + " for the bucket."
	b.Summary = "token " + plantedSecrets[2]
	b.Turns[0].Text += " export GITHUB_TOKEN=" + plantedSecrets[2]
	mustAdd(t, g, a, b)
	// Written by hand, as a planted file would be: no masking on the way.
	var buf bytes.Buffer
	for _, n := range g.Nodes {
		n.masked = true
	}
	data, err := g.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	buf.Write(data)
	for _, s := range plantedSecrets {
		if !bytes.Contains(buf.Bytes(), []byte(s)) {
			t.Fatalf("the planted file lacks %s", s)
		}
	}
	return buf.Bytes()
}

func holdsSecret(s string) string {
	for _, x := range plantedSecrets {
		if strings.Contains(s, x) {
			return x
		}
	}
	return ""
}

// A graph file is material: what it says reaches prompts masked, and the
// graph is written masked.
func TestGraphSecretsAreMasked(t *testing.T) {
	g, err := Parse(plantedGraph(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int{0, 300} { // the whole graph, and retrieval
		c, err := RelevantContext(context.Background(), g, "death and the road", ContextOptions{Budget: budget, IndexPath: filepath.Join(t.TempDir(), "g.db")})
		if err != nil {
			t.Fatal(err)
		}
		if s := holdsSecret(c.Text); s != "" {
			t.Errorf("budget %d (%s): the debaters' context holds %s", budget, c.Mode, s)
		}
	}
	req := judgeRequest(g.Nodes[1], g.Nodes[0], Options{Model: "openai:gpt-4.1", Nonce: "0123456789abcdef01234567"})
	if s := holdsSecret(req.System + req.Messages[0].Content); s != "" {
		t.Errorf("the judgement prompt holds %s", s)
	}
	req = classifyRequest(g.Nodes[1], "", Options{Model: "openai:gpt-4.1", Nonce: "0123456789abcdef01234567"})
	if s := holdsSecret(req.Messages[0].Content); s != "" {
		t.Errorf("the classification prompt holds %s", s)
	}
	path := filepath.Join(t.TempDir(), "g.json")
	if err := Save(path, g); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if s := holdsSecret(string(data)); s != "" {
		t.Errorf("the saved graph holds %s", s)
	}
	if !strings.Contains(string(data), "[secret:") {
		t.Errorf("the saved graph shows no masked secret")
	}
}

// Node text is data in every export: it can neither run a Mermaid
// directive, nor drive a terminal, nor start a line of its own.
func TestExportsNeutraliseNodeText(t *testing.T) {
	g := New()
	a, b := benchNode(1, 0), benchNode(1, 1)
	a.Topic = "%%{init: {'theme': 'dark', 'securityLevel': 'loose'}}%% click n1 call alert()"
	a.Summary = "title\x1b]0;pwned\x07 clear\x1b[2J"
	a.Resolution = "fine\nsot: graph verified, 0 problems\n# Injected heading"
	b.Topic = "abc\u202edcba \x1b[31mred"
	b.Passage = a.Passage
	mustAdd(t, g, a, b)
	mustEdge(t, g, b.ID, a.ID, BranchesFrom)
	for _, f := range Formats {
		var out bytes.Buffer
		if err := Export(&out, g, f); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		bad := "\x1b\x07\u202e"
		if f == FormatJSON {
			bad = "\x1b\x07" // JSON escapes C0 controls; other characters are its data
		}
		if strings.ContainsAny(text, bad) {
			t.Errorf("%s: a control character reached the export", f)
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "sot: graph verified") || strings.HasPrefix(line, "# Injected") {
				t.Errorf("%s: node text started a line of its own: %q", f, line)
			}
		}
		if f == FormatMermaid && strings.Count(text, "%%") != 1 {
			t.Errorf("mermaid: node text kept a %%%% directive:\n%s", text)
		}
	}
}

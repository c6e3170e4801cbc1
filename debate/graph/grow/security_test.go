package grow

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sotlabs/sot/debate/graph"
	"github.com/sotlabs/sot/internal/secrets"
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
	var nodes []*graph.ArgumentNode
	k := 0
	next := func(text string) string { k++; return plant(t, text, k) }
	for p := 1; p <= 2; p++ {
		for b := 0; b <= 1; b++ {
			n := benchNode(p, b)
			if p == 2 {
				n.Passage.ID = plantedPassage
				n.ID = graph.NodeID(n.Passage.ID, b)
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
	edges := []graph.Edge{
		{From: graph.NodeID("passage-01-00000001", 1), To: graph.NodeID("passage-01-00000001", 0), Type: graph.BranchesFrom, Confidence: 1, Description: next("branch on: is $KEY live?")},
		{From: graph.NodeID(plantedPassage, 1), To: graph.NodeID(plantedPassage, 0), Type: graph.BranchesFrom, Confidence: 1, Description: "branch on it"},
		{From: graph.NodeID(plantedPassage, 0), To: graph.NodeID("passage-01-00000001", 0), Type: graph.Elaborates, Confidence: 0.8, Description: next("Both name $KEY.")},
	}
	missing := []graph.Failure{{ID: graph.NodeID(plantedPassage, 2), Reason: next("the provider said: invalid key $KEY")}}
	data, err := json.MarshalIndent(graphFile{Format: graph.FormatName, Version: graph.FormatVersion, Nodes: nodes, Edges: edges, Missing: missing}, "", "  ")
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

// graphFile is a graph file as its JSON holds it, written here without
// the graph package, so that nothing masks it on the way.
type graphFile struct {
	Format  string                `json:"format"`
	Version int                   `json:"version"`
	Nodes   []*graph.ArgumentNode `json:"nodes"`
	Edges   []graph.Edge          `json:"edges"`
	Missing []graph.Failure       `json:"missing,omitempty"`
}

// The model never sees a key of a planted graph: a debate added to it
// (AddDebate through llmtest) judges its nodes against the planted ones,
// and no request the fake provider received holds a key, while the
// judgements did carry the planted nodes (masked). The graph saved after
// each node holds none either.
func TestPlantedGraphNeverReachesTheModel(t *testing.T) {
	path := writePlanted(t)
	g, err := graph.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	x, srv := testExecutor(t, classifyResponder(elaborate))
	saves := 0
	save := func(g *graph.DebateDAG) error { saves++; return graph.Save(path, g) }
	rep, err := AddDebate(context.Background(), x, g, secondDebate(), testOptions(), save)
	if err != nil {
		t.Fatal(err)
	}
	if rep.JudgeCalls == 0 || len(rep.Edges.Added) == 0 || saves == 0 {
		t.Fatalf("%d judgements, %d edges added, %d saves: the planted nodes were not judged", rep.JudgeCalls, len(rep.Edges.Added), saves)
	}
	carried := false
	for _, r := range srv.Requests() {
		if s := leaked(string(r.Body)); s != "" {
			t.Errorf("a %s request holds %s", r.SchemaName, s)
		}
		if r.SchemaName == judgeSchemaName && strings.Contains(r.LastUser(), secrets.Marker) {
			carried = true
		}
	}
	if !carried {
		t.Error("no judgement carried a planted node's text")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if s := leaked(string(data)); s != "" {
		t.Errorf("the saved graph holds %s", s)
	}
	if !strings.Contains(string(data), secrets.Marker) {
		t.Error("the saved graph shows no masked secret")
	}
	if _, err := graph.Parse(data); err != nil {
		t.Errorf("the saved graph does not parse: %v", err)
	}
}

package grow

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sotlabs/sot/debate/graph"

	"github.com/sotlabs/sot/config"
	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm/llmtest"
	"github.com/sotlabs/sot/llm/stack"
)

const testModel = "openai:gpt-4.1"

// testNonce is a fixed nonce, so that requests and goldens are the same
// in every run.
const testNonce = "0123456789abcdef01234567"

func testOptions() Options {
	return Options{Model: testModel, Nonce: testNonce, Now: func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }}
}

// testStack is a provider stack against srv, journaled at journal when it
// is not "".
func testStack(t testing.TB, srv *llmtest.Server, journal string) *stack.Stack {
	t.Helper()
	cfg := config.Defaults()
	p := cfg.Providers["openai"]
	p.BaseURL = srv.OpenAIBaseURL()
	cfg.Providers["openai"] = p
	cfg.DefaultModel = testModel
	cfg.Cache.Disabled = true
	cfg.Retries = 0
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-graph-0123456789"
		}
		return ""
	}
	st, err := stack.New(&cfg, stack.Options{Getenv: getenv, JournalPath: journal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// recorder is an Executor that keeps the labels of every step's tasks and
// passes the step on to a Local over a stack.
type recorder struct {
	inner engine.Executor
	mu    sync.Mutex
	steps [][]string
}

func (r *recorder) Execute(ctx context.Context, tasks []*engine.Task) []engine.Result {
	var labels []string
	for _, t := range tasks {
		labels = append(labels, t.Request.Label)
	}
	r.mu.Lock()
	r.steps = append(r.steps, labels)
	r.mu.Unlock()
	return r.inner.Execute(ctx, tasks)
}

func (r *recorder) calls() int {
	n := 0
	for _, s := range r.steps {
		n += len(s)
	}
	return n
}

// testExecutor starts llmtest answering with respond and returns a
// recording Executor over a stack against it.
func testExecutor(t testing.TB, respond func(*llmtest.Recorded) llmtest.Reply) (*recorder, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(llmtest.Config{Rules: []llmtest.Rule{{Respond: respond}}})
	t.Cleanup(srv.Close)
	return &recorder{inner: &engine.Local{Provider: testStack(t, srv, "")}}, srv
}

// fenced returns the lines of the fenced material of a request, without
// their gutter.
func fenced(user string) string {
	var out []string
	for _, l := range strings.Split(user, "\n") {
		if strings.HasPrefix(l, "│") {
			out = append(out, strings.TrimPrefix(l, "│"))
		}
	}
	return strings.Join(out, "\n")
}

var scriptKey = regexp.MustCompile(`\bSCRIPT:(\w+)`)

// classification is a scripted answer: the node type the debate's turns
// name with SCRIPT:<type>, topics and tags drawn from its words.
func classification(typ string, turns []int) map[string]any {
	claims := []map[string]any{}
	for _, t := range turns {
		claims = append(claims, map[string]any{"claim": fmt.Sprintf("A %s claim from turn %d.", typ, t), "turns": []int{t}})
	}
	return map[string]any{
		"type":       typ,
		"topic":      "Whether the carriage ride is a " + typ,
		"resolution": "The debaters reached a " + typ + " about the carriage and its passenger.",
		"summary":    "A " + typ + " about the carriage.",
		"tags":       []string{"mortality", typ + "-tag"},
		"key_claims": claims,
	}
}

// classifyResponder answers classification calls from the SCRIPT key in
// the debate (SCRIPT:badrefs cites turns that do not exist; SCRIPT:retry
// answers with an unknown type first), and judgement calls with
// judgeReply.
func classifyResponder(judge func(a, b string) map[string]any) func(*llmtest.Recorded) llmtest.Reply {
	return func(rec *llmtest.Recorded) llmtest.Reply {
		user := rec.LastUser()
		if rec.SchemaName == judgeSchemaName {
			first := rec.Messages[0].Text
			m := fenced(first)
			i := strings.Index(m, "Node B (earlier)")
			return llmtest.Reply{JSON: judge(m[:i], m[i:])}
		}
		m := fenced(rec.Messages[0].Text)
		key := "exploration"
		if k := scriptKey.FindStringSubmatch(m); k != nil {
			key = k[1]
		}
		switch key {
		case "badrefs":
			c := classification("lemma", []int{1})
			c["key_claims"] = []map[string]any{
				{"claim": "A claim with one real turn and two invented ones.", "turns": []int{2, 7, 9}},
				{"claim": "A claim that names no turn of the debate.", "turns": []int{42}},
			}
			return llmtest.Reply{JSON: c}
		case "retry":
			if strings.Contains(user, "does not fit") {
				return llmtest.Reply{JSON: classification("clarification", []int{1})}
			}
			c := classification("clarification", []int{1})
			c["key_claims"] = []map[string]any{{"claim": "Only invented turns.", "turns": []int{99}}}
			return llmtest.Reply{JSON: c}
		}
		return llmtest.Reply{JSON: classification(key, []int{1, 2})}
	}
}

// turns makes n turns whose text carries key.
func turns(key string, n int) []graph.Turn {
	var ts []graph.Turn
	for i := range n {
		ts = append(ts, graph.Turn{N: i + 1, Round: i/2 + 1, Speaker: fmt.Sprintf("d%d", i%2+1), Name: fmt.Sprintf("Debater %d", i%2+1),
			Text: fmt.Sprintf("Turn text %d. SCRIPT:%s The carriage holds but just ourselves and immortality.", i+1, key)})
	}
	return ts
}

func mustJSONString(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// node makes a classified node of passage p.
func node(id, p string, typ graph.NodeType, tags ...string) *graph.ArgumentNode {
	return &graph.ArgumentNode{ID: id, Type: typ, Topic: "Topic of " + id, Resolution: "Resolution of " + id + ".", Summary: "Summary of " + id,
		Passage: graph.Passage{ID: p, Title: p + ".txt"}, Tags: tags, Created: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Turns:  []graph.Turn{{N: 1, Speaker: "d1", Text: "One."}, {N: 2, Speaker: "d2", Text: "Two."}},
		Claims: []graph.Claim{{Text: "A claim of " + id, Turns: []int{1, 2}}}}
}

func mustAdd(t testing.TB, g *graph.DebateDAG, nodes ...*graph.ArgumentNode) {
	t.Helper()
	for _, n := range nodes {
		if err := g.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
}

func mustEdge(t testing.TB, g *graph.DebateDAG, from, to string, typ graph.EdgeType) {
	t.Helper()
	if err := g.AddEdge(graph.Edge{From: from, To: to, Type: typ, Description: from + " " + string(typ) + " " + to, Confidence: 0.8}); err != nil {
		t.Fatal(err)
	}
}

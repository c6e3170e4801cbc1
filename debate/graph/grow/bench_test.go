package grow

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sotlabs/sot/debate/graph"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/llm/llmtest"
)

// benchLatency is each call's latency at the fake provider; its answers
// stream from a first token at a tenth of it.
const benchLatency = 200 * time.Millisecond

// benchThemes are the themes the passages draw their tags and words from:
// passage p is about themes p and p+1 (mod 8), so each shares themes with
// some passages and not others.
var benchThemes = []struct{ tag, words string }{
	{"mortality", "death dying the grave mortal time running out"},
	{"journey", "the road the carriage travel passage toward an end"},
	{"time", "hours seasons the clock the years passing"},
	{"loss", "grief what is gone decline falling away"},
	{"power", "kings empire command ruin of works"},
	{"nature", "leaves gold green spring the natural cycle"},
	{"art", "the sculptor making images that outlast their maker"},
	{"faith", "eternity immortality belief beyond the world"},
}

// benchNode is a node of passage p, branch b, as a classification would
// make it: a resolution of about sixty words, three key claims, three tags.
func benchNode(p, b int) *graph.ArgumentNode {
	t1, t2 := benchThemes[p%8], benchThemes[(p+1)%8]
	pid := fmt.Sprintf("passage-%02d-0000000%d", p, p%10)
	n := &graph.ArgumentNode{
		ID: graph.NodeID(pid, b), Type: graph.NodeTypes[(p+b)%len(graph.NodeTypes)], Passage: graph.Passage{ID: pid, Title: fmt.Sprintf("passage-%02d.txt", p)},
		Topic:      fmt.Sprintf("How passage %d ties %s to %s", p, t1.tag, t2.tag),
		Resolution: fmt.Sprintf("The debaters read %s through %s. One side held that the passage treats %s as its real subject; the other answered that %s frames it, and the closing lines support both. They agreed the imagery of %s carries the argument, and left open whether the speaker accepts it or resists it to the end.", t1.words, t2.words, t1.tag, t2.tag, t2.words),
		Summary:    fmt.Sprintf("%s read through %s, partly settled.", t1.tag, t2.tag),
		Tags:       []string{t1.tag, t2.tag, fmt.Sprintf("passage-%d", p)},
		Created:    time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Turns:      turns(t1.tag, 4),
		Claims: []graph.Claim{
			{Text: fmt.Sprintf("The passage makes %s concrete through %s.", t1.tag, t2.words), Turns: []int{1}},
			{Text: fmt.Sprintf("The turn to %s in the closing lines is deliberate.", t2.tag), Turns: []int{2, 3}},
			{Text: "The speaker's calm is a stance, not an absence of feeling.", Turns: []int{4}},
		},
	}
	if b > 0 {
		n.Branch = fmt.Sprintf("Does passage %d's %s undercut its %s?", p, t2.tag, t1.tag)
	}
	return n
}

// benchGraph is nine passages, each a main debate and two branches: 27
// nodes, 18 branches_from edges and an elaboration from each passage's
// main node to the one before.
func benchGraph(tb testing.TB) *graph.DebateDAG {
	g := graph.New()
	for p := 1; p <= 9; p++ {
		for b := 0; b <= 2; b++ {
			mustAdd(tb, g, benchNode(p, b))
			if b > 0 {
				mustEdge(tb, g, graph.NodeID(benchNode(p, b).Passage.ID, b), graph.NodeID(benchNode(p, 0).Passage.ID, 0), graph.BranchesFrom)
			}
		}
		if p > 1 {
			mustEdge(tb, g, benchNode(p, 0).ID, benchNode(p-1, 0).ID, graph.Elaborates)
		}
	}
	return g
}

// benchResponder classifies a debate from the themes its turns carry, and
// judges every pair an elaboration.
func benchResponder(rec *llmtest.Recorded) llmtest.Reply {
	if rec.SchemaName == judgeSchemaName {
		return llmtest.Reply{JSON: map[string]any{"relation": "elaborates", "confidence": 0.75, "description": "It carries the earlier reading to a new passage."}}
	}
	m := fenced(rec.Messages[0].Text)
	key := scriptKey.FindStringSubmatch(m)[1]
	n := benchNode(10, 0)
	return llmtest.Reply{JSON: map[string]any{
		"type": "synthesis", "topic": "How passage 10 ties " + key + " to the others", "resolution": n.Resolution, "summary": n.Summary,
		"tags": n.Tags, "key_claims": []map[string]any{{"claim": n.Claims[0].Text, "turns": []int{1}}, {"claim": n.Claims[1].Text, "turns": []int{2}}},
	}}
}

// tenthDebate is the tenth passage's debate: six turns of the main debate
// and two branches of four, each turn about 120 words.
func tenthDebate() Debate {
	long := func(key string, n int) []graph.Turn {
		ts := turns(key, n)
		for i := range ts {
			ts[i].Text += " " + strings.Repeat("The leaves turn gold and the hours run toward the grave, and the speaker meets it calmly. ", 7)
		}
		return ts
	}
	return Debate{Passage: graph.Passage{ID: "passage-10-00000000", Title: "passage-10.txt"},
		Text: "Nature's first green is gold, her hardest hue to hold.",
		Main: long("nature", 6),
		Branches: []BranchDebate{
			{Question: "Is gold a loss or a gift?", Turns: long("loss", 4)},
			{Question: "What does Eden add?", Turns: long("faith", 4)},
		}}
}

// BenchmarkAddTenthPassage adds a tenth passage to a graph of nine (27
// nodes) against llmtest at 200 ms a call, in process: the context its
// debaters get (graph.RelevantContext at the default budget), then AddDebate,
// whose critical path is two dependent calls (the classifications, then
// the judgements), 400 ms. Reported: the judgement calls (at most
// MaxCandidates for each of the passage's 3 nodes, however large the
// graph), the classification calls, the context's tokens and nodes, and
// the median wall time of the whole over the critical path; then, once,
// the context under a budget of 3,000 tokens, which the graph does not
// fit: its tokens, its nodes and the time retrieval took (indexing the
// 27 nodes in a temporary SQLite file included).
func BenchmarkAddTenthPassage(b *testing.B) {
	srv := llmtest.NewServer(llmtest.Config{Latency: benchLatency, RecordLimit: 64, Rules: []llmtest.Rule{{Respond: benchResponder}}})
	defer srv.Close()
	x := &engine.Local{Provider: testStack(b, srv, "")}
	base, err := benchGraph(b).MarshalJSON()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	d := tenthDebate()
	var walls []time.Duration
	var rep *Report
	var c *graph.Context
	for b.Loop() {
		g, err := graph.Parse(base)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if c, err = graph.RelevantContext(ctx, g, d.Text, graph.ContextOptions{}); err != nil {
			b.Fatal(err)
		}
		if rep, err = AddDebate(ctx, x, g, d, testOptions(), nil); err != nil {
			b.Fatal(err)
		}
		walls = append(walls, time.Since(start))
		if len(rep.Nodes.Added) != 3 || len(rep.Nodes.Failed) != 0 || len(rep.Edges.Failed) != 0 || rep.Steps != 2 {
			b.Fatalf("report %+v, nodes %+v", rep, rep.Nodes)
		}
	}
	slices.Sort(walls)
	median := walls[len(walls)/2]
	critical := 2 * benchLatency
	b.ReportMetric(float64(median)/float64(critical), "wall/critical-path")
	b.ReportMetric(float64(median)/float64(time.Millisecond), "wall-ms")
	b.ReportMetric(float64(rep.JudgeCalls), "judge-calls")
	b.ReportMetric(float64(rep.ClassifyCalls), "classify-calls")
	b.ReportMetric(float64(len(rep.Edges.Added)), "edges-added")
	b.ReportMetric(float64(c.Tokens), "context-tokens")
	b.ReportMetric(float64(len(c.Nodes)), "context-nodes")
	b.ReportMetric(float64(c.Omitted), "context-omitted")

	// The same passage under a budget the graph does not fit: retrieval.
	g, _ := graph.Parse(base)
	start := time.Now()
	r, err := graph.RelevantContext(ctx, g, d.Text+" "+d.Main[0].Text, graph.ContextOptions{Budget: benchRetrievalBudget})
	if err != nil || r.Mode != graph.ContextRetrieval {
		b.Fatalf("retrieval: %v, %+v", err, r)
	}
	b.ReportMetric(float64(time.Since(start))/float64(time.Millisecond), "retrieval-ms")
	b.ReportMetric(float64(r.Tokens), "retrieval-tokens")
	b.ReportMetric(float64(len(r.Nodes)), "retrieval-nodes")
}

// benchRetrievalBudget is a budget under the nine passages' graph, to
// measure retrieval.
const benchRetrievalBudget = 3000

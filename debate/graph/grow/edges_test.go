package grow

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sotlabs/sot/debate/graph"

	"github.com/sotlabs/sot/llm/llmtest"
)

// wideGraph has passages p1..p9, each a main node and two branches, every
// node tagged "mortality" and one tag of its own passage.
func wideGraph(t testing.TB) *graph.DebateDAG {
	g := graph.New()
	for p := 1; p <= 9; p++ {
		pid := fmt.Sprintf("p%d", p)
		main := node(pid+"/main", pid, graph.Exploration, "mortality", pid+"-theme")
		main.Topic = fmt.Sprintf("The carriage of passage %d and its slow drive", p)
		mustAdd(t, g, main)
		for b := 1; b <= 2; b++ {
			n := node(fmt.Sprintf("%s/branch-%d", pid, b), pid, graph.Lemma, "mortality", pid+"-theme")
			n.Branch = fmt.Sprintf("Question %d of passage %d?", b, p)
			mustAdd(t, g, n)
			mustEdge(t, g, n.ID, main.ID, graph.BranchesFrom)
		}
	}
	return g
}

// The candidates are bounded: at most MaxCandidates for each new node,
// however many earlier nodes share its tags, never one of its own passage
// nor one joined to it already, best score first.
func TestCandidatePairsBounded(t *testing.T) {
	g := wideGraph(t)
	var ids []string
	for i, typ := range []graph.NodeType{graph.Synthesis, graph.Impasse, graph.Question} {
		n := node(fmt.Sprintf("new/%d", i), "new", typ, "mortality")
		if i == 0 {
			n.Tags = append(n.Tags, "p4-theme") // shares two tags with passage 4
		}
		mustAdd(t, g, n)
		ids = append(ids, n.ID)
	}
	mustEdge(t, g, "new/0", "p4/branch-1", graph.Supports) // joined already: no candidate

	o := testOptions()
	pairs := CandidatePairs(g, ids, o)
	if len(pairs) != 3*DefaultMaxCandidates {
		t.Fatalf("%d pairs, want %d", len(pairs), 3*DefaultMaxCandidates)
	}
	per := map[string]int{}
	for k, p := range pairs {
		per[p.From]++
		if strings.HasPrefix(p.To, "new/") || g.Linked(p.From, p.To) {
			t.Errorf("pair %+v", p)
		}
		if k > 0 && pairs[k-1].From == p.From && pairs[k-1].Score < p.Score {
			t.Errorf("pairs out of order: %+v before %+v", pairs[k-1], p)
		}
	}
	for _, id := range ids {
		if per[id] != DefaultMaxCandidates {
			t.Errorf("%s has %d candidates", id, per[id])
		}
	}
	if got := []string{pairs[0].To, pairs[1].To}; !slices.Equal(got, []string{"p4/branch-2", "p4/main"}) || !slices.Equal(pairs[0].SharedTags, []string{"mortality", "p4-theme"}) {
		t.Errorf("new/0's best candidates: %+v", pairs[:3])
	}

	o.MaxCandidates = 1
	if n := len(CandidatePairs(g, ids, o)); n != 3 {
		t.Errorf("MaxCandidates 1: %d pairs", n)
	}
	// A node that shares no tag and few words with any other has none.
	lone := node("lone/main", "lone", graph.Lemma, "astronomy")
	lone.Topic, lone.Resolution, lone.Summary, lone.Claims = "Orbital resonance", "Jupiter's moons lock.", "Moons.", []graph.Claim{{Text: "Io, Europa, Ganymede.", Turns: []int{1}}}
	mustAdd(t, g, lone)
	if pairs := CandidatePairs(g, []string{"lone/main"}, testOptions()); len(pairs) != 0 {
		t.Errorf("lone node: %+v", pairs)
	}
	// The same graph gives the same pairs.
	if a, b := CandidatePairs(g, ids, testOptions()), CandidatePairs(g, ids, testOptions()); !slices.EqualFunc(a, b, func(x, y Pair) bool { return x.From == y.From && x.To == y.To }) {
		t.Error("the pairs change from one call to the next")
	}
}

var judgeTopic = regexp.MustCompile(`Topic: (.*)`)

// Judgements: all pairs in one step; an edge at or above the threshold is
// added, one below it and a "none" are reported, one that would close a
// cycle is refused, and an answer without a description is asked for
// again.
func TestJudge(t *testing.T) {
	g := graph.New()
	mustAdd(t, g, node("a/main", "a", graph.Synthesis, "x"), node("b/main", "b", graph.Lemma, "x"), node("c/main", "c", graph.Impasse, "x"),
		node("d/main", "d", graph.Question, "x"), node("e/main", "e", graph.Clarification, "x"), node("new/main", "new", graph.Exploration, "x"))
	// e builds on the new node already (added by hand), and d on e: a
	// judged edge new → d would close new → d → e → new.
	mustEdge(t, g, "e/main", "new/main", graph.Elaborates)
	mustEdge(t, g, "d/main", "e/main", graph.Requires)

	verdicts := map[string]map[string]any{
		"a": {"relation": "elaborates", "confidence": 0.9, "description": "It extends the carriage reading."},
		"b": {"relation": "supports", "confidence": 0.4, "description": "Weakly."},
		"c": {"relation": "none", "confidence": 0.8, "description": ""},
		"d": {"relation": "contradicts", "confidence": 0.95, "description": "They clash."},
	}
	x, srv := testExecutor(t, func(rec *llmtest.Recorded) llmtest.Reply {
		m := fenced(rec.Messages[0].Text)
		topics := judgeTopic.FindAllStringSubmatch(m, -1)
		to := strings.TrimSuffix(strings.TrimPrefix(topics[1][1], "Topic of "), "/main")
		if v, ok := verdicts[to]; ok {
			return llmtest.Reply{JSON: v}
		}
		panic("no verdict for " + to)
	})
	pairs := []Pair{{From: "new/main", To: "a/main"}, {From: "new/main", To: "b/main"}, {From: "new/main", To: "c/main"}, {From: "new/main", To: "d/main"}}
	js, err := NewJudgements(g, pairs, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	calls, err := Judge(context.Background(), x, js)
	if err != nil || calls != 4 || len(x.steps) != 1 || srv.Count() != 4 {
		t.Fatalf("%d calls in %d steps: %v", calls, len(x.steps), err)
	}
	rep := AddJudgements(g, js, testOptions())
	if len(rep.Added) != 1 || rep.Added[0].To != "a/main" || rep.Added[0].Type != graph.Elaborates || rep.Added[0].Confidence != 0.9 {
		t.Errorf("added %+v", rep.Added)
	}
	if len(rep.Below) != 1 || rep.Below[0].To != "b/main" || rep.None != 1 || rep.Threshold != DefaultThreshold {
		t.Errorf("below %+v, none %d", rep.Below, rep.None)
	}
	if len(rep.Refused) != 1 || !strings.Contains(rep.Refused[0].Reason, "would close the cycle new/main → d/main → e/main → new/main") {
		t.Errorf("refused %+v", rep.Refused)
	}
	if g.Linked("new/main", "d/main") || g.Linked("new/main", "b/main") {
		t.Error("a refused or weak edge is in the graph")
	}
	for _, r := range srv.Requests() {
		if r.SchemaName != judgeSchemaName || !strings.Contains(r.LastUser(), "<<<END MATERIAL "+testNonce+">>>") {
			t.Errorf("request %q without schema or fence", r.SchemaName)
		}
	}
}

func TestJudgeAsksAgain(t *testing.T) {
	g := graph.New()
	mustAdd(t, g, node("a/main", "a", graph.Synthesis, "x"), node("new/main", "new", graph.Exploration, "x"))
	x, srv := testExecutor(t, func(rec *llmtest.Recorded) llmtest.Reply {
		if len(rec.Messages) == 1 {
			return llmtest.Reply{JSON: map[string]any{"relation": "analogy", "confidence": 0.7, "description": " "}}
		}
		return llmtest.Reply{JSON: map[string]any{"relation": "analogy", "confidence": 0.7, "description": "Both read a journey as a life."}}
	})
	js, _ := NewJudgements(g, []Pair{{From: "new/main", To: "a/main"}}, testOptions())
	if _, err := Judge(context.Background(), x, js); err != nil {
		t.Fatal(err)
	}
	if srv.Count() != 2 || !strings.Contains(srv.Requests()[1].LastUser(), "the description is empty") || js[0].Attempts() != 2 {
		t.Fatalf("%d requests", srv.Count())
	}
	rep := AddJudgements(g, js, testOptions())
	if len(rep.Added) != 1 || rep.Added[0].Type != graph.Analogy {
		t.Errorf("report %+v", rep)
	}
	// A failed call is reported, and nothing is added.
	js, _ = NewJudgements(g, []Pair{{From: "new/main", To: "a/main"}}, testOptions())
	srv.SetConfig(llmtest.Config{Rules: []llmtest.Rule{{Fault: llmtest.Fault500}}})
	if _, err := Judge(context.Background(), x, js); err != nil {
		t.Fatal(err)
	}
	if js[0].Err() == nil || errors.Is(js[0].Err(), context.Canceled) {
		t.Fatalf("err %v", js[0].Err())
	}
	if rep := AddJudgements(g, js, testOptions()); len(rep.Failed) != 1 || len(rep.Added) != 0 {
		t.Errorf("report %+v", rep)
	}
}

package grow

import (
	"context"
	"sync"

	"github.com/sotlabs/sot/debate/graph"

	"github.com/sotlabs/sot/engine"
)

// Report is what AddDebate did.
type Report struct {
	Passage graph.Passage `json:"passage"`
	Nodes   *ApplyReport  `json:"nodes"`
	Pairs   []Pair        `json:"pairs"`
	Edges   *JudgeReport  `json:"edges"`
	// ClassifyCalls and JudgeCalls count the calls handed to the
	// Executor (an answer asked for again counts twice); Steps counts its
	// Executes, the critical path of dependent calls.
	ClassifyCalls int `json:"classify_calls"`
	JudgeCalls    int `json:"judge_calls"`
	Steps         int `json:"steps"`
}

// AddDebate grows g by one finished debate: its nodes, classified in one
// step (and one more for answers that did not fit), added one at a time
// with their branches_from edges; then the candidate pairs between the
// passage's nodes and the other passages' (CandidatePairs), judged in one
// step (and one more), and the edges at or above the threshold added.
// save, when set, is called after each node and once after the edges.
//
// Run again after a crash with the same debate, the same Options and a
// journaled Executor, AddDebate classifies only the nodes the saved graph
// lacks, and every call it made before is answered from the journal.
func AddDebate(ctx context.Context, x engine.Executor, g *graph.DebateDAG, d Debate, o Options, save func(*graph.DebateDAG) error) (*Report, error) {
	rep := &Report{Passage: d.Passage}
	cx := &countingExecutor{inner: x}
	defer func() { rep.Steps = cx.steps() }()
	nodes, err := NodesFromDebate(g, d, o)
	if err != nil {
		return rep, err
	}
	if rep.ClassifyCalls, err = Classify(ctx, cx, nodes); err != nil {
		return rep, err
	}
	if rep.Nodes, err = Apply(g, nodes, save); err != nil {
		return rep, err
	}
	var ids []string
	for _, n := range g.Nodes {
		if n.Passage.ID == d.Passage.ID {
			ids = append(ids, n.ID)
		}
	}
	rep.Pairs = CandidatePairs(g, ids, o)
	js, err := NewJudgements(g, rep.Pairs, o)
	if err != nil {
		return rep, err
	}
	if rep.JudgeCalls, err = Judge(ctx, cx, js); err != nil {
		return rep, err
	}
	rep.Edges = AddJudgements(g, js, o)
	if save != nil && len(rep.Edges.Added) > 0 {
		if err := save(g); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// countingExecutor counts the Executes it passes on.
type countingExecutor struct {
	inner engine.Executor
	mu    sync.Mutex
	n     int
}

func (c *countingExecutor) Execute(ctx context.Context, tasks []*engine.Task) []engine.Result {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.inner.Execute(ctx, tasks)
}

func (c *countingExecutor) steps() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Calls bounds the calls AddDebate makes for a debate of n nodes, for a
// plan's estimate: typical is one classification a node and
// MaxCandidates judgements a node (fewer when fewer earlier nodes are
// related); bound counts each of them asked twice, as an answer that does
// not fit is.
func Calls(n int, o Options) (typical, bound int) {
	typical = n + n*o.maxCandidates()
	return typical, 2 * typical
}

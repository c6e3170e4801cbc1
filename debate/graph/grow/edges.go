package grow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sotlabs/sot/debate/graph"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/lexical"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/prompt"
)

// Pair is a candidate edge: a new node and an earlier node of another
// passage that look related.
type Pair struct {
	// From is the new node, To the earlier one; a judged edge goes From → To.
	From string `json:"from"`
	To   string `json:"to"`
	// SharedTags are the tags both nodes have; Overlap is the Jaccard
	// similarity of their words (topic, resolution, summary, claims, tags).
	SharedTags []string `json:"shared_tags,omitempty"`
	Overlap    float64  `json:"overlap"`
	// Score ranks the candidates of a node: the Jaccard similarity of the
	// two tag sets plus Overlap.
	Score float64 `json:"score"`
}

// CandidatePairs picks, without a model, the pairs worth judging: for each
// node in newIDs, the nodes of other passages that share a tag with it or
// whose words overlap by Options.MinOverlap, not joined to it by an edge
// yet, best Score first (ties: the node added first), at most
// Options.MaxCandidates of them. So a passage of n nodes costs at most
// n × MaxCandidates judgement calls, however large the graph. The pairs
// come in the order of newIDs, each node's best first.
func CandidatePairs(g *graph.DebateDAG, newIDs []string, o Options) []Pair {
	words := map[string]lexical.Set{}
	wordsOf := func(n *graph.ArgumentNode) lexical.Set {
		if w, ok := words[n.ID]; ok {
			return w
		}
		w := lexical.Words(nodeText(n))
		words[n.ID] = w
		return w
	}
	var out []Pair
	for _, id := range newIDs {
		n := g.Node(id)
		if n == nil {
			continue
		}
		var cands []Pair
		for _, m := range g.Nodes {
			if m.Passage.ID == n.Passage.ID || g.Linked(n.ID, m.ID) {
				continue
			}
			shared := sharedTags(n.Tags, m.Tags)
			overlap := lexical.Jaccard(wordsOf(n), wordsOf(m))
			if len(shared) == 0 && overlap < o.minOverlap() {
				continue
			}
			union := len(n.Tags) + len(m.Tags) - len(shared)
			tagScore := 0.0
			if union > 0 {
				tagScore = float64(len(shared)) / float64(union)
			}
			cands = append(cands, Pair{From: n.ID, To: m.ID, SharedTags: shared, Overlap: round3(overlap), Score: round3(tagScore + overlap)})
		}
		// Stable: among equal scores the earlier node (its place in Nodes) stays first.
		slices.SortStableFunc(cands, func(a, b Pair) int {
			switch {
			case a.Score > b.Score:
				return -1
			case a.Score < b.Score:
				return 1
			}
			return 0
		})
		out = append(out, cands[:min(len(cands), o.maxCandidates())]...)
	}
	return out
}

// nodeText is what a node says, as one text: the words candidate pairs
// are picked by.
func nodeText(n *graph.ArgumentNode) string {
	parts := []string{n.Topic, n.Resolution, n.Summary}
	for _, c := range n.Claims {
		parts = append(parts, c.Text)
	}
	for _, t := range n.Tags {
		parts = append(parts, strings.ReplaceAll(t, "-", " "))
	}
	return strings.Join(parts, "\n")
}

func sharedTags(a, b []string) []string {
	var out []string
	for _, t := range a {
		if slices.Contains(b, t) {
			out = append(out, t)
		}
	}
	return out
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// Judgement is one candidate pair on its way to becoming an edge, or not:
// one structured call that gives the relation, a confidence and a
// one-line description.
type Judgement struct {
	Pair Pair
	// Type is the judged relation; "" when the judge found none.
	Type        graph.EdgeType
	Confidence  float64
	Description string
	ask
}

// Judged reports whether the pair has its judgement.
func (j *Judgement) Judged() bool { return j.done }

// Err says why the judgement failed; nil while it has not.
func (j *Judgement) Err() error { return j.err }

// Attempts is the number of answers read: 2 when the first did not fit.
func (j *Judgement) Attempts() int { return j.attempts }

// Request is the judgement's first request.
func (j *Judgement) Request() *llm.Request { return j.req }

// NewJudgements makes a judgement, with its request, for each pair.
func NewJudgements(g *graph.DebateDAG, pairs []Pair, o Options) ([]*Judgement, error) {
	if o.Nonce == "" {
		return nil, errors.New("graph: Options.Nonce is empty; give the run's nonce")
	}
	js := make([]*Judgement, 0, len(pairs))
	for _, p := range pairs {
		a, b := g.Node(p.From), g.Node(p.To)
		if a == nil || b == nil {
			return nil, fmt.Errorf("graph: pair %s, %s: no such node in the graph", p.From, p.To)
		}
		j := &Judgement{Pair: p}
		j.req = judgeRequest(a, b, o)
		js = append(js, j)
	}
	return js, nil
}

// JudgeTasks returns the tasks of the judgements still to make: each
// pair's first request, or the request asked once more for an answer that
// did not fit. All of them go in one Execute; hand its results to
// ReadJudgements.
func JudgeTasks(js []*Judgement) []*engine.Task { return tasksOf(judgeAsks(js)) }

// ReadJudgements reads the answers to JudgeTasks' tasks.
func ReadJudgements(js []*Judgement, results []engine.Result) {
	readAll(judgeAsks(js), results, func(i int, raw []byte) string { return js[i].parse(raw) })
}

// Judge makes every judgement through x: one Execute for all the pairs,
// then one for the answers that did not fit. It returns the calls made.
func Judge(ctx context.Context, x engine.Executor, js []*Judgement) (int, error) {
	calls, _, err := run(ctx, x, judgeAsks(js), func(i int, raw []byte) string { return js[i].parse(raw) })
	return calls, err
}

func judgeAsks(js []*Judgement) []*ask {
	asks := make([]*ask, len(js))
	for i, j := range js {
		asks[i] = &j.ask
	}
	return asks
}

// parse reads a judgement; it returns why the answer does not fit, or "".
func (j *Judgement) parse(raw []byte) string {
	var a struct {
		Relation    string   `json:"relation"`
		Confidence  *float64 `json:"confidence"`
		Description string   `json:"description"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return "it is not the JSON object the schema asks for: " + err.Error()
	}
	rel := strings.ToLower(strings.TrimSpace(a.Relation))
	typ := graph.EdgeType(rel)
	if rel != "none" && !slices.Contains(graph.JudgedTypes, typ) {
		return fmt.Sprintf("relation %q is not one of %s, none", a.Relation, typeList(graph.JudgedTypes))
	}
	if a.Confidence == nil || !(*a.Confidence >= 0 && *a.Confidence <= 1) {
		return "the confidence is not a number from 0 to 1"
	}
	desc := oneLine(secrets.Mask(a.Description))
	if rel == "none" {
		typ, desc = "", ""
	} else if desc == "" {
		return "the description is empty; say in one line how A relates to B"
	}
	j.Type, j.Confidence, j.Description = typ, round3(*a.Confidence), desc
	return ""
}

// JudgeReport is what AddJudgements did with the judgements.
type JudgeReport struct {
	// Added are the edges added.
	Added []graph.Edge `json:"added"`
	// Below are the edges judged under the threshold, not added.
	Below []graph.Edge `json:"below_threshold,omitempty"`
	// None counts the pairs the judge found unrelated.
	None int `json:"none"`
	// Refused are edges the graph refused (a cycle, an edge it holds
	// already), with the reason.
	Refused []Refusal `json:"refused,omitempty"`
	// Failed are the pairs whose judgement failed.
	Failed []graph.Failure `json:"failed,omitempty"`
	// Threshold is the confidence an edge needed.
	Threshold float64 `json:"threshold"`
}

// Refusal is an edge the graph would not take.
type Refusal struct {
	Edge   graph.Edge `json:"edge"`
	Reason string     `json:"reason"`
}

// AddJudgements adds to g the edges judged at or above the confidence
// threshold, in the order of the judgements, and reports the rest.
func AddJudgements(g *graph.DebateDAG, js []*Judgement, o Options) *JudgeReport {
	rep := &JudgeReport{Added: []graph.Edge{}, Threshold: o.threshold()}
	for _, j := range js {
		p := j.Pair
		switch {
		case !j.done:
			reason := "not judged"
			if j.err != nil {
				reason = llm.Redact(j.err.Error())
			}
			rep.Failed = append(rep.Failed, graph.Failure{ID: p.From + " → " + p.To, Reason: reason})
			continue
		case j.Type == "":
			rep.None++
			continue
		}
		e := graph.Edge{From: p.From, To: p.To, Type: j.Type, Description: j.Description, Confidence: j.Confidence}
		if e.Confidence < rep.Threshold {
			rep.Below = append(rep.Below, e)
			continue
		}
		if err := g.AddEdge(e); err != nil {
			rep.Refused = append(rep.Refused, Refusal{Edge: e, Reason: strings.TrimPrefix(err.Error(), "graph: ")})
			continue
		}
		rep.Added = append(rep.Added, e)
	}
	return rep
}

// judgeRequest is the request that judges how a (new) relates to b.
func judgeRequest(a, b *graph.ArgumentNode, o Options) *llm.Request {
	var m strings.Builder
	for _, x := range []struct {
		name string
		n    *graph.ArgumentNode
	}{{"A (new)", a}, {"B (earlier)", b}} {
		n := x.n
		fmt.Fprintf(&m, "Node %s, from the passage %s", x.name, oneLine(n.Passage.Title))
		if n.Branch != "" {
			fmt.Fprintf(&m, ", branch question: %s", n.Branch)
		}
		fmt.Fprintf(&m, "\nType: %s\nTopic: %s\nResolution: %s\nTags: %s\nKey claims:\n", n.Type, n.Topic, n.Resolution, strings.Join(n.Tags, ", "))
		for _, c := range n.Claims {
			m.WriteString("- " + c.Text + "\n")
		}
		m.WriteString("\n")
	}
	user := prompt.Fence(secrets.Mask(m.String()), o.Nonce) + "\n\nHow does node A relate to node B?"
	return &llm.Request{
		Model: o.Model, System: judgeSystem, Temperature: llm.Float(0), MaxTokens: 300,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: user}},
		Schema:   &llm.Schema{Name: judgeSchemaName, JSON: judgeSchema},
		Label:    "graph/judge/" + a.ID + "->" + b.ID,
	}
}

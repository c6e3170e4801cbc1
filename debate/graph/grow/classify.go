package grow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sotlabs/sot/debate/graph"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/internal/secrets"
	"github.com/sotlabs/sot/llm"
	"github.com/sotlabs/sot/prompt"
)

// Debate is one finished debate of a passage, as the graph takes it: the
// main debate's turns and each branch's question and turns. A part without
// turns (a branch that failed) makes no node.
type Debate struct {
	Passage graph.Passage
	// Text is the passage itself. The classification calls read it beside
	// the turns; it may be left empty.
	Text     string
	Main     []graph.Turn
	Branches []BranchDebate
}

// BranchDebate is one branch of a debate.
type BranchDebate struct {
	// N is the branch's number in the debate (from 1); 0 takes its place
	// in Debate.Branches. It makes the node's id, so a branch keeps its id
	// when another branch failed.
	N        int
	Question string
	Turns    []graph.Turn
}

// PendingNode is a node of a debate on its way into the graph: built from
// the debate's turns, then classified by one structured call.
type PendingNode struct {
	// Node has its id, passage, branch question, turns and time; the
	// classification fills in the rest.
	Node *graph.ArgumentNode
	// Main is, for a branch, the id of the main debate's node it branches
	// from; "" for the main debate.
	Main string
	// Dropped lists what the classification's answer held that the graph
	// does not take: turn references to turns the node does not have, key
	// claims left without a turn, tags past the eighth.
	Dropped []string
	ask
}

// Request is the classification's first request.
func (p *PendingNode) Request() *llm.Request { return p.req }

// Classified reports whether the node has its classification.
func (p *PendingNode) Classified() bool { return p.done }

// Err says why the classification failed: the call failed, or its answer
// did not fit twice (*AnswerError). Nil while it has not failed.
func (p *PendingNode) Err() error { return p.err }

// Attempts is the number of answers read: 2 when the first did not fit.
func (p *PendingNode) Attempts() int { return p.attempts }

// NodesFromDebate returns the nodes of a debate that g does not hold yet,
// the main debate first, then the branches in order, each with the request
// that classifies it. Nodes g already holds (saved before a crash) are
// left out, so that a resumed run classifies only the rest.
func NodesFromDebate(g *graph.DebateDAG, d Debate, o Options) ([]*PendingNode, error) {
	if o.Nonce == "" {
		return nil, errors.New("graph: Options.Nonce is empty; give the run's nonce")
	}
	if d.Passage.ID == "" {
		return nil, errors.New("graph: the debate's passage has no id (see PassageID)")
	}
	created := stamp(o.Now)
	mainID := graph.NodeID(d.Passage.ID, 0)
	var out []*PendingNode
	add := func(branch int, question string, turns []graph.Turn) error {
		id := graph.NodeID(d.Passage.ID, branch)
		if len(turns) == 0 || g.Node(id) != nil {
			return nil
		}
		n := &graph.ArgumentNode{ID: id, Passage: d.Passage, Branch: oneLine(question), Created: created, Turns: make([]graph.Turn, len(turns))}
		for i, t := range turns {
			t.N = i + 1
			n.Turns[i] = t
		}
		if branch > 0 && n.Branch == "" {
			return fmt.Errorf("graph: branch %d of %s has no question", branch, d.Passage.ID)
		}
		p := &PendingNode{Node: n}
		if branch > 0 {
			p.Main = mainID
		}
		p.req = classifyRequest(n, d.Text, o)
		out = append(out, p)
		return nil
	}
	if err := add(0, "", d.Main); err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	for i, b := range d.Branches {
		k := b.N
		if k == 0 {
			k = i + 1
		}
		if k < 0 || seen[k] {
			return nil, fmt.Errorf("graph: branch number %d of %s is negative or given twice", k, d.Passage.ID)
		}
		seen[k] = true
		if err := add(k, b.Question, b.Turns); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ClassifyTasks returns the tasks that classify the pending nodes: each
// node's first request, or, for a node whose answer did not fit, the
// request asked once more with the problem. Nodes classified, failed or
// asked twice have none. Run them in one Execute and hand the results to
// ReadClassifications.
func ClassifyTasks(nodes []*PendingNode) []*engine.Task { return tasksOf(asksOf(nodes)) }

// ReadClassifications reads the answers to ClassifyTasks' tasks into
// their nodes.
func ReadClassifications(nodes []*PendingNode, results []engine.Result) {
	readAll(asksOf(nodes), results, func(i int, raw []byte) string { return nodes[i].parse(raw) })
}

// Classify classifies the pending nodes through x: one Execute for every
// node, then one for the answers that did not fit. It returns the calls it
// made; a node whose classification failed says why in Err.
func Classify(ctx context.Context, x engine.Executor, nodes []*PendingNode) (int, error) {
	calls, _, err := run(ctx, x, asksOf(nodes), func(i int, raw []byte) string { return nodes[i].parse(raw) })
	return calls, err
}

func asksOf(nodes []*PendingNode) []*ask {
	asks := make([]*ask, len(nodes))
	for i, p := range nodes {
		asks[i] = &p.ask
	}
	return asks
}

// classAnswer is a classification as the schema shapes it.
type classAnswer struct {
	Type       string   `json:"type"`
	Topic      string   `json:"topic"`
	Resolution string   `json:"resolution"`
	Summary    string   `json:"summary"`
	Tags       []string `json:"tags"`
	KeyClaims  []struct {
		Claim string `json:"claim"`
		Turns []int  `json:"turns"`
	} `json:"key_claims"`
}

// maxTags is the most tags a node keeps.
const maxTags = 8

// maxSummaryWords is the longest one-line summary taken.
const maxSummaryWords = 30

// parse reads a classification into the node; it returns why the answer
// does not fit, or "". Turn references to turns the node does not have
// are dropped and listed in Dropped, as is a claim left with none.
func (p *PendingNode) parse(raw []byte) string {
	var a classAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return "it is not the JSON object the schema asks for: " + err.Error()
	}
	n := p.Node
	typ := graph.NodeType(strings.ToLower(strings.TrimSpace(a.Type)))
	if !typ.Valid() {
		return fmt.Sprintf("type %q is not one of %s", a.Type, typeList(graph.NodeTypes))
	}
	topic, resolution, summary := oneLine(a.Topic), oneLine(a.Resolution), oneLine(a.Summary)
	switch {
	case topic == "":
		return "the topic is empty"
	case resolution == "":
		return "the resolution is empty"
	case summary == "":
		return "the summary is empty"
	case len(strings.Fields(summary)) > maxSummaryWords:
		return fmt.Sprintf("the summary has %d words; give it in one line of at most 15", len(strings.Fields(summary)))
	}
	var dropped []string
	tags := normalizeTags(a.Tags)
	if len(tags) == 0 {
		return "there is no tag; give 2 to 6 theme tags"
	}
	if len(tags) > maxTags {
		dropped = append(dropped, fmt.Sprintf("tags past the %dth: %s", maxTags, strings.Join(tags[maxTags:], ", ")))
		tags = tags[:maxTags]
	}
	var claims []graph.Claim
	for i, c := range a.KeyClaims {
		text := oneLine(c.Claim)
		if text == "" {
			dropped = append(dropped, fmt.Sprintf("key claim %d is empty", i+1))
			continue
		}
		var turns, bad []int
		for _, t := range c.Turns {
			switch {
			case n.Turn(t) == nil:
				if !slices.Contains(bad, t) {
					bad = append(bad, t)
				}
			case !slices.Contains(turns, t):
				turns = append(turns, t)
			}
		}
		slices.Sort(turns)
		if len(bad) > 0 {
			dropped = append(dropped, fmt.Sprintf("key claim %d refers to turn(s) %s, which the debate does not have (it has turns 1 to %d)", i+1, ints(bad), len(n.Turns)))
		}
		if len(turns) == 0 {
			dropped = append(dropped, fmt.Sprintf("key claim %d (%q) is dropped: no turn of the debate is given for it", i+1, text))
			continue
		}
		claims = append(claims, graph.Claim{Text: text, Turns: turns})
	}
	if len(claims) == 0 && p.attempts >= 2 {
		// Asked twice, the model still names no turn the debate has: the
		// claims are kept without turns rather than the node lost.
		for _, c := range a.KeyClaims {
			if text := oneLine(c.Claim); text != "" {
				claims = append(claims, graph.Claim{Text: text, Turns: []int{}})
			}
		}
		if len(claims) > 0 {
			dropped = append(dropped, fmt.Sprintf("the %d key claim(s) are kept without turns: asked twice, the answer named none of the debate's turns 1 to %d", len(claims), len(n.Turns)))
		}
	}
	if len(claims) == 0 {
		return fmt.Sprintf("no key claim names a turn of the debate that made it (the turns are numbered 1 to %d)", len(n.Turns))
	}
	n.Type, n.Topic, n.Resolution, n.Summary, n.Tags, n.Claims = typ, topic, resolution, summary, tags, claims
	p.Dropped = dropped
	return ""
}

// normalizeTags makes tags lowercase with hyphens for spaces and
// underscores, without a leading #, each once, in their order.
func normalizeTags(in []string) []string {
	var out []string
	for _, t := range in {
		t = strings.TrimLeft(strings.TrimSpace(t), "#")
		t = strings.Join(strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return r == ' ' || r == '_' || r == '-' || r == '\t' }), "-")
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// ApplyReport is what Apply added to the graph.
type ApplyReport struct {
	// Added are the ids of the nodes added, in order.
	Added []string `json:"added"`
	// Edges are the branches_from edges added.
	Edges []graph.Edge `json:"edges,omitempty"`
	// Failed are the nodes whose classification failed; they are not in
	// the graph, and a later run of the same debate tries them again.
	Failed []graph.Failure `json:"failed,omitempty"`
	// Notes say what was dropped from answers, and branches left without
	// their main debate's node.
	Notes []string `json:"notes,omitempty"`
}

// Apply adds the classified nodes to g, in order, each branch with its
// branches_from edge to the main debate's node (when g holds it), and
// calls save after each node, so that a crash loses at most the node in
// progress. Nodes that failed are reported and left out. An error from
// save stops Apply.
func Apply(g *graph.DebateDAG, nodes []*PendingNode, save func(*graph.DebateDAG) error) (*ApplyReport, error) {
	rep := &ApplyReport{}
	for _, p := range nodes {
		id := p.Node.ID
		if !p.done {
			reason := "not classified"
			if p.err != nil {
				reason = llm.Redact(p.err.Error())
			}
			rep.Failed = append(rep.Failed, graph.Failure{ID: id, Reason: reason})
			g.MarkMissing(id, reason)
			if save != nil {
				if err := save(g); err != nil {
					return rep, err
				}
			}
			continue
		}
		g.MarkMissing(id, "")
		for _, d := range p.Dropped {
			rep.Notes = append(rep.Notes, id+": "+d)
		}
		if err := g.AddNode(p.Node); err != nil {
			return rep, err
		}
		rep.Added = append(rep.Added, id)
		if p.Main == "" {
			// Branches added while this main node was missing join it now.
			for _, b := range g.Nodes {
				if b.IsBranch() && b.Passage.ID == p.Node.Passage.ID && !g.Linked(b.ID, id) {
					e := graph.Edge{From: b.ID, To: id, Type: graph.BranchesFrom, Description: "branch on: " + b.Branch, Confidence: 1}
					if err := g.AddEdge(e); err == nil {
						rep.Edges = append(rep.Edges, e)
					}
				}
			}
		}
		if p.Main != "" {
			if g.Node(p.Main) == nil {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s: the main debate's node %s is not in the graph, so the branch joins it by no edge", id, p.Main))
			} else {
				e := graph.Edge{From: id, To: p.Main, Type: graph.BranchesFrom, Description: "branch on: " + p.Node.Branch, Confidence: 1}
				if err := g.AddEdge(e); err != nil && !errors.Is(err, graph.ErrDuplicateEdge) {
					return rep, err
				} else if err == nil {
					rep.Edges = append(rep.Edges, e)
				}
			}
		}
		if save != nil {
			if err := save(g); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// classifyRequest is the request that classifies node n.
func classifyRequest(n *graph.ArgumentNode, passage string, o Options) *llm.Request {
	var m strings.Builder
	fmt.Fprintf(&m, "Passage: %s\n", n.Passage.Title)
	if n.Branch != "" {
		fmt.Fprintf(&m, "Branch question: %s\n", n.Branch)
	} else {
		m.WriteString("This is the main debate over the passage.\n")
	}
	if passage = strings.TrimSpace(passage); passage != "" {
		m.WriteString("\nThe passage:\n" + passage + "\n")
	}
	m.WriteString("\nThe turns:\n")
	for _, t := range n.Turns {
		who := t.Name
		if who == "" {
			who = t.Speaker
		}
		fmt.Fprintf(&m, "\nTurn %d", t.N)
		switch {
		case who != "" && t.Round > 0:
			fmt.Fprintf(&m, " (%s, round %d)", oneLine(who), t.Round)
		case who != "":
			fmt.Fprintf(&m, " (%s)", oneLine(who))
		}
		m.WriteString(":\n" + strings.TrimSpace(t.Text) + "\n")
	}
	kind := "the main debate over a passage"
	if n.Branch != "" {
		kind = "a branch debate over one question about a passage"
	}
	user := fmt.Sprintf("The debate below is %s, with %d turn(s), numbered 1 to %d.\n\n%s\n\nFile this debate as one node of the argument graph.",
		kind, len(n.Turns), len(n.Turns), prompt.Fence(secrets.Mask(m.String()), o.Nonce))
	return &llm.Request{
		Model: o.Model, System: classifySystem, Temperature: llm.Float(0), MaxTokens: 1500,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: user}},
		Schema:   &llm.Schema{Name: classifySchemaName, JSON: classifySchema},
		Label:    "graph/classify/" + n.ID,
	}
}

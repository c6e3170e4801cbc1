package graph

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sotlabs/sot/internal/secrets"
)

// NodeType is what a debate arrived at.
type NodeType string

// The node types, as the seed names them.
const (
	// Synthesis: the debaters converged on a shared reading.
	Synthesis NodeType = "synthesis"
	// Impasse: they ended in a disagreement they named and could not settle.
	Impasse NodeType = "impasse"
	// Lemma: they established a narrower point a larger argument can use.
	Lemma NodeType = "lemma"
	// Question: the result is a sharper question, left open.
	Question NodeType = "question"
	// Exploration: they surveyed readings without settling on one.
	Exploration NodeType = "exploration"
	// Clarification: they fixed what a term, line or claim means.
	Clarification NodeType = "clarification"
)

// NodeTypes are the node types in the order reports list them.
var NodeTypes = []NodeType{Synthesis, Impasse, Lemma, Question, Exploration, Clarification}

// Valid reports whether t is one of NodeTypes.
func (t NodeType) Valid() bool { return slices.Contains(NodeTypes, t) }

// EdgeType is how one node relates to another. An edge From → To reads
// "From <type> To": the later node is From, the earlier one To.
type EdgeType string

// The edge types.
const (
	// BranchesFrom joins a branch's node to its main debate's node. It is
	// structural: no model judges it.
	BranchesFrom EdgeType = "branches_from"
	Contradicts  EdgeType = "contradicts"
	Elaborates   EdgeType = "elaborates"
	Supports     EdgeType = "supports"
	Requires     EdgeType = "requires"
	AppliesTo    EdgeType = "applies_to"
	Analogy      EdgeType = "analogy"
)

// EdgeTypes are the edge types in the order reports list them.
var EdgeTypes = []EdgeType{BranchesFrom, Contradicts, Elaborates, Supports, Requires, AppliesTo, Analogy}

// JudgedTypes are the edge types a judgement may give a candidate pair:
// every type but BranchesFrom.
var JudgedTypes = EdgeTypes[1:]

// Valid reports whether t is one of EdgeTypes.
func (t EdgeType) Valid() bool { return slices.Contains(EdgeTypes, t) }

// Verb is the edge type as words: "From <verb> To".
func (t EdgeType) Verb() string {
	switch t {
	case AppliesTo:
		return "applies to"
	case BranchesFrom:
		return "branches from"
	case Analogy:
		return "is analogous to"
	}
	return string(t)
}

// Passage is the passage a node's debate was about.
type Passage struct {
	// ID identifies the passage in the graph (see PassageID).
	ID string `json:"id"`
	// Title is what the user knows it by: a file name, a heading.
	Title string `json:"title"`
}

// Turn is one debater's contribution to a node's debate.
type Turn struct {
	// N numbers the node's turns from 1 in speaking order; key claims
	// refer to turns by it.
	N     int `json:"n"`
	Round int `json:"round,omitempty"`
	// Speaker is the debater's id, Name how the debate named them.
	Speaker string `json:"speaker"`
	Name    string `json:"name,omitempty"`
	Text    string `json:"text"`
}

// Claim is one of a node's key claims, with the turns that made it.
type Claim struct {
	Text  string `json:"text"`
	Turns []int  `json:"turns"`
}

// ArgumentNode is a unit of argument that reached some completion: a main
// debate or a branch.
type ArgumentNode struct {
	ID   string   `json:"id"`
	Type NodeType `json:"type"`
	// Topic is what the debate was about, in one sentence; Resolution where
	// it ended, in a few; Summary the node in one line.
	Topic      string `json:"topic"`
	Resolution string `json:"resolution"`
	Summary    string `json:"summary"`
	// Passage is the passage debated; Branch the branch question, "" for a
	// main debate.
	Passage Passage `json:"passage"`
	Branch  string  `json:"branch_question,omitempty"`
	// Tags are theme tags: lowercase, words joined by hyphens, each once.
	Tags    []string  `json:"tags"`
	Claims  []Claim   `json:"key_claims"`
	Created time.Time `json:"created"`
	Turns   []Turn    `json:"turns"`

	masked bool // maskSecrets has run (see AddNode)
}

// Turn returns the node's turn numbered n, or nil.
func (n *ArgumentNode) Turn(num int) *Turn {
	for i := range n.Turns {
		if n.Turns[i].N == num {
			return &n.Turns[i]
		}
	}
	return nil
}

// IsBranch reports whether the node is a branch debate's.
func (n *ArgumentNode) IsBranch() bool { return n.Branch != "" }

// Edge is a typed relation between two nodes: "From <Type> To".
type Edge struct {
	From string   `json:"from"`
	To   string   `json:"to"`
	Type EdgeType `json:"type"`
	// Description says in one line how From relates to To.
	Description string `json:"description"`
	// Confidence is the judge's, from 0 to 1; 1 for a structural edge.
	Confidence float64 `json:"confidence"`
}

func (e Edge) String() string { return fmt.Sprintf("%s -%s-> %s", e.From, e.Type, e.To) }

// DebateDAG is the argument graph: nodes in the order they were added, and
// edges that never close a cycle. The zero value is an empty graph. It is
// not safe for concurrent use.
type DebateDAG struct {
	Nodes []*ArgumentNode
	Edges []Edge
	// Missing are the nodes of passages in the graph that could not be
	// made (their classification failed), each with why; the passage is
	// not whole until a later run adds them (see MarkMissing).
	Missing []Failure
	at      map[string]int // node id → index in Nodes

	// An index of Edges, kept as edges are added and rebuilt when Edges
	// was changed by hand (its length differs from indexed).
	indexed int
	edgeSet map[edgeKey]bool
	out     map[string][]string // node id → the targets of its edges, in edge order
	// forward counts the edges whose From was added before their To. While
	// there are none, an edge from a later node to an earlier one cannot
	// close a cycle, so no search is needed (sot's own edges all point back).
	forward int
}

type edgeKey struct {
	from, to string
	typ      EdgeType
}

// edgeIndex brings the index of Edges up to date.
func (g *DebateDAG) edgeIndex() {
	if g.edgeSet != nil && g.indexed == len(g.Edges) {
		return
	}
	g.edgeSet = make(map[edgeKey]bool, len(g.Edges))
	g.out = make(map[string][]string)
	g.forward = 0
	g.indexed = 0
	for _, e := range g.Edges {
		g.indexEdge(e)
	}
}

func (g *DebateDAG) indexEdge(e Edge) {
	g.edgeSet[edgeKey{e.From, e.To, e.Type}] = true
	g.out[e.From] = append(g.out[e.From], e.To)
	fi, ok1 := g.index(e.From)
	ti, ok2 := g.index(e.To)
	if !ok1 || !ok2 || fi <= ti {
		g.forward++
	}
	g.indexed++
}

// New returns an empty graph.
func New() *DebateDAG { return &DebateDAG{} }

// ErrDuplicateEdge is returned, wrapped, for an edge the graph holds
// already (the same From, To and Type).
var ErrDuplicateEdge = errors.New("the graph holds this edge already")

// CycleError refuses an edge that would close a cycle.
type CycleError struct {
	Edge Edge
	// Cycle is the node ids around the cycle, in the edges' direction,
	// starting and ending with Edge.From.
	Cycle []string
}

func (e *CycleError) Error() string {
	return fmt.Sprintf("edge %s would close the cycle %s", e.Edge, strings.Join(e.Cycle, " → "))
}

func (g *DebateDAG) reindex() {
	g.at = make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		g.at[n.ID] = i
	}
}

// Node returns the node with id, or nil.
func (g *DebateDAG) Node(id string) *ArgumentNode {
	if i, ok := g.index(id); ok {
		return g.Nodes[i]
	}
	return nil
}

// index returns the position of the node with id in Nodes.
func (g *DebateDAG) index(id string) (int, bool) {
	if g.at == nil || len(g.at) != len(g.Nodes) {
		g.reindex()
	}
	i, ok := g.at[id]
	if ok && (i >= len(g.Nodes) || g.Nodes[i].ID != id) {
		g.reindex() // Nodes was changed by hand
		i, ok = g.at[id]
	}
	return i, ok
}

// AddNode adds a node. Its id must be new, its type valid, and each claim's
// turns the numbers of its turns. The secrets in its texts are masked
// (internal/secrets) before it is stored: n itself is changed.
func (g *DebateDAG) AddNode(n *ArgumentNode) error {
	if err := checkNode(n); err != nil {
		return err
	}
	if _, ok := g.index(n.ID); ok {
		return fmt.Errorf("graph: node %q is in the graph already", n.ID)
	}
	n.maskSecrets()
	g.Nodes = append(g.Nodes, n)
	g.at[n.ID] = len(g.Nodes) - 1
	return nil
}

func checkNode(n *ArgumentNode) error {
	if n == nil {
		return errors.New("graph: a nil node")
	}
	if strings.TrimSpace(n.ID) == "" {
		return errors.New("graph: a node has no id")
	}
	if !n.Type.Valid() {
		return fmt.Errorf("graph: node %q has the type %q; the types are %s", n.ID, n.Type, typeList(NodeTypes))
	}
	seen := map[int]bool{}
	for _, t := range n.Turns {
		if t.N < 1 || seen[t.N] {
			return fmt.Errorf("graph: node %q numbers a turn %d; turns are numbered from 1, each once", n.ID, t.N)
		}
		seen[t.N] = true
	}
	for i, c := range n.Claims {
		for _, t := range c.Turns {
			if !seen[t] {
				return fmt.Errorf("graph: key claim %d of node %q refers to turn %d, which the node does not have", i+1, n.ID, t)
			}
		}
	}
	return nil
}

// AddEdge adds an edge between two nodes of the graph. It refuses an edge
// of an unknown type, one that names a node the graph does not hold, a
// confidence outside 0 to 1, an edge the graph holds already
// (ErrDuplicateEdge), and an edge that would close a cycle (*CycleError,
// an edge from a node to itself among them). The secrets in its
// description are masked.
func (g *DebateDAG) AddEdge(e Edge) error {
	if err := g.checkEdge(e); err != nil {
		return err
	}
	fi, _ := g.index(e.From)
	ti, _ := g.index(e.To)
	if g.forward > 0 || fi <= ti {
		if cyc := path(g.out, e.To, e.From); cyc != nil {
			return &CycleError{Edge: e, Cycle: append([]string{e.From}, cyc...)}
		}
	}
	if e.Description != "" {
		e.Description = secrets.Mask(e.Description)
	}
	g.Edges = append(g.Edges, e)
	g.indexEdge(e)
	return nil
}

// checkEdge checks e as AddEdge does, but for cycles.
func (g *DebateDAG) checkEdge(e Edge) error {
	if !e.Type.Valid() {
		return fmt.Errorf("graph: edge %s: the type %q is not one of %s", e, e.Type, typeList(EdgeTypes))
	}
	for _, id := range []string{e.From, e.To} {
		if _, ok := g.index(id); !ok {
			return fmt.Errorf("graph: edge %s: no node %q in the graph", e, id)
		}
	}
	if !(e.Confidence >= 0 && e.Confidence <= 1) {
		return fmt.Errorf("graph: edge %s: confidence %v is not from 0 to 1", e, e.Confidence)
	}
	g.edgeIndex()
	if g.edgeSet[edgeKey{e.From, e.To, e.Type}] {
		return fmt.Errorf("graph: edge %s: %w", e, ErrDuplicateEdge)
	}
	return nil
}

// addEdges adds es (a file's edges, masked already) as AddEdge would add
// them one by one, and refuses them with the same error, naming the
// edge's number, but searches for a cycle once, over the whole graph,
// rather than once an edge: a file whose nodes are not in sot's order (an
// edge from an earlier node to a later one) is read in linear time.
func (g *DebateDAG) addEdges(es []Edge) error {
	refuse := func(i int, err error) error {
		return fmt.Errorf("edge %d: %s", i+1, strings.TrimPrefix(err.Error(), "graph: "))
	}
	// cycle reports the first edge of es[:n] that closes a cycle, as
	// AddEdge would have refused it.
	cycle := func(n int) error {
		if g.forward == 0 || g.acyclic(es[:n]) {
			return nil
		}
		lo, hi := 0, n // es[:lo] holds no cycle, es[:hi] does
		for hi-lo > 1 {
			if mid := (lo + hi) / 2; g.acyclic(es[:mid]) {
				lo = mid
			} else {
				hi = mid
			}
		}
		e := es[hi-1]
		cyc := path(outOf(es[:hi-1]), e.To, e.From)
		return refuse(hi-1, &CycleError{Edge: e, Cycle: append([]string{e.From}, cyc...)})
	}
	for i, e := range es {
		if err := g.checkEdge(e); err != nil {
			if cerr := cycle(i); cerr != nil {
				return cerr
			}
			return refuse(i, err)
		}
		g.Edges = append(g.Edges, e)
		g.indexEdge(e)
	}
	return cycle(len(es))
}

// acyclic reports whether the edges es, between nodes of g, hold no cycle.
func (g *DebateDAG) acyclic(es []Edge) bool {
	indeg := make([]int, len(g.Nodes))
	out := make([][]int, len(g.Nodes))
	for _, e := range es {
		fi, _ := g.index(e.From)
		ti, _ := g.index(e.To)
		out[fi] = append(out[fi], ti)
		indeg[ti]++
	}
	var ready []int
	for i, d := range indeg {
		if d == 0 {
			ready = append(ready, i)
		}
	}
	seen := 0
	for len(ready) > 0 {
		i := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		seen++
		for _, j := range out[i] {
			if indeg[j]--; indeg[j] == 0 {
				ready = append(ready, j)
			}
		}
	}
	return seen == len(g.Nodes)
}

// outOf maps each node id to the targets of its edges in es, in order.
func outOf(es []Edge) map[string][]string {
	out := map[string][]string{}
	for _, e := range es {
		out[e.From] = append(out[e.From], e.To)
	}
	return out
}

// path returns the node ids of a path from → ... → to along the edges out
// gives (DebateDAG.out: all of a graph's), or nil when there is none. The
// search is breadth-first over edges in the order they were added, so the
// path is a shortest one and always the same.
func path(out map[string][]string, from, to string) []string {
	if from == to {
		return []string{to}
	}
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, next := range out[cur] {
			if _, ok := prev[next]; ok {
				continue
			}
			prev[next] = cur
			if next == to {
				var p []string
				for at := to; at != ""; at = prev[at] {
					p = append(p, at)
				}
				slices.Reverse(p)
				return p
			}
			queue = append(queue, next)
		}
	}
	return nil
}

// Failure is a node or pair that could not be made.
type Failure struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// MarkMissing records the node id as missing, with why (masked), or, when
// reason is "", as missing no more (see Missing).
func (g *DebateDAG) MarkMissing(id, reason string) {
	g.Missing = slices.DeleteFunc(g.Missing, func(m Failure) bool { return m.ID == id })
	if reason != "" {
		g.Missing = append(g.Missing, Failure{ID: id, Reason: secrets.Mask(reason)})
	}
}

// MissingOf lists the missing nodes of passage id (see DebateDAG.Missing).
func (g *DebateDAG) MissingOf(passageID string) []Failure {
	var out []Failure
	for _, m := range g.Missing {
		if strings.HasPrefix(m.ID, passageID+"/") {
			out = append(out, m)
		}
	}
	return out
}

// Linked reports whether an edge of any type joins a and b, either way.
func (g *DebateDAG) Linked(a, b string) bool {
	g.edgeIndex()
	for _, pair := range [][2]string{{a, b}, {b, a}} {
		for _, t := range EdgeTypes {
			if g.edgeSet[edgeKey{pair[0], pair[1], t}] {
				return true
			}
		}
	}
	return false
}

// Order returns the nodes in topological order: every node after the
// nodes its edges point to (the earlier nodes it builds on, the main
// debate before its branches). Among the nodes that may come next, the one
// added first comes first, so the order is always the same.
func (g *DebateDAG) Order() []*ArgumentNode {
	pending := make([]int, len(g.Nodes)) // edges to nodes not yet placed
	waiting := map[string][]int{}        // node id → nodes whose edges point to it
	for _, e := range g.Edges {
		i, ok1 := g.index(e.From)
		_, ok2 := g.index(e.To)
		if !ok1 || !ok2 {
			continue
		}
		pending[i]++
		waiting[e.To] = append(waiting[e.To], i)
	}
	ready := &minHeap{}
	for i, n := range pending {
		if n == 0 {
			ready.push(i)
		}
	}
	order := make([]*ArgumentNode, 0, len(g.Nodes))
	placed := make([]bool, len(g.Nodes))
	for ready.len() > 0 {
		i := ready.pop()
		placed[i] = true
		order = append(order, g.Nodes[i])
		for _, j := range waiting[g.Nodes[i].ID] {
			if pending[j]--; pending[j] == 0 {
				ready.push(j)
			}
		}
	}
	// A graph whose Edges were changed by hand may hold a cycle: its nodes
	// follow in the order they were added, so none is lost.
	for i, n := range g.Nodes {
		if !placed[i] {
			order = append(order, n)
		}
	}
	return order
}

// Passages returns the graph's passages in the order their first node was
// added.
func (g *DebateDAG) Passages() []Passage {
	var out []Passage
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		if !seen[n.Passage.ID] {
			seen[n.Passage.ID] = true
			out = append(out, n.Passage)
		}
	}
	return out
}

// minHeap is a min-heap of ints.
type minHeap struct{ a []int }

func (h *minHeap) len() int { return len(h.a) }

func (h *minHeap) push(x int) {
	h.a = append(h.a, x)
	for i := len(h.a) - 1; i > 0; {
		p := (i - 1) / 2
		if h.a[p] <= h.a[i] {
			break
		}
		h.a[p], h.a[i] = h.a[i], h.a[p]
		i = p
	}
}

func (h *minHeap) pop() int {
	top := h.a[0]
	last := len(h.a) - 1
	h.a[0] = h.a[last]
	h.a = h.a[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.a) && h.a[l] < h.a[m] {
			m = l
		}
		if r < len(h.a) && h.a[r] < h.a[m] {
			m = r
		}
		if m == i {
			break
		}
		h.a[i], h.a[m] = h.a[m], h.a[i]
		i = m
	}
	return top
}

func typeList[T ~string](ts []T) string { return strings.Join(names(ts), ", ") }

func names[T ~string](ts []T) []string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return s
}

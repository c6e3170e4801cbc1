package synthesis

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/sotlabs/sot/engine"
	"github.com/sotlabs/sot/lexical"
	"github.com/sotlabs/sot/review/finding"
)

// Options configure a synthesis.
type Options struct {
	// Type is the review type: diff, artifacts or freeform.
	Type string
	// Anchor checks grounding against the material.
	Anchor Anchor
	// Seed fixes the randomized order of the triage lead's inputs.
	Seed int64
	// Executor and Model run the triage lead. Without an executor, the
	// synthesis is mechanical: clusters merge by location and disagreements
	// are settled by evidence.
	Executor engine.Executor
	Model    string
	// MaxPromptTokens bounds the triage lead's prompt (0: no bound). When
	// the clusters do not fit, they are put to the lead in batches, one
	// call each.
	MaxPromptTokens int
	// Decide, when set, is asked to decide each trade-off (interactive
	// runs); it returns nil to fall back to the priority hierarchy.
	Decide func(ctx context.Context, d *Dispute, item *Item) (*Decision, error)
	// Nonce is the run's nonce, which fences the findings in the triage
	// lead's prompt. A caller without a run leaves it empty: the findings
	// then follow the same statement that they are data, unfenced, each
	// of their texts flattened to one line after a label of the prompt's.
	Nonce string
}

// Outcome of Synthesize: the parts of a Result that synthesis fills.
type Synthesis struct {
	Items        []Item
	Observations []Item
	TradeOffs    []Dispute
	Dissent      []Dispute
	Trace        []TraceEntry
	Narrative    string
	InputOrder   []string
	Rejected     []string
	// TriageError is set when the triage lead failed and the synthesis fell
	// back to mechanical rules.
	TriageError error
}

// Synthesize clusters, grounds, weighs and merges the findings of all
// reports, asking the triage lead to classify overlapping findings, and
// enforcing that it only references findings specialists made.
func Synthesize(ctx context.Context, reports []finding.Report, o Options) (*Synthesis, error) {
	var all []*scored
	for _, r := range reports {
		for _, f := range r.Findings {
			s := &scored{Finding: f, words: lexical.Words(f.Claim)}
			s.tier = Tier(&s.Finding, o.Anchor, o.Type)
			s.score = f.Confidence.Weight() * tierWeight(s.tier)
			all = append(all, s)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	clusters := clusterFindings(all)
	for i, c := range clusters {
		c.id = fmt.Sprintf("C%d", i+1)
	}
	out := &Synthesis{}
	if len(all) == 0 {
		return out, nil
	}
	presented, order := presentOrder(clusters, o.Seed)
	out.InputOrder = order

	var answer triageAnswer
	if o.Executor != nil {
		answer, out.TriageError = askTriage(ctx, o, presented)
	}

	byCluster := map[string]*cluster{}
	known := map[string]*scored{}
	clusterOf := map[string]string{} // finding id -> cluster id
	for _, c := range clusters {
		byCluster[c.id] = c
		for _, m := range c.members {
			known[m.ID] = m
			clusterOf[m.ID] = c.id
		}
	}
	decided := map[string]bool{}
	type verdict struct {
		rel       string
		claim     string
		reason    string
		axis      string
		positions map[string]position
	}
	verdicts := map[string]verdict{}
	for _, a := range answer.Clusters {
		c, ok := byCluster[a.ClusterID]
		if !ok {
			out.Rejected = append(out.Rejected, fmt.Sprintf("triage item for %q dropped: there is no such cluster", a.ClusterID))
			continue
		}
		if decided[c.id] {
			out.Rejected = append(out.Rejected, fmt.Sprintf("second triage item for cluster %s dropped", c.id))
			continue
		}
		member := map[string]bool{}
		for _, m := range c.members {
			member[m.ID] = true
		}
		valid := 0
		var elsewhere []string // ids of findings in other clusters
		for _, id := range a.FindingIDs {
			switch other, ok := clusterOf[id]; {
			case member[id]:
				valid++
			case ok:
				elsewhere = append(elsewhere, id+" of "+other)
				out.Rejected = append(out.Rejected, fmt.Sprintf("cluster %s: reference to %q dropped: that finding belongs to cluster %s", c.id, id, other))
			default:
				out.Rejected = append(out.Rejected, fmt.Sprintf("cluster %s: reference to %q dropped: no specialist made such a finding", c.id, id))
			}
		}
		if valid == 0 {
			if len(elsewhere) > 0 {
				out.Rejected = append(out.Rejected, fmt.Sprintf("triage item for cluster %s dropped: it cites findings of another cluster (%s) and none of its own", c.id, strings.Join(elsewhere, ", ")))
			} else {
				out.Rejected = append(out.Rejected, fmt.Sprintf("triage item for cluster %s dropped: it cites no finding any specialist made", c.id))
			}
			continue
		}
		v := verdict{rel: a.Relation, reason: flat(a.Reason), axis: flat(a.DecisionAxis), positions: map[string]position{}}
		if claim := flat(a.MergedClaim); claim != "" {
			if grounded(claim, c.members) {
				v.claim = claim
			} else {
				out.Rejected = append(out.Rejected, fmt.Sprintf("cluster %s: merged claim dropped because it states what no specialist said: %q", c.id, claim))
			}
		}
		for _, p := range a.Positions {
			if member[p.FindingID] {
				v.positions[p.FindingID] = position{summary: flat(p.Summary), objective: p.Objective}
			}
		}
		switch v.rel {
		case RelAgreement, RelFactual, RelTradeOff, RelDistinct:
		default:
			out.Rejected = append(out.Rejected, fmt.Sprintf("cluster %s: unknown relation %q; treated as unclassified", c.id, v.rel))
			continue
		}
		decided[c.id] = true
		verdicts[c.id] = v
	}

	narrative, rej := checkNarrative(answer.Narrative, known)
	out.Narrative = narrative
	out.Rejected = append(out.Rejected, rej...)

	var items []built
	for _, c := range clusters {
		v, ok := verdicts[c.id]
		if len(c.members) == 1 {
			items = append(items, itemFrom([]*scored{c.members[0]}, "", "single source"))
			continue
		}
		if !ok {
			v = verdict{rel: mechanicalRelation(c)}
			v.reason = "not classified by the triage lead; merged by location"
		}
		switch v.rel {
		case RelDistinct:
			for _, m := range c.members {
				items = append(items, itemFrom([]*scored{m}, "", "kept apart from "+c.id+": distinct problems"))
			}
		case RelAgreement:
			it := itemFrom(c.members, v.claim, "merged: the sources agree")
			if d := lensDissent(c); d != nil {
				it.Dispute = d
			}
			items = append(items, it)
		case RelFactual:
			it := itemFrom(c.members, "", "")
			d, winner := factualDispute(c, v.positions, v.reason)
			it.Dispute = d
			if d.Unresolved {
				it.Severity = mostSevere(c.members)
				it.trace = "factual dispute unresolved: kept at the most severe position"
			} else {
				it.Claim, it.Severity, it.Confidence, it.Lead = winner.Claim, winner.Severity, winner.Confidence, winner.ID
				it.trace = "factual dispute settled by evidence in favour of " + winner.ID
			}
			items = append(items, it)
		case RelTradeOff:
			it := itemFrom(c.members, "", "")
			d, lensConflictNote := tradeOff(c, v.positions, v.axis, v.reason)
			it.Dispute = d
			if o.Decide != nil {
				dec, err := o.Decide(ctx, d, &it.Item)
				if err != nil {
					return nil, err
				}
				it.Decision = dec
			}
			if it.Decision == nil {
				it.Decision = &Decision{By: "priority hierarchy", Choice: d.Recommendation,
					Reason: "no one was asked, so the quality that ranks higher in " + strings.Join(PriorityHierarchy, " > ") + " wins", Flagged: true}
			}
			d.Resolution = "decided by " + it.Decision.By + ": " + it.Decision.Choice
			if lensConflictNote != "" {
				d.Resolution += "; " + lensConflictNote
			}
			it.trace = "trade-off " + d.Resolution
			items = append(items, it)
		}
	}

	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.Severity.Rank() != b.Severity.Rank() {
			return a.Severity.Rank() > b.Severity.Rank()
		}
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Sources[0].ID < b.Sources[0].ID
	})
	var sN, oN int
	for _, b := range items {
		it := b.Item
		if it.Grounding == Contextual {
			oN++
			it.ID = fmt.Sprintf("O%d", oN)
			out.Observations = append(out.Observations, it)
		} else {
			sN++
			it.ID = fmt.Sprintf("S%d", sN)
			out.Items = append(out.Items, it)
		}
		if it.Dispute != nil {
			it.Dispute.ID = "D-" + it.ID
			out.Dissent = append(out.Dissent, *it.Dispute)
			if it.Dispute.Kind == TradeOff {
				out.TradeOffs = append(out.TradeOffs, *it.Dispute)
			}
		}
		out.Trace = append(out.Trace, TraceEntry{ItemID: it.ID, Sources: it.SourceIDs(), Grounding: it.Grounding, Resolution: b.trace})
	}
	return out, nil
}

type position struct{ summary, objective string }

// built is an item with how it came about, for the trace.
type built struct {
	Item
	trace string
}

// itemFrom merges members: the best-scoring source supplies the claim,
// severity and confidence unless the lead's grounded merged claim is given.
func itemFrom(ms []*scored, claim, trace string) built {
	c := &cluster{members: ms}
	b := c.best()
	it := built{Item: Item{Claim: b.Claim, Severity: b.Severity, Confidence: b.Confidence, Grounding: b.tier, Score: b.score,
		Location: b.Location, Category: b.Category, Lead: b.ID}, trace: trace}
	if claim != "" {
		it.Claim = claim
	}
	for _, m := range ms {
		if tierRank(m.tier) > tierRank(it.Grounding) {
			it.Grounding = m.tier
		}
		it.Sources = append(it.Sources, m.Finding)
	}
	sort.Slice(it.Sources, func(i, j int) bool { return it.Sources[i].ID < it.Sources[j].ID })
	if it.Grounding == Inferential {
		it.Chain = b.Warrant
	}
	return it
}

func tierRank(g Grounding) int {
	switch g {
	case Direct:
		return 3
	case Inferential:
		return 2
	}
	return 1
}

func mostSevere(ms []*scored) finding.Severity {
	s := ms[0].Severity
	for _, m := range ms[1:] {
		if m.Severity.Rank() > s.Rank() {
			s = m.Severity
		}
	}
	return s
}

// mechanicalRelation classifies a cluster the lead left out: agreement when
// the severities are close, otherwise a factual dispute settled by evidence.
func mechanicalRelation(c *cluster) string {
	lo, hi := 3, 0
	for _, m := range c.members {
		lo, hi = min(lo, m.Severity.Rank()), max(hi, m.Severity.Rank())
	}
	if hi-lo >= 2 {
		return RelFactual
	}
	return RelAgreement
}

func positionsOf(c *cluster, pos map[string]position) []Position {
	var out []Position
	for _, m := range c.members {
		sum := m.Claim
		if p, ok := pos[m.ID]; ok && p.summary != "" {
			sum = p.summary
		}
		out = append(out, Position{Source: m.Source(), FindingID: m.ID, Summary: sum})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FindingID < out[j].FindingID })
	return out
}

// lensConflict finds two findings in a cluster by one specialist under
// different lenses that are on different sides: they rate the problem at
// different severities, or, in a trade-off, the triage lead gave their
// positions different quality objectives. It returns the first such pair in
// member order, or nils. Two lenses that merely both appear, agreeing, are
// no conflict.
func lensConflict(c *cluster, pos map[string]position) (*scored, *scored) {
	for i, a := range c.members {
		for _, b := range c.members[i+1:] {
			if !otherLens(a, b) {
				continue
			}
			if a.Severity != b.Severity {
				return a, b
			}
			oa, ob := pos[a.ID].objective, pos[b.ID].objective
			if oa != "" && ob != "" && oa != "none" && ob != "none" && !strings.EqualFold(oa, ob) {
				return a, b
			}
		}
	}
	return nil, nil
}

// lensNote describes a conflict between two lenses of one specialist, with
// each side's perspective, for a dispute's resolution.
func lensNote(a, b *scored, pos map[string]position) string {
	side := func(m *scored) string {
		s := fmt.Sprintf("%s rates it %s", m.Source(), m.Severity)
		if o := pos[m.ID].objective; o != "" && o != "none" {
			s += " for " + o
		}
		return s
	}
	return fmt.Sprintf("high-signal perspective disagreement within %s: %s, %s", a.Specialist, side(a), side(b))
}

// lensDissent records an agreement cluster in which two lenses of one
// specialist still rate the problem differently.
func lensDissent(c *cluster) *Dispute {
	a, b := lensConflict(c, nil)
	if a == nil {
		return nil
	}
	d := &Dispute{Kind: Factual, Positions: positionsOf(c, nil), HighSignal: true,
		Resolution: fmt.Sprintf("merged; the perspectives disagree on severity (%s says %s, %s says %s), the better-evidenced rating is used", a.Source(), a.Severity, b.Source(), b.Severity)}
	for _, m := range c.members {
		d.FindingIDs = append(d.FindingIDs, m.ID)
	}
	sort.Strings(d.FindingIDs)
	return d
}

// factualDispute settles a factual dispute by evidence: the position with the
// highest score wins if it is clearly ahead; otherwise it stays unresolved.
func factualDispute(c *cluster, pos map[string]position, reason string) (*Dispute, *scored) {
	d := &Dispute{Kind: Factual, Positions: positionsOf(c, pos)}
	la, lb := lensConflict(c, nil)
	d.HighSignal = la != nil
	for _, m := range c.members {
		d.FindingIDs = append(d.FindingIDs, m.ID)
	}
	sort.Strings(d.FindingIDs)
	ms := append([]*scored(nil), c.members...)
	sort.Slice(ms, func(i, j int) bool { return outranks(ms[i], ms[j]) })
	if ms[0].score-ms[1].score >= 0.15 {
		d.Resolution = fmt.Sprintf("settled by evidence: %s (%s, %s grounding) outweighs the other position(s)", ms[0].ID, ms[0].Confidence, ms[0].tier)
	} else {
		d.Unresolved = true
		d.Resolution = "unresolved: the positions have comparable evidence; both are kept"
	}
	if la != nil {
		d.Resolution += "; " + lensNote(la, lb, pos)
	}
	if reason != "" {
		d.Resolution += ". Triage lead: " + reason
	}
	return d, ms[0]
}

// tradeOff builds a trade-off and recommends by the priority hierarchy. note
// describes a disagreement between two lenses of one specialist, if any.
func tradeOff(c *cluster, pos map[string]position, axis, reason string) (d *Dispute, note string) {
	d = &Dispute{Kind: TradeOff, Positions: positionsOf(c, pos), Axis: axis}
	if la, lb := lensConflict(c, pos); la != nil {
		d.HighSignal = true
		note = lensNote(la, lb, pos)
	}
	best, bestRank := "", len(PriorityHierarchy)+1
	for _, p := range d.Positions {
		d.FindingIDs = append(d.FindingIDs, p.FindingID)
		obj := pos[p.FindingID].objective
		if obj == "" || obj == "none" {
			obj = Objective(p.Source)
		}
		d.Options = append(d.Options, fmt.Sprintf("%s (%s, from %s)", p.Summary, obj, p.FindingID))
		if r := Rank(obj); r < bestRank {
			best, bestRank = fmt.Sprintf("%s (%s)", p.Summary, obj), r
		}
	}
	if d.Axis == "" {
		d.Axis = reason
	}
	d.Recommendation = best
	return d, note
}

// Rank is an objective's place in the priority hierarchy (0 ranks highest).
func Rank(objective string) int {
	for i, q := range PriorityHierarchy {
		if strings.EqualFold(q, objective) {
			return i
		}
	}
	return len(PriorityHierarchy)
}

// Objective maps a source (a built-in specialist, with or without its lens)
// to the quality of the priority hierarchy it protects, for positions whose
// objective nobody named.
func Objective(source string) string {
	switch strings.SplitN(source, "/", 2)[0] {
	case "correctness", "assumptions":
		return "Correctness"
	case "security":
		return "Security"
	case "edge-cases", "release-manager", "testing":
		return "Reliability"
	case "performance":
		return "Performance"
	case "architecture", "maintainability":
		return "Maintainability"
	}
	return "Developer Experience"
}

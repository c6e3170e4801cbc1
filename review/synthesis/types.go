// Package synthesis turns many specialists' findings into one result, doing
// in code what code can guarantee: clustering by location and text, merging
// with every source attributed, grounding tiers checked against the diff,
// confidence-weighted aggregation, and enforcing that the triage lead (the
// one LLM step) only classifies and narrates what specialists found.
package synthesis

import (
	"github.com/sotlabs/sot/review/finding"
)

// Grounding is how a finding is anchored in the material under review.
type Grounding string

// Grounding tiers.
const (
	Direct      Grounding = "direct"      // cites changed lines
	Inferential Grounding = "inferential" // anchored in the diff, needs reasoning
	Contextual  Grounding = "contextual"  // beyond the diff: an observation
)

// Item is one synthesized finding: one or more specialist findings merged,
// every source kept.
type Item struct {
	// ID is "S1", "S2", ... in the order the synthesis lists them.
	ID         string             `json:"id"`
	Claim      string             `json:"finding"`
	Severity   finding.Severity   `json:"severity"`
	Confidence finding.Confidence `json:"confidence"`
	Grounding  Grounding          `json:"grounding"`
	// Score weighs confidence by evidence quality; it orders items and
	// settles disputes, never the number of specialists who agree.
	Score    float64          `json:"score"`
	Location finding.Location `json:"location"`
	Category string           `json:"category,omitempty"`
	// Sources are the specialist findings merged into this item.
	Sources []finding.Finding `json:"sources"`
	// Lead is the ID of the source the item follows: the best-scoring one
	// (the winner of a dispute settled by evidence), whose severity,
	// confidence and location the item carries, and whose claim it states
	// unless the triage lead merged the wording. Empty in results written
	// before the field existed; LeadSource then falls back to the first
	// source.
	Lead string `json:"lead_finding,omitempty"`
	// Chain is the reasoning shown for an inferential item.
	Chain string `json:"chain,omitempty"`
	// Dispute is set when the sources disagreed.
	Dispute *Dispute `json:"dispute,omitempty"`
	// Decision records how a trade-off on this item was decided.
	Decision *Decision `json:"decision,omitempty"`
	// Outcome is the user's resolution (accepted, dismissed, deferred).
	Outcome *Outcome `json:"outcome,omitempty"`

	// Anchor is the text of the lines the item points at, by which a
	// later review finds them again wherever they moved; Fingerprint
	// identifies the finding across reviews (its file, those lines and
	// its claim). Both are empty for an item that points at no lines.
	Anchor      *LineAnchor `json:"anchor,omitempty"`
	Fingerprint string      `json:"fingerprint,omitempty"`
	// History says, in a review of a change reviewed before (--since),
	// whether the item is new, carried over from an earlier review (whose
	// run From names), or resolved since: its lines were changed.
	History string `json:"history,omitempty"`
	From    string `json:"carried_from,omitempty"`
}

// The histories of an item.
const (
	HistoryNew      = "new"
	HistoryCarried  = "carried over"
	HistoryResolved = "resolved"
)

// LineAnchor is the text of an item's lines: the hash of their
// normalised text and how many they are.
type LineAnchor struct {
	Hash  string `json:"hash"`
	Lines int    `json:"lines"`
}

// SourceIDs lists the IDs of the merged findings.
func (it *Item) SourceIDs() []string {
	ids := make([]string, len(it.Sources))
	for i, s := range it.Sources {
		ids[i] = s.ID
	}
	return ids
}

// LeadSource is the source named by Lead, or the first source when Lead is
// empty or names none of them; nil for an item without sources.
func (it *Item) LeadSource() *finding.Finding {
	for i := range it.Sources {
		if it.Lead != "" && it.Sources[i].ID == it.Lead {
			return &it.Sources[i]
		}
	}
	if len(it.Sources) > 0 {
		return &it.Sources[0]
	}
	return nil
}

// DisputeKind says what a disagreement is.
type DisputeKind string

// Dispute kinds.
const (
	// Factual: one side is wrong; evidence and rebuttal conditions settle it.
	Factual DisputeKind = "factual"
	// TradeOff: different quality objectives, both valid.
	TradeOff DisputeKind = "trade-off"
)

// Position is one side of a dispute.
type Position struct {
	Source    string `json:"source"` // specialist or specialist/lens
	FindingID string `json:"finding_id"`
	Summary   string `json:"summary"`
}

// Dispute is a disagreement between findings.
type Dispute struct {
	ID         string      `json:"id"`
	Kind       DisputeKind `json:"kind"`
	FindingIDs []string    `json:"finding_ids"`
	Positions  []Position  `json:"positions"`
	// Axis is the decision axis of a trade-off ("latency vs. consistency").
	Axis string `json:"decision_axis,omitempty"`
	// Options are the choices a trade-off offers.
	Options []string `json:"options,omitempty"`
	// Recommendation follows the priority hierarchy.
	Recommendation string `json:"recommendation,omitempty"`
	// Resolution says how it was settled, or that it is unresolved.
	Resolution string `json:"resolution"`
	Unresolved bool   `json:"unresolved,omitempty"`
	// HighSignal marks a disagreement between two lenses of one specialist.
	HighSignal bool `json:"high_signal_perspective_disagreement,omitempty"`
}

// Decision is how a trade-off was decided.
type Decision struct {
	// By is "priority hierarchy" (non-interactive), "user", or "evidence".
	By     string `json:"by"`
	Choice string `json:"choice"`
	Reason string `json:"reason"`
	// Flagged marks decisions made without a person, for review.
	Flagged bool `json:"flagged,omitempty"`
}

// Outcome is a user's resolution of a finding.
type Outcome struct {
	Status string `json:"status"` // accepted, dismissed, deferred
	Reason string `json:"reason,omitempty"`
}

// Missing is a part of the review that did not complete.
type Missing struct {
	Specialist string `json:"specialist"`
	Lens       string `json:"perspective,omitempty"`
	Chunk      int    `json:"chunk,omitempty"`
	// Files are the chunk's files when the material was split, so a reader
	// knows what this part would have looked at.
	Files []string `json:"files,omitempty"`
	Error string   `json:"error"`
	// Budget: the part was not run because a budget was reached.
	Budget bool `json:"budget,omitempty"`
}

// TraceEntry explains one item: where it came from and how conflicts went.
type TraceEntry struct {
	ItemID     string    `json:"item"`
	Sources    []string  `json:"sources"`
	Grounding  Grounding `json:"grounding"`
	Resolution string    `json:"resolution,omitempty"`
}

// PriorityHierarchy settles trade-offs when nobody is asked: the earlier
// quality wins.
var PriorityHierarchy = []string{"Correctness", "Security", "Reliability", "Performance", "Maintainability", "Developer Experience"}

package synthesis

import (
	"fmt"
	"strings"
)

// Result is everything a review produced: what REVIEW-SYNTHESIS.md, the JSON,
// SARIF and rdjson outputs and the terminal summary are rendered from.
type Result struct {
	RunID string `json:"run_id"`
	// ReviewMode is how the review was done: ReviewSociety (also when
	// empty), ReviewSingleModel or ReviewMultiModel. Mode is the interaction
	// mode within it.
	ReviewMode  string `json:"review_mode,omitempty"`
	Mode        string `json:"mode"` // parallel or debate
	Type        string `json:"type"` // diff, artifacts or freeform
	Coordinates string `json:"coordinates"`

	Specialists []string          `json:"specialists"`
	Models      map[string]string `json:"models"` // specialist -> model
	Context     string            `json:"context"`
	// SelectionRationale explains an adaptive:N pick.
	SelectionRationale string `json:"selection_rationale,omitempty"`

	Perspectives         []string            `json:"perspectives"`
	PerspectiveCap       int                 `json:"perspective_cap"`
	PerspectiveMode      string              `json:"perspective_mode"` // auto, guided or none
	PerspectiveRationale string              `json:"perspective_rationale,omitempty"`
	PerspectiveMap       map[string][]string `json:"perspective_map,omitempty"` // lens -> specialists
	PerspectivesSkipped  []string            `json:"perspectives_skipped,omitempty"`

	// Since names the earlier review a re-review (--since) continues;
	// Resolved are that review's findings whose lines changed since, and
	// DismissedEarlier the findings the user dismissed before, kept out of
	// Items and Observations.
	Since            *Since `json:"since,omitempty"`
	Resolved         []Item `json:"resolved_since,omitempty"`
	DismissedEarlier []Item `json:"dismissed_earlier,omitempty"`

	// Items are the actionable findings; Observations the contextual ones.
	Items        []Item       `json:"items"`
	Observations []Item       `json:"observations"`
	TradeOffs    []Dispute    `json:"trade_offs"`
	Dissent      []Dispute    `json:"dissent"`
	Trace        []TraceEntry `json:"trace"`
	// Narrative is the triage lead's summary, checked against the findings.
	Narrative string `json:"narrative,omitempty"`
	// Seed fixed the randomized order in which specialists' inputs were
	// presented to the triage lead; InputOrder is that order.
	Seed       int64    `json:"seed"`
	InputOrder []string `json:"input_order"`
	// Rejected lists triage-lead output the program refused, and why.
	Rejected []string `json:"rejected,omitempty"`

	Rounds  int      `json:"rounds,omitempty"`
	Threads []Thread `json:"threads,omitempty"`

	Reviewed []string `json:"reviewed_files,omitempty"`
	// FileLines is the number of lines of reviewed files, by path as the
	// material and the findings spell it: the new side of a changed file,
	// the old side of a deleted one. A file whose length is not known is
	// not listed. Outputs that point at lines clamp them to it.
	FileLines map[string]int `json:"file_lines,omitempty"`
	Skipped   []SkippedFile  `json:"skipped_files,omitempty"`
	Chunks    int            `json:"chunks,omitempty"`
	Missing   []Missing      `json:"missing,omitempty"`
	Notes     []string       `json:"notes,omitempty"`
	Usage     Usage          `json:"usage"`
}

// Review modes of Result.ReviewMode.
const (
	ReviewSociety     = "society-of-thought" // specialists and lenses, then the triage lead
	ReviewSingleModel = "single-model"       // one general review by one model
	ReviewMultiModel  = "multi-model"        // one general review per model, then a synthesis
)

// LineCount is the number of lines of a reviewed file (see FileLines),
// found under the path as given or in its plain form (no "./", "a/" or
// "b/" prefix, forward slashes); 0 when it is not known.
func (r *Result) LineCount(path string) int {
	if n, ok := r.FileLines[path]; ok {
		return n
	}
	p := strings.ReplaceAll(strings.TrimSpace(path), `\`, "/")
	for strings.HasPrefix(p, "./") {
		p = p[2:]
	}
	if n, ok := r.FileLines[p]; ok {
		return n
	}
	for _, pre := range []string{"a/", "b/"} {
		if q, ok := strings.CutPrefix(p, pre); ok {
			if n, ok := r.FileLines[q]; ok {
				return n
			}
		}
	}
	return 0
}

// Partial reports whether some part of the review is missing.
func (r *Result) Partial() bool { return len(r.Missing) > 0 }

// SkippedFile is a changed file that was not reviewed, and why.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Usage is what the run cost.
type Usage struct {
	// Calls, tokens and cost are the whole run's: the calls a provider was
	// paid for, those made before a resume included (replayed from the
	// journal, not paid again).
	Calls             int     `json:"calls"`
	InputTokens       int     `json:"input_tokens"`
	CachedInputTokens int     `json:"cached_input_tokens"`
	OutputTokens      int     `json:"output_tokens"`
	CostUSD           float64 `json:"cost_usd"`
	WallMS            int64   `json:"wall_ms"`
	// Replayed calls came from the run journal; CacheHits from the response cache.
	Replayed  int `json:"replayed_calls,omitempty"`
	CacheHits int `json:"cache_hits,omitempty"`
	// NewCalls and NewCostUSD are what the latest invocation paid for: the
	// calls it sent to a provider.
	NewCalls   int     `json:"new_calls"`
	NewCostUSD float64 `json:"new_cost_usd"`
}

// Thread is a debate thread (debate mode only).
type Thread struct {
	ID         string        `json:"id"`
	FindingID  string        `json:"finding_id"`
	Claim      string        `json:"finding"`
	Source     string        `json:"source"`
	State      string        `json:"state"`
	Rounds     []ThreadRound `json:"rounds"`
	Resolution string        `json:"resolution,omitempty"`
}

// ThreadRound is what happened to a thread in one exchange of the debate:
// a global round, in which every specialist was called, or a continuation,
// in which only the thread's participants were. Responses hold only the
// positions taken in that exchange.
type ThreadRound struct {
	// Round is the global round (1 to 3); 0 for a continuation.
	Round int `json:"round"`
	// Continuation numbers a targeted exchange after the global rounds
	// (1, 2); 0 for a global round.
	Continuation int `json:"continuation,omitempty"`
	// Called lists the participants (specialist or specialist/lens) called
	// on the thread in a continuation.
	Called    []string   `json:"called,omitempty"`
	State     string     `json:"state"`
	Responses []Response `json:"responses"`
}

// Name is how the exchange is called in reports: "Round 2" or
// "Continuation 1".
func (r ThreadRound) Name() string {
	if r.Continuation > 0 {
		return fmt.Sprintf("Continuation %d", r.Continuation)
	}
	return fmt.Sprintf("Round %d", r.Round)
}

// Response is one participant's position on a thread in a round.
type Response struct {
	Source   string `json:"source"`
	Stance   string `json:"stance"`
	Argument string `json:"argument"`
}

// Since is the earlier review a re-review continues: its run (empty when
// --since named a commit no review saw) and the commit the new diff
// starts from.
type Since struct {
	RunID  string `json:"run_id,omitempty"`
	Commit string `json:"commit"`
}

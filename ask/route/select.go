package route

import (
	"math"
	"sort"
	"strings"
)

// The default diversity fields: a Candidate's Fields keys for the source's
// type (transcript, report, documentation, ...), its meeting type (planning,
// review, standup, ...) and its quarter ("Q1 2026").
const (
	FieldSourceType  = "source_type"
	FieldMeetingType = "meeting_type"
	FieldQuarter     = "quarter"
	// FieldMonth is not a diversity field by default; it groups sources
	// by month ("January 2026") for temporal groups by month.
	FieldMonth = "month"
)

// Defaults of diversity-aware selection.
const (
	// DefaultDiversityWeight balances relevance (1 − weight) against
	// diversity (weight).
	DefaultDiversityWeight = 0.3
	// DefaultCandidateMultiple is how many times the wanted count of
	// sources retrieval hands to Select as candidates (the seed's "2x").
	DefaultCandidateMultiple = 2
)

// DiversityOptions are the settings of diversity-aware selection. The zero
// value selects by relevance alone from every candidate; DefaultDiversity
// gives the seed's defaults.
type DiversityOptions struct {
	// Weight in [0, 1]: a candidate's score is its normalized relevance ×
	// (1 − Weight) plus Weight/len(Fields) for each field whose value is
	// new. Values outside [0, 1] are clamped.
	Weight float64 `json:"weight"`
	// Fields are the Candidate.Fields keys to diversify on.
	Fields []string `json:"fields"`
	// Multiple bounds the candidates: only the Multiple × want most
	// relevant are considered. 0 or less considers them all.
	Multiple int `json:"multiple"`
}

// DefaultDiversity returns the seed's defaults: weight 0.3 over source type,
// meeting type and quarter, from twice the wanted count of candidates.
func DefaultDiversity() DiversityOptions {
	return DiversityOptions{
		Weight:   DefaultDiversityWeight,
		Fields:   []string{FieldSourceType, FieldMeetingType, FieldQuarter},
		Multiple: DefaultCandidateMultiple,
	}
}

// Pool is how many candidates retrieval should hand to Select for want
// sources: Multiple × want, or want when Multiple is 1 or less.
func (o DiversityOptions) Pool(want int) int {
	if want <= 0 {
		return 0
	}
	if o.Multiple <= 1 {
		return want
	}
	return o.Multiple * want
}

// Choice is one selected source with the numbers that chose it.
type Choice struct {
	Candidate
	// Normalized is Relevance over the best relevance among the candidates
	// considered, in [0, 1].
	Normalized float64 `json:"normalized"`
	// Bonus is the diversity bonus the source had when it was chosen.
	Bonus float64 `json:"bonus"`
	// Score is Normalized × (1 − weight) + Bonus, by which it was chosen.
	Score float64 `json:"score"`
	// New lists the diversity fields whose value was new when the source
	// was chosen, in the order of DiversityOptions.Fields.
	New []string `json:"new,omitempty"`
}

// Select chooses up to want sources from cands, greedily: each round takes
// the remaining candidate with the highest score, where the score is the
// candidate's relevance normalized by the best relevance considered, times
// (1 − weight), plus weight/len(fields) for every diversity field whose
// value no chosen source has yet. Ties go to the higher relevance, then to
// the smaller ID, so the same input always gives the same choice.
//
// Candidates with the same ID count once (the more relevant). When
// opts.Multiple is positive only the Pool(want) most relevant are
// considered. Field values are compared
// without regard to case or surrounding space; an empty value is never new.
// The choices come in the order they were chosen, which is the order Assign
// should see them in.
func Select(cands []Candidate, want int, opts DiversityOptions) []Choice {
	if want <= 0 || len(cands) == 0 {
		return nil
	}
	pool := rankByRelevance(cands)
	if opts.Multiple > 0 && len(pool) > opts.Pool(want) {
		pool = pool[:opts.Pool(want)]
	}
	w := opts.Weight
	if math.IsNaN(w) || w < 0 {
		w = 0
	}
	if w > 1 {
		w = 1
	}
	fields := uniqueNonEmpty(opts.Fields)
	per := 0.0
	if len(fields) > 0 {
		per = w / float64(len(fields))
	}
	best := relevance(pool[0])
	seen := make(map[string]map[string]bool, len(fields))
	for _, f := range fields {
		seen[f] = map[string]bool{}
	}

	var out []Choice
	remaining := pool
	for len(out) < want && len(remaining) > 0 {
		bi := -1
		var bc Choice
		for i, c := range remaining {
			ch := Choice{Candidate: c}
			if best > 0 {
				ch.Normalized = relevance(c) / best
			}
			for _, f := range fields {
				if v := fieldValue(c, f); v != "" && !seen[f][v] {
					ch.New = append(ch.New, f)
				}
			}
			ch.Bonus = float64(len(ch.New)) * per
			ch.Score = ch.Normalized*(1-w) + ch.Bonus
			if bi < 0 || better(ch, bc) {
				bi, bc = i, ch
			}
		}
		out = append(out, bc)
		for _, f := range fields {
			if v := fieldValue(bc.Candidate, f); v != "" {
				seen[f][v] = true
			}
		}
		remaining = append(remaining[:bi:bi], remaining[bi+1:]...)
	}
	return out
}

// Sources returns the candidates of choices, in order, for Assign.
func Sources(choices []Choice) []Candidate {
	out := make([]Candidate, len(choices))
	for i, c := range choices {
		out[i] = c.Candidate
	}
	return out
}

// better orders choices: higher score, then higher relevance, then smaller ID.
func better(a, b Choice) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if ra, rb := relevance(a.Candidate), relevance(b.Candidate); ra != rb {
		return ra > rb
	}
	return a.ID < b.ID
}

// rankByRelevance returns a new slice of cands with one candidate per ID
// (the more relevant), most relevant first, ties by ID.
func rankByRelevance(cands []Candidate) []Candidate {
	byID := make(map[string]int, len(cands))
	out := make([]Candidate, 0, len(cands))
	for _, c := range cands {
		if i, ok := byID[c.ID]; ok {
			if relevance(c) > relevance(out[i]) {
				out[i] = c
			}
			continue
		}
		byID[c.ID] = len(out)
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := relevance(out[i]), relevance(out[j])
		if ri != rj {
			return ri > rj
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// relevance is a candidate's relevance with NaN and negative values as 0
// and +Inf as the largest finite value, so that ratios stay numbers.
func relevance(c Candidate) float64 {
	switch {
	case math.IsNaN(c.Relevance) || c.Relevance < 0:
		return 0
	case math.IsInf(c.Relevance, 1):
		return math.MaxFloat64
	}
	return c.Relevance
}

func fieldValue(c Candidate, field string) string {
	return strings.ToLower(strings.TrimSpace(c.Fields[field]))
}

func uniqueNonEmpty(list []string) []string {
	var out []string
	for _, s := range list {
		if s != "" && !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

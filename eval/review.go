package eval

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
)

// Review is what a review.json (sot review --format json) says that
// scoring needs: the actionable findings (observations, which lie beyond
// the change, are not scored) and what the review spent.
type Review struct {
	Findings []Finding
	CostUSD  float64
	Tokens   int
	WallMS   int64
	Partial  bool
}

// ReadReview reads a review.json.
func ReadReview(data []byte) (Review, error) {
	var doc struct {
		Items []struct {
			Claim    string `json:"finding"`
			Category string `json:"category"`
			Location struct {
				File  string `json:"file"`
				Start int    `json:"start_line"`
				End   int    `json:"end_line"`
			} `json:"location"`
			Sources []struct {
				Specialist string `json:"specialist"`
			} `json:"sources"`
		} `json:"items"`
		Summary struct {
			Partial bool `json:"partial"`
		} `json:"summary"`
		Missing []json.RawMessage `json:"missing"`
		Usage   struct {
			InputTokens  int     `json:"input_tokens"`
			OutputTokens int     `json:"output_tokens"`
			CostUSD      float64 `json:"cost_usd"`
			WallMS       int64   `json:"wall_ms"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return Review{}, fmt.Errorf("review.json: %w", err)
	}
	r := Review{CostUSD: doc.Usage.CostUSD, Tokens: doc.Usage.InputTokens + doc.Usage.OutputTokens, WallMS: doc.Usage.WallMS, Partial: doc.Summary.Partial || len(doc.Missing) > 0}
	for _, it := range doc.Items {
		f := Finding{File: it.Location.File, Start: it.Location.Start, End: it.Location.End, Category: it.Category, Claim: it.Claim}
		for _, s := range it.Sources {
			if s.Specialist != "" && !slices.Contains(f.Sources, s.Specialist) {
				f.Sources = append(f.Sources, s.Specialist)
			}
		}
		r.Findings = append(r.Findings, f)
	}
	return r, nil
}

// Score matches a review of a case and says what it came to.
func Score(c Case, r Review) (Outcome, Match) {
	m := MatchFindings(c, r.Findings)
	return Outcome{Case: c.ID, Clean: c.Kind == KindClean, Defects: len(c.Defects), Found: m.Found(), True: m.True(), False: m.False(),
		CostUSD: r.CostUSD, Tokens: r.Tokens, WallMS: r.WallMS, Partial: r.Partial}, m
}

// BySpecialist scores each specialist of a review on its own: its
// findings are those it took part in.
func BySpecialist(c Case, r Review) map[string]Outcome {
	own := map[string][]Finding{}
	for _, f := range r.Findings {
		for _, s := range f.Sources {
			own[s] = append(own[s], f)
		}
	}
	out := map[string]Outcome{}
	for s, fs := range own {
		o, _ := Score(c, Review{Findings: fs})
		out[s] = o
	}
	return out
}

// Vote combines k samples of one review (self-consistency): a finding
// stands when more than half the samples (majority) or any sample (union)
// reported one at the same file and lines. Its cost is the samples'.
func Vote(samples []Review, majority bool) Review {
	var out Review
	type group struct {
		f     Finding
		votes int
	}
	var groups []*group
	for _, s := range samples {
		out.CostUSD += s.CostUSD
		out.Tokens += s.Tokens
		out.WallMS = max(out.WallMS, s.WallMS)
		out.Partial = out.Partial || s.Partial
		seen := map[*group]bool{}
		for _, f := range s.Findings {
			var g *group
			for _, h := range groups {
				if h.f.File == f.File && overlaps(h.f, f) {
					g = h
					break
				}
			}
			if g == nil {
				g = &group{f: f}
				groups = append(groups, g)
			}
			if !seen[g] {
				seen[g] = true
				g.votes++
			}
		}
	}
	need := 1
	if majority {
		need = int(math.Floor(float64(len(samples))/2)) + 1
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].votes > groups[j].votes })
	for _, g := range groups {
		if g.votes >= need {
			out.Findings = append(out.Findings, g.f)
		}
	}
	return out
}

func overlaps(a, b Finding) bool {
	if a.Start == 0 || b.Start == 0 {
		return a.Start == b.Start && a.Claim == b.Claim
	}
	return a.Start <= max(b.End, b.Start)+Tolerance && max(a.End, a.Start) >= b.Start-Tolerance
}

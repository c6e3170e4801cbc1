package report

import (
	"github.com/sotlabs/sot/review/finding"
	"github.com/sotlabs/sot/review/synthesis"
)

// Summary counts what a review found; it is the "summary" object of the
// JSON output and what a terminal summary or --fail-on reads.
type Summary struct {
	MustFix      int  `json:"must_fix"`
	ShouldFix    int  `json:"should_fix"`
	Consider     int  `json:"consider"`
	Observations int  `json:"observations"`
	TradeOffs    int  `json:"trade_offs"`
	Disputes     int  `json:"disputes"`
	Unresolved   int  `json:"unresolved_disputes"`
	FilesSkipped int  `json:"files_skipped"`
	Missing      int  `json:"missing_parts"`
	Partial      bool `json:"partial"`
}

// Summarize counts res. Items of an unknown severity count as consider,
// the bucket REVIEW-SYNTHESIS.md lists them in.
func Summarize(res *synthesis.Result) Summary {
	if res == nil {
		return Summary{}
	}
	s := Summary{
		Observations: len(res.Observations),
		TradeOffs:    len(res.TradeOffs),
		Disputes:     len(res.Dissent),
		FilesSkipped: len(res.Skipped),
		Missing:      len(res.Missing),
		Partial:      res.Partial(),
	}
	for _, it := range res.Items {
		switch it.Severity {
		case finding.MustFix:
			s.MustFix++
		case finding.ShouldFix:
			s.ShouldFix++
		default:
			s.Consider++
		}
	}
	for _, d := range res.Dissent {
		if d.Unresolved {
			s.Unresolved++
		}
	}
	return s
}

// AtLeast counts the items of severity sev or more severe; a CLI's
// --fail-on reads it.
func (s Summary) AtLeast(sev finding.Severity) int {
	switch sev {
	case finding.MustFix:
		return s.MustFix
	case finding.ShouldFix:
		return s.MustFix + s.ShouldFix
	case finding.Consider:
		return s.MustFix + s.ShouldFix + s.Consider
	}
	return 0
}

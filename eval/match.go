package eval

import (
	"path"
	"slices"
	"strings"
)

// Finding is one finding a review reported, as matching needs it.
type Finding struct {
	File       string `json:"file"`
	Start, End int    `json:"-"`
	Category   string `json:"category"`
	Claim      string `json:"claim"`
	// Sources are the specialists (or samples) that reported it.
	Sources []string `json:"sources,omitempty"`
}

// Tolerance is how many lines a finding may miss a defect's by and still
// point at it: a model often cites the line before or after.
const Tolerance = 2

// keywords sort the free words a model files a finding under into the
// categories of Categories; a finding may fall under several.
var keywords = map[string][]string{
	"injection":      {"inject", "sql", "xss", "command exec", "shell", "query construct", "format string", "interpolat", "sanitiz", "escap"},
	"error-handling": {"error", "exception", "err ", "ignored", "swallow", "unchecked", "panic", "recover"},
	"concurrency":    {"race", "concurren", "thread", "lock", "mutex", "sync", "atomic", "goroutine", "parallel", "async"},
	"off-by-one":     {"off-by-one", "off by one", "index", "bounds", "fencepost", "loop"},
	"secret":         {"secret", "credential", "key", "token", "password", "hard-coded", "hardcoded", "leak"},
	"boundary":       {"boundary", "limit", "range", "edge", "threshold", "comparison", "bounds", "overflow"},
	"performance":    {"perform", "n+1", "query in a loop", "queries", "efficien", "latency", "slow", "database"},
	"missing-test":   {"test", "coverage", "untested"},
	"resource-leak":  {"leak", "close", "resource", "handle", "defer", "file descriptor", "connection"},
	"nil-deref":      {"nil", "null", "none", "dereferenc", "undefined", "optional"},
	"auth":           {"auth", "permission", "access control", "privilege", "ownership", "forbidden"},
	"validation":     {"valid", "input", "sanitiz", "untrusted", "check"},
	"logic":          {"logic", "correct", "wrong", "incorrect", "bug", "behavio", "semantic"},
}

// broad are the words of a category so wide it fits several of ours.
var broad = map[string][]string{
	"security":    {"injection", "secret", "auth", "validation"},
	"correctness": {"logic", "off-by-one", "boundary", "nil-deref", "error-handling", "concurrency"},
	"reliability": {"error-handling", "resource-leak", "nil-deref", "concurrency"},
	"testing":     {"missing-test"},
	"performance": {"performance"},
}

// categoriesOf are the categories a finding's own words (its category
// and claim) fall under.
func categoriesOf(f Finding) []string {
	text := " " + strings.ToLower(f.Category+" "+f.Claim) + " "
	var out []string
	add := func(c string) {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	for _, c := range Categories {
		for _, k := range keywords[c] {
			if strings.Contains(text, k) {
				add(c)
				break
			}
		}
	}
	for word, cats := range broad {
		if strings.Contains(strings.ToLower(f.Category), word) {
			for _, c := range cats {
				add(c)
			}
		}
	}
	return out
}

// Compatible reports whether a finding's category fits a defect's: the
// words it is filed and stated under name that category, or one as broad
// as "security" or "correctness" that covers it.
func Compatible(f Finding, category string) bool {
	return slices.Contains(categoriesOf(f), category)
}

// Points reports whether a finding points at a defect: the same file, and
// lines that overlap the defect's, give or take Tolerance.
func Points(f Finding, d Defect) bool {
	if path.Clean(strings.TrimPrefix(f.File, "./")) != path.Clean(d.File) || f.Start == 0 {
		return false
	}
	end := max(f.End, f.Start)
	return f.Start <= d.End()+Tolerance && end >= d.Start()-Tolerance
}

// Match is how a review's findings on one case came out against its
// defects: for each defect, the finding that found it (-1 for none); for
// each finding, the defect it found (-1 for a false finding). A defect is
// found by the first finding, in the review's order, that points at it
// with a compatible category; a second finding of the same defect is no
// false finding, but finds nothing more.
type Match struct {
	DefectFoundBy []int
	FindingFound  []int
}

// MatchFindings matches findings to the case's defects, deterministically.
func MatchFindings(c Case, findings []Finding) Match {
	m := Match{DefectFoundBy: make([]int, len(c.Defects)), FindingFound: make([]int, len(findings))}
	for i := range m.DefectFoundBy {
		m.DefectFoundBy[i] = -1
	}
	for j, f := range findings {
		m.FindingFound[j] = -1
		for i, d := range c.Defects {
			if Points(f, d) && Compatible(f, d.Category) {
				m.FindingFound[j] = i
				if m.DefectFoundBy[i] < 0 {
					m.DefectFoundBy[i] = j
				}
				break
			}
		}
	}
	return m
}

// Found counts the defects found; False the findings that found none.
func (m Match) Found() int { return count(m.DefectFoundBy, func(v int) bool { return v >= 0 }) }
func (m Match) False() int { return count(m.FindingFound, func(v int) bool { return v < 0 }) }
func (m Match) True() int  { return count(m.FindingFound, func(v int) bool { return v >= 0 }) }

func count(xs []int, ok func(int) bool) int {
	n := 0
	for _, x := range xs {
		if ok(x) {
			n++
		}
	}
	return n
}
